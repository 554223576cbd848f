"""The three rankers of the speed benchmark behind one interface, with the same settings.

Each framework exposes ``bin(data)`` (its own binned training set), ``train(data,
binned, n_trees, on_round)`` (``on_round()`` is called after every tree, so the
caller can time each round), ``predict(model, X)`` and ``tree_shapes(model)`` (leaves
per tree). ``PARAMETER_MAP`` is how one :class:`Settings` becomes each framework's
parameters.

All three form the pairs "one document in the current top T, the other anywhere
below it" with the full-list discount. Remaining differences: LightGBM and XGBoost
divide by the ideal DCG@T, twinrank by the ideal DCG of the whole list (a
per-query weight); XGBoost's pair hessian is twice the others' (its Newton steps
are half as long); LightGBM finds its bin edges on a sample of 200,000 rows
(``bin_construct_sample_cnt``), twinrank and XGBoost on every row. "No truncation"
is T = the largest query's size.

With ``Settings.defaults`` each framework runs with its own defaults instead (only the
trees, threads and seed are set; twinrank and LightGBM bin to 255 bins by default, XGBoost
to 256): what a user who changes nothing gets. ``DEFAULTS`` says what they are. With
``quantized`` as well, quantized training is the one switch turned: twinrank's
``quantized_gradients=True`` (``gradient_bits`` 4, its default) and LightGBM's
``use_quantized_grad=true`` (``num_grad_quant_bins`` 4, ``quant_train_renew_leaf`` false:
its defaults).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PARAMETER_MAP = (  # (setting, twinrank.fast LambdaMART, LightGBM lambdarank, XGBoost rank:ndcg)
    ("trees, learning rate", "n_trees, learning_rate", "num_boost_round, learning_rate",
     "num_boost_round, eta"),
    ("leaves", "max_leaves", "num_leaves", "max_leaves, grow_policy=lossguide, max_depth=0"),
    ("bins", "max_bins (+ 1 missing bin)", "max_bin", "max_bin (QuantileDMatrix)"),
    ("min leaf size", "min_samples_leaf", "min_data_in_leaf", "none (no row minimum in XGBoost)"),
    ("min leaf hessian", "min_hessian_in_leaf=1e-3", "min_sum_hessian_in_leaf=1e-3", "min_child_weight=1e-3"),
    ("L2 on leaves", "lambda_l2=0", "lambda_l2=0", "reg_lambda=0"),
    ("truncation T", "truncation=T, target=\"ndcg\" (no cutoff)", "lambdarank_truncation_level=T",
     "lambdarank_pair_method=topk, lambdarank_num_pair_per_sample=T"),
    ("lambda normalisation", "normalize=False", "lambdarank_norm=False",
     "lambdarank_normalization=False, lambdarank_score_normalization=False"),
    ("threads", "n_threads", "num_threads", "nthread"),
    ("quantized training", "quantized_gradients=True, gradient_bits=b",
     "use_quantized_grad=true, num_grad_quant_bins=4, quant_train_renew_leaf=true", "none"),
)

DEFAULTS = (  # (setting, twinrank.fast LambdaMART, LightGBM lambdarank), as each ships
    ("leaves, min leaf size, learning rate", "31, 20, 0.1", "31, 20, 0.1"),
    ("pairs", "exact NDCG@30 changes (target: the metric's family at cutoff max(10, 30)); at round one "
     "(all scores tied) their expectation over every order",
     "one document in the top 30 (lambdarank_truncation_level=30), all pairs below it"),
    ("lambda normalisation", "normalize=True", "lambdarank_norm=true"),
)


@dataclass(frozen=True)
class Settings:
    trees: int = 100
    leaves: int = 31
    bins: int = 255
    learning_rate: float = 0.1
    min_leaf: int = 20
    truncation: int | None = 30
    threads: int = 2
    seed: int = 0
    quantized: bool = False  # quantized training: twinrank quantized_gradients, LightGBM use_quantized_grad
    gradient_bits: int = 4  # twinrank's bits; LightGBM runs num_grad_quant_bins=4 (its default) whatever this is
    defaults: bool = False  # each framework with its own defaults: only trees, threads and seed are set

    def pairs_depth(self, data) -> int:
        """T for the peers: the truncation, or the largest query (all pairs)."""
        return self.truncation if self.truncation is not None else int(data.query_sizes.max())


class Twinrank:
    name = "twinrank"

    def __init__(self, settings: Settings):
        from twinrank.fast.rankers.lambdamart import LambdaMART
        from twinrank.fast.runtime._threads import threads
        from twinrank.fast.trees import binning

        self.s, self.binning, self.threads, self.LambdaMART = settings, binning, threads, LambdaMART
        self.sample = LambdaMART().subsample_for_bin  # the default sample of fit's thresholds

    def bin(self, data):
        """``bin_thresholds`` (of fit's sample) + ``apply_bins``, what ``fit`` does first (and does again inside)."""
        with self.threads(self.s.threads):
            thresholds = self.binning.bin_thresholds(data.X, self.s.bins, self.sample, self.s.seed)
            return self.binning.apply_bins(data.X, thresholds)

    def train(self, data, binned, n_trees, on_round=None):
        s = self.s
        if s.defaults:  # quantized: the one switch, its bits twinrank's default (4)
            est = self.LambdaMART(n_trees=n_trees, n_threads=s.threads, seed=s.seed,
                                  **({"quantized_gradients": True} if s.quantized else {}))
        else:
            est = self.LambdaMART(n_trees=n_trees, learning_rate=s.learning_rate, max_leaves=s.leaves,
                                  min_samples_leaf=s.min_leaf, max_bins=s.bins, truncation=s.truncation,
                                  normalize=False, target="ndcg", metric="ndcg@10", n_threads=s.threads,
                                  seed=s.seed, quantized_gradients=s.quantized, gradient_bits=s.gradient_bits)
        return est.fit(data, callback=None if on_round is None else lambda i, record: on_round())

    def predict(self, model, X):
        return model.predict(X)

    def tree_shapes(self, model):
        return [int(np.sum(t.left == -1)) for t in model.model_.trees]


class LightGBM:
    name = "lightgbm"

    def __init__(self, settings: Settings):
        import lightgbm

        self.s, self.lgb = settings, lightgbm

    def params(self, data):
        s = self.s
        if s.defaults:  # quantized: the one switch, the rest LightGBM's defaults (4 bins, no leaf renewal)
            return dict(objective="lambdarank", num_threads=s.threads, seed=s.seed, verbose=-1, metric="none",
                        **({"use_quantized_grad": True} if s.quantized else {}))
        return dict(objective="lambdarank", num_leaves=s.leaves, max_bin=s.bins,
                    learning_rate=s.learning_rate, min_data_in_leaf=s.min_leaf,
                    min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0,
                    lambdarank_truncation_level=s.pairs_depth(data), lambdarank_norm=False,
                    num_threads=s.threads, seed=s.seed, verbose=-1, metric="none",
                    **(dict(use_quantized_grad=True, num_grad_quant_bins=4, quant_train_renew_leaf=True,
                            stochastic_rounding=True) if s.quantized else {}))

    def bin(self, data):
        """``Dataset.construct()``: bin edges (from a 200k-row sample) and the binned columns."""
        return self.lgb.Dataset(data.X, label=data.y, group=data.query_sizes, params=self.params(data),
                                free_raw_data=False).construct()

    def train(self, data, binned, n_trees, on_round=None):
        booster = self.lgb.Booster(self.params(data), binned)
        for _ in range(n_trees):
            booster.update()
            if on_round is not None:
                on_round()
        return booster

    def predict(self, model, X):
        return model.predict(X, num_threads=self.s.threads)

    def tree_shapes(self, model):
        return [t["num_leaves"] for t in model.dump_model()["tree_info"]]


class XGBoost:
    name = "xgboost"

    def __init__(self, settings: Settings):
        import xgboost

        self.s, self.xgb = settings, xgboost

    def params(self, data):
        s = self.s
        if s.defaults:
            return dict(objective="rank:ndcg", nthread=s.threads, seed=s.seed)
        return dict(objective="rank:ndcg", tree_method="hist", grow_policy="lossguide",
                    max_leaves=s.leaves, max_depth=0, max_bin=s.bins, eta=s.learning_rate,
                    min_child_weight=1e-3, reg_lambda=0.0, lambdarank_pair_method="topk",
                    lambdarank_num_pair_per_sample=s.pairs_depth(data),
                    lambdarank_normalization=False, lambdarank_score_normalization=False,
                    ndcg_exp_gain=True, nthread=s.threads, seed=s.seed)

    def bin(self, data):
        """``QuantileDMatrix``: the quantile sketch and the binned (gradient index) matrix."""
        return self.xgb.QuantileDMatrix(data.X, data.y, qid=data.qid, max_bin=self.s.bins,
                                        nthread=self.s.threads)

    def train(self, data, binned, n_trees, on_round=None):
        booster = self.xgb.Booster(self.params(data), [binned])
        for i in range(n_trees):
            booster.update(binned, i)
            if on_round is not None:
                on_round()
        return booster

    def predict(self, model, X):
        return model.inplace_predict(X)

    def tree_shapes(self, model):
        return [tree.count('"leaf"') for tree in model.get_dump(dump_format="json")]


FRAMEWORKS = {f.name: f for f in (Twinrank, LightGBM, XGBoost)}

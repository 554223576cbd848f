r"""The one boosting loop: GBRT, stochastic GBRT and LambdaMART differ only in their gradients.

Gradient boosting (Friedman 2001, Alg. 1; Newton steps as in Burges 2010, Alg. 1 of
LambdaMART) builds :math:`F_M(x) = F_0(x) + \eta \sum_{m=1}^{M} f_m(x)` where each
tree :math:`f_m` is fit to the gradients :math:`g_i = \partial L / \partial F(x_i)`
and hessians :math:`h_i` of the loss at the current scores, with leaf values
:math:`v = -\sum g / \sum h` (the :mod:`tree` grower's Newton step).

Each round draws, from the run's one generator and in this order:

1. the training units of the round (``sampling.subsample`` of queries or rows;
   nothing drawn when ``subsample == 1``);
2. the feature subsets of the tree's nodes (``sampling.feature_masks``; nothing
   drawn when ``feature_fraction == 1``).

So the same seed gives the same model in both twins, on any number of threads.
The loop itself is shared: each twin calls :func:`run_boosting` with its own
kernels (binning, tree grower, prediction, metrics).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Callable

import numpy as np

from . import binning, metrics, predict, tree
from .data import Dataset, query_rows
from .errors import ParameterError
from .model import Ensemble
from .params import BoostParams
from .sampling import feature_masks, make_rng, subsample

KERNELS = SimpleNamespace(
    bin_thresholds=binning.bin_thresholds, apply_bins=binning.apply_bins,
    grow_tree=tree.grow_tree, predict_tree_binned=predict.predict_tree_binned,
    predict_ensemble=predict.predict_ensemble, evaluate=metrics.evaluate,
)

# objective(scores, queries) -> (gradients, hessians); queries is None (all) or the round's queries
Objective = Callable[[np.ndarray, "np.ndarray | None"], "tuple[np.ndarray, np.ndarray]"]


def boost(train: Dataset, objective: Objective, params: BoostParams, *, valid: Dataset | None = None,
          init_model: Ensemble | None = None, init_scores=None, valid_init_scores=None,
          algorithm: str = "gbrt", model_params: dict | None = None, base_score: float = 0.0,
          callback=None) -> Ensemble:
    r"""Boost ``params.n_trees`` trees on ``train`` and return the :class:`Ensemble`.

    Parameters
    ----------
    train : Dataset
    objective : callable ``(scores, queries) -> (gradients, hessians)``, float64 arrays over
        all training rows; ``queries`` is the round's query sample or ``None``.
    params : BoostParams
    valid : Dataset, optional; its ``params.metric`` is recorded after every tree and
        drives early stopping / the overfitting tolerance.
    init_model : Ensemble, optional; the prior model :math:`F_0` (LambdaSMART), kept in the result.
    init_scores, valid_init_scores : array, optional; raw initial scores added to
        :math:`F_0` for this fit only (not part of the saved model, as in LightGBM).
    algorithm, model_params : stored on the model.
    base_score : float, the constant :math:`F_0` (0 for LambdaMART, the mean label for GBRT).
    callback : callable ``(iteration, record)`` called after every tree, ``record`` a
        dict of metric values: ``"valid:ndcg@10"`` with ``valid``, ``"train:ndcg@10"``
        with ``params.eval_train``; empty with neither. The model's ``history`` holds
        the same keys, one value per tree.
    """
    return run_boosting(KERNELS, train, objective, params, valid=valid, init_model=init_model,
                        init_scores=init_scores, valid_init_scores=valid_init_scores,
                        algorithm=algorithm, model_params=model_params, base_score=base_score,
                        callback=callback)


def run_boosting(kernels, train, objective, params, *, valid, init_model, init_scores,
                 valid_init_scores, algorithm, model_params, base_score, callback) -> Ensemble:
    """The loop of :func:`boost`, on the kernels of one twin."""
    rng = make_rng(params.seed)
    thresholds = kernels.bin_thresholds(train.X, params.max_bins)
    binned = kernels.apply_bins(train.X, thresholds)
    scores = _initial_scores(kernels, train, init_model, init_scores, base_score)
    if valid is not None:
        valid_binned = kernels.apply_bins(valid.X, thresholds)
        valid_scores = _initial_scores(kernels, valid, init_model, valid_init_scores, base_score)
    n_nodes = 2 * params.tree.max_leaves - 1
    k = params.tree.n_features_per_node(train.n_features)
    rule = StoppingRule(params) if valid is not None else None
    if rule is not None:
        rule.start(_metric(kernels, params, valid, valid_scores))
    trees, history = [], {}
    for m in range(params.n_trees):
        queries, rows = _round_sample(rng, train, params)
        g, h = objective(scores, queries)
        masks = feature_masks(rng, n_nodes, train.n_features, k)
        f = kernels.grow_tree(binned, g, h, thresholds, params.tree, rows=rows, feature_mask=masks)
        if f.n_nodes == 1:
            break  # no split improves the loss: every further round would add a constant
        f = dataclasses.replace(f, value=f.value * params.learning_rate)
        trees.append(f)
        scores += kernels.predict_tree_binned(f, binned)  # (n_rows,) the loop's own array
        record = {}
        if params.eval_train:
            record[f"train:{params.metric}"] = _metric(kernels, params, train, scores)
        stop = False
        if valid is not None:
            valid_scores += kernels.predict_tree_binned(f, valid_binned)
            record[f"valid:{params.metric}"] = _metric(kernels, params, valid, valid_scores)
            stop = rule.update(m + 1, record[f"valid:{params.metric}"])
        for key, value in record.items():
            history.setdefault(key, []).append(value)
        if callback is not None:
            callback(m + 1, record)
        if stop:
            break
    n_keep = len(trees) if rule is None else rule.n_trees_to_keep(len(trees))
    return Ensemble(
        trees=trees[:n_keep], tree_weights=np.ones(n_keep), base_score=base_score,
        n_features=train.n_features, init_model=init_model, algorithm=algorithm,
        params=dict(model_params or {}), history=history,
        best_iteration=None if rule is None else rule.best_n_trees,
    )


def _initial_scores(kernels, data: Dataset, init_model, init_scores, base_score) -> np.ndarray:
    scores = np.full(data.n_rows, base_score, dtype=np.float64)
    if init_model is not None:
        scores += kernels.predict_ensemble(init_model, data.X)
    if init_scores is not None:
        scores += _checked_init_scores(init_scores, data.n_rows)
    return scores


def _checked_init_scores(init_scores, n_rows: int) -> np.ndarray:
    s = np.asarray(init_scores, dtype=np.float64)
    if s.shape != (n_rows,) or not np.isfinite(s).all():
        raise ParameterError(f"initial scores must be {n_rows} finite numbers, got shape {s.shape}")
    return s


def _round_sample(rng, train: Dataset, params: BoostParams):
    """The round's query sample (or None) and training rows (or None = all rows)."""
    if params.subsample >= 1.0:
        return None, None
    if params.subsample_by == "rows":
        return None, subsample(rng, train.n_rows, params.subsample)
    queries = subsample(rng, train.n_queries, params.subsample)
    return queries, query_rows(train.query_offsets, queries)


def _metric(kernels, params: BoostParams, data: Dataset, scores: np.ndarray) -> float:
    return float(kernels.evaluate([params.metric], data.y, scores, data.query_offsets,
                                  convention=params.convention)[params.metric])


class StoppingRule:
    """Early stopping with patience, or BL-MART's overfitting tolerance, on a validation metric.

    Higher is better for every metric but ``rmse``. ``best_n_trees`` is the number of
    trees of the best validation value (0 = the initial model).
    """

    def __init__(self, params: BoostParams):
        self.patience = params.early_stopping_rounds
        self.tolerance = params.overfit_tolerance
        self.extra_trees = params.overfit_extra_trees
        self.sign = -1.0 if params.metric.startswith("rmse") else 1.0

    def start(self, value: float) -> None:
        """Record the validation value of the initial model (0 trees)."""
        self.best, self.best_n_trees, self.last_within = self.sign * value, 0, 0

    def update(self, n_trees: int, value: float) -> bool:
        """Record the value after ``n_trees`` trees; True when training should stop."""
        value = self.sign * value
        if value > self.best:
            self.best, self.best_n_trees, self.last_within = value, n_trees, n_trees
            return False
        if self.tolerance is not None:
            if value < self.best - self.tolerance * abs(self.best):
                return True
            self.last_within = n_trees
            return n_trees - self.best_n_trees >= self.extra_trees
        return self.patience is not None and n_trees - self.best_n_trees >= self.patience

    def n_trees_to_keep(self, n_trees: int) -> int:
        """How many of the ``n_trees`` grown trees the final model keeps."""
        if self.tolerance is not None:
            return self.last_within
        if self.patience is not None:
            return self.best_n_trees
        return n_trees

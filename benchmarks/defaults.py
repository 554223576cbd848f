"""LambdaMART's defaults, held-out evidence: each default beside what it replaced, and the peers.

Every ranker gets the same named hyper-parameters (trees, learning rate, leaves, min leaf size,
seed; early stopping with patience 100 on validation NDCG@10 where a protocol has validation
data); everything else is each library's default. The twinrank variants change one default:

* ``twinrank``: ``LambdaMART()`` as shipped;
* ``twinrank target=ndcg@10``: the lambdas of the metric's own cutoff (the default before);
* ``twinrank input-order ties``: round one's all-tied queries ranked in input order (the default
  before, and LightGBM's): their lambdas are those of scores ``-i * 2**-20`` for the i-th document
  (distinct on the tie grid, too small to move rho from 1/2 by more than 1e-4), un-damped, then
  scaled by ``normalize``'s log2(1 + S) / S;
* ``twinrank lightgbm bins``: LightGBM's bin boundaries (``_lightgbm_bins.py``; not taken);
* ``bl-mart`` (``--blmart``): ``BLMART()`` with the same named parameters, its bag at its defaults;
* ``lightgbm`` (``lambdarank``), ``xgboost`` (``rank:ndcg``, ``--xgboost``), ``catboost
  YetiRank`` and ``catboost LambdaMart`` (``CatBoostRanker``, ``--catboost``).

Protocols, each a list of (train, valid, test) folds; every fold's test metrics are kept, so the
differences to ``twinrank`` are paired (mean and standard error over folds):

``mq2008``  LETOR 4.0 MQ2008 (bundled, query-level normalised), its 5 folds; ranklib NDCG@10, LETOR MAP
``raw``     the raw-feature generated set (``generate_raw.py``: 25 heavy-tailed features, ~150
            documents per query, 3 grades), 106 queries in LETOR's 5 folds, for ``--seeds`` seeds;
            LETOR NDCG@10 and MAP
``yahoo``   the Yahoo! sample's 251 queries (``--data``: its folder), 5 folds of a fixed shuffle;
            lightgbm NDCG@10 and MAP
``mslr``    the MSLR-shaped generator (``generate.py``), 3,000 training and 1,000 test queries,
            50 trees of 31 leaves, learning rate 0.1, min leaf 50, for ``--seeds`` seeds

    python benchmarks/defaults.py raw --seeds 6 --catboost --json benchmarks/defaults.json
    python benchmarks/defaults.py yahoo --data ../shared/data/yahoo-sample --catboost --json ...
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import _lightgbm_bins
import generate
import generate_raw
import numpy as np

from twinrank.fast.engine import FAST
from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.losses.objectives import lambdarank
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.io.data import Dataset, load_mq2008
from twinrank.reference.io.letor import read_letor
from twinrank.reference.losses.objectives import Loss

TWINRANK = ("twinrank", "twinrank target=ndcg@10", "twinrank input-order ties", "twinrank lightgbm bins")
EARLY_STOPPING = dict(trees=1000, learning_rate=0.05, leaves=15, min_leaf=20)
FIXED = dict(trees=50, learning_rate=0.1, leaves=31, min_leaf=50)


class LightGBMBins(LambdaMART):
    """LambdaMART on LightGBM's bin boundaries (the candidate not taken)."""

    engine = dataclasses.replace(FAST, bin_thresholds=_lightgbm_bins.bin_thresholds)


class InputOrderTies(LambdaMART):
    """LambdaMART whose all-tied queries are ranked in input order (the default before)."""

    def lambdarank_loss(self, params, train):
        return _InputOrder(super().lambdarank_loss(params, train), params, train)


class _InputOrder(Loss):
    def __init__(self, loss, params, train):
        self.loss, self.train = loss, train
        family, k = params.lambdarank.target_of(params.boost.stopping_metric)
        self.options = dict(metric=family, k=k, sigma=params.lambdarank.sigma,
                            truncation=params.lambdarank.truncation)
        self.normalize = params.lambdarank.normalize

    def gradients(self, scores, queries, g, h):
        self.loss.gradients(scores, queries, g, h)
        offsets = self.train.query_offsets
        for q in range(len(offsets) - 1) if queries is None else queries:
            lo, hi = offsets[q], offsets[q + 1]
            if hi - lo < 2 or scores[lo:hi].min() != scores[lo:hi].max():
                continue
            g[lo:hi], h[lo:hi] = lambdarank(self.train.y[lo:hi], -np.arange(hi - lo) * 2.0**-20,
                                            np.array([0, hi - lo]), **self.options)
            total = 2.0 * h[lo:hi].sum() / self.options["sigma"]  # S: every rho is 1/2
            if self.normalize and total > 0:
                g[lo:hi] *= np.log2(1.0 + total) / total
                h[lo:hi] *= np.log2(1.0 + total) / total


def raw_folds(seeds):
    """LETOR's 5 folds (3 parts train, 1 valid, 1 test) of 106 generated queries per seed."""
    for seed in range(1, seeds + 1):
        data = generate_raw.generate(106, seed=seed)
        yield from _five_folds(data, np.array_split(np.arange(data.n_queries), 5))


def yahoo_folds(folder):
    train = read_letor(Path(folder) / "rank.train.qid.txt.gz")
    test = read_letor(Path(folder) / "rank.test.qid.txt.gz", n_features=train.n_features)
    data = Dataset(np.vstack([train.X, test.X]), np.r_[train.y, test.y],
                   np.r_[train.query_offsets, train.query_offsets[-1] + test.query_offsets[1:]])
    parts = np.array_split(np.random.default_rng(7).permutation(data.n_queries), 5)
    yield from _five_folds(data, [np.sort(p) for p in parts])


def _five_folds(data, parts):
    for k in range(5):
        train = np.sort(np.concatenate([parts[(k + i) % 5] for i in range(3)]))
        yield data.take_queries(train), data.take_queries(parts[(k + 3) % 5]), data.take_queries(parts[(k + 4) % 5])


def mslr_sets(seeds):
    for seed in range(1, seeds + 1):
        train, test = generate.train_test(3000, 1000, seed=seed)
        yield train, None, test


PROTOCOLS = {  # name: (folds(args), {convention: metrics}, setup)
    "mq2008": (lambda a: (load_mq2008(f) for f in range(1, 6)), {"ranklib": ["ndcg@10"], "letor": ["map"]},
               EARLY_STOPPING),
    "raw": (lambda a: raw_folds(a.seeds), {"letor": ["ndcg@10", "map"]}, EARLY_STOPPING),
    "yahoo": (lambda a: yahoo_folds(a.data), {"lightgbm": ["ndcg@10", "map"]}, EARLY_STOPPING),
    "mslr": (lambda a: mslr_sets(a.seeds), {"lightgbm": ["ndcg@10", "map"]}, FIXED),
}


def fit_predict(name, s, train, valid, test):
    """Test scores and the number of trees kept."""
    if name.startswith("twinrank"):
        return _twinrank(name, s, train, valid, test)
    if name == "bl-mart":
        return _blmart(s, train, valid, test)
    if name.startswith("catboost"):
        return _catboost(name.split()[1], s, train, valid, test)
    return {"lightgbm": _lightgbm, "xgboost": _xgboost}[name](s, train, valid, test)


def _twinrank(name, s, train, valid, test):
    cls = {"lightgbm bins": LightGBMBins, "input-order ties": InputOrderTies}.get(name[9:], LambdaMART)
    est = cls(n_trees=s["trees"], learning_rate=s["learning_rate"], max_leaves=s["leaves"],
              min_samples_leaf=s["min_leaf"], seed=1, n_threads=2,
              early_stopping_rounds=100 if valid is not None else None,
              **({"target": "ndcg@10"} if name.endswith("target=ndcg@10") else {}))
    est.fit(train, eval_set=[valid] if valid is not None else None)
    return est.predict(test), est.model_.n_trees


def _blmart(s, train, valid, test):
    from twinrank.fast.rankers.bagging import BLMART

    est = BLMART(n_trees=s["trees"], learning_rate=s["learning_rate"], max_leaves=s["leaves"],
                 min_samples_leaf=s["min_leaf"], seed=1, n_threads=2,
                 early_stopping_rounds=100 if valid is not None else None)
    est.fit(train, eval_set=[valid] if valid is not None else None)
    return est.predict(test), float(np.mean([m.n_trees for m in est.model_.members]))


def _lightgbm(s, train, valid, test):
    import lightgbm as lgb

    def ds(d):
        return lgb.Dataset(d.X, d.y, group=d.query_sizes, free_raw_data=False)

    params = dict(objective="lambdarank", learning_rate=s["learning_rate"], num_leaves=s["leaves"],
                  min_data_in_leaf=s["min_leaf"], metric="ndcg", eval_at=[10], verbose=-1, seed=1,
                  num_threads=2)
    stop = [lgb.early_stopping(100, verbose=False)] if valid is not None else []
    booster = lgb.train(params, ds(train), s["trees"], valid_sets=[ds(valid)] if valid is not None else [],
                        callbacks=stop)
    n_trees = booster.best_iteration or booster.current_iteration()
    return booster.predict(test.X, num_iteration=n_trees), n_trees


def _xgboost(s, train, valid, test):
    import xgboost as xgb

    def dm(d):
        return xgb.DMatrix(d.X, d.y, qid=np.repeat(np.arange(d.n_queries), d.query_sizes))

    params = dict(objective="rank:ndcg", eta=s["learning_rate"], max_leaves=s["leaves"], grow_policy="lossguide",
                  tree_method="hist", eval_metric="ndcg@10", nthread=2, seed=1)
    booster = xgb.train(params, dm(train), s["trees"], evals=[(dm(valid), "v")] if valid is not None else [],
                        early_stopping_rounds=100 if valid is not None else None, verbose_eval=False)
    n_trees = booster.best_iteration + 1 if valid is not None else s["trees"]
    return booster.predict(xgb.DMatrix(test.X), iteration_range=(0, n_trees)), n_trees


def _catboost(loss, s, train, valid, test):
    from catboost import CatBoostRanker, Pool

    def pool(d):
        return Pool(d.X, d.y, group_id=np.repeat(np.arange(d.n_queries), d.query_sizes))

    model = CatBoostRanker(loss_function=loss, iterations=s["trees"], learning_rate=s["learning_rate"],
                           grow_policy="Lossguide", max_leaves=s["leaves"], min_data_in_leaf=s["min_leaf"],
                           random_seed=1, thread_count=2, eval_metric="NDCG:top=10", verbose=False,
                           allow_writing_files=False,
                           early_stopping_rounds=100 if valid is not None else None)
    model.fit(pool(train), eval_set=pool(valid) if valid is not None else None, use_best_model=valid is not None)
    return model.predict(test.X), model.tree_count_


def run(protocol, rankers, args):
    """Per-fold test metrics of every ranker: ``{ranker: [row per fold]}``."""
    folds, conventions, setup = PROTOCOLS[protocol]
    results = {name: [] for name in rankers}
    for i, (train, valid, test) in enumerate(folds(args), 1):
        for name in rankers:
            start = time.perf_counter()
            scores, n_trees = fit_predict(name, setup, train, valid, test)
            row = {"trees": n_trees}
            for convention, metrics in conventions.items():
                values = evaluate(metrics, test.y, scores, test.query_offsets, convention=convention)
                row |= {f"{m} ({convention})": float(values[m]) for m in metrics}
            results[name].append(row)
            print(f"{protocol} fold {i:>2}  {name:<27} " + "  ".join(
                f"{k} {v:.4f}" for k, v in row.items() if k != "trees")
                + f"  {n_trees:>4} trees  {time.perf_counter() - start:5.1f} s", flush=True)
    return results


def summary(results):
    """Means over folds, and each ranker's paired difference to ``twinrank`` (mean, standard error)."""
    out = {}
    for name, rows in results.items():
        row = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        if name != "twinrank" and "twinrank" in results:
            for k in rows[0]:
                if k != "trees":
                    d = np.array([r[k] for r in rows]) - np.array([r[k] for r in results["twinrank"]])
                    se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
                    row[f"vs twinrank: {k}"] = [float(d.mean()), se]
        out[name] = row
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("protocol", choices=sorted(PROTOCOLS))
    p.add_argument("--seeds", type=int, default=6, help="raw, mslr: generated sets (seeds 1..n)")
    p.add_argument("--data", default="../shared/data/yahoo-sample", help="yahoo: the sample's folder")
    p.add_argument("--rankers", nargs="+", help="a subset of the rankers (default: all)")
    p.add_argument("--xgboost", action="store_true")
    p.add_argument("--catboost", action="store_true")
    p.add_argument("--blmart", action="store_true", help="also BL-MART with its defaults")
    p.add_argument("--json", help="add this protocol's run to this JSON file (one entry per protocol)")
    args = p.parse_args(argv)
    rankers = args.rankers or (list(TWINRANK) + ["lightgbm"] + ["xgboost"] * args.xgboost
                               + ["catboost YetiRank", "catboost LambdaMart"] * args.catboost + ["bl-mart"] * args.blmart)
    results = run(args.protocol, rankers, args)
    means = summary(results)
    for name, row in means.items():
        print(f"{name:<27} " + "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v[0]:+.4f} +- {v[1]:.4f}"
                                         for k, v in row.items()))
    if args.json:  # merged into the protocol's entry: rankers run later join the same folds
        path = Path(args.json)
        runs = json.loads(path.read_text()) if path.exists() else {}
        entry = runs.get(args.protocol, {"commands": [], "folds": {}})
        entry["commands"].append("python benchmarks/defaults.py " + " ".join(sys.argv[1:] if argv is None else argv))
        entry["folds"] |= results
        entry |= {"setup": PROTOCOLS[args.protocol][2], "summary": summary(entry["folds"])}
        runs[args.protocol] = entry
        path.write_text(json.dumps(runs, indent=1))

if __name__ == "__main__":
    main()

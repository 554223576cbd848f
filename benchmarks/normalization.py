"""LambdaRank normalisation, held-out evidence: twinrank's two forms beside LightGBM's and XGBoost's.

Each ranker gets the same named hyper-parameters (trees, learning rate, leaves, min leaf,
seed); everything else is the library's default, except the one normalisation switch:

* twinrank ``LambdaMART(normalize=True)`` (the default) and ``normalize=False`` (the paper);
* LightGBM ``lambdarank`` with its defaults (``lambdarank_norm=true``) and with ``lambdarank_norm=false``;
* XGBoost ``rank:ndcg`` with its defaults (``--xgboost``).

Two protocols:

``mq2008``: LETOR 4.0 MQ2008, five folds (bundled, query-level normalised features), early
stopping on each fold's validation NDCG@10 with patience 100; test NDCG@10 under the
ranklib convention, NDCG@10 and MAP under LETOR's (``Eval-Score-4.0.pl``).

``generated``: an MSLR-shaped set from ``generate.py`` (raw features, or min-max normalised
per query with ``--query-normalised``), a fixed number of trees, test NDCG@10 (lightgbm
convention) after every tree and test MAP at 50, 200 and the last tree.

``files``: your own ``--train``/``--valid``/``--test`` LETOR files, the ``mq2008`` protocol
(without ``--valid``: the ``generated`` protocol, a fixed number of trees).

    python benchmarks/normalization.py mq2008 [--trees 1000]
    python benchmarks/normalization.py generated --queries 1500 --test-queries 500 --trees 1000
    python benchmarks/normalization.py generated --query-normalised ... --json out.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import numpy as np

from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.fast.trees.predict import predict_ensemble
from twinrank.reference.io.data import Dataset, load_mq2008
from twinrank.reference.io.letor import read_letor

RANKERS = ("twinrank", "twinrank normalize=False", "lightgbm", "lightgbm lambdarank_norm=False",
           "xgboost")
CHECKPOINTS = (50, 200, 1000)


@dataclasses.dataclass(frozen=True)
class Setup:
    trees: int
    learning_rate: float
    leaves: int
    min_leaf: int
    seed: int = 1
    patience: int | None = 100


def fit_predict(name: str, s: Setup, train, valid, test):
    """Test scores after each checkpoint (``{n_trees: scores}``) and the curve of test NDCG@10."""
    if name.startswith("twinrank"):
        return _twinrank(s, train, valid, test, normalize="normalize=False" not in name)
    if name.startswith("lightgbm"):
        return _lightgbm(s, train, valid, test, norm="norm=False" not in name)
    return _xgboost(s, train, valid, test)


def _twinrank(s, train, valid, test, normalize):
    est = LambdaMART(n_trees=s.trees, learning_rate=s.learning_rate, max_leaves=s.leaves,
                     min_samples_leaf=s.min_leaf, seed=s.seed, normalize=normalize,
                     early_stopping_rounds=s.patience if valid is not None else None)
    est.fit(train, eval_set=[valid if valid is not None else test])
    model = est.model_
    curve = [] if valid is not None else model.history["valid:ndcg@10"]
    return {k: predict_ensemble(_first(model, k), test.X) for k in _checkpoints(model.n_trees)}, curve


def _first(model, k):
    return dataclasses.replace(model, trees=model.trees[:k], tree_weights=model.tree_weights[:k])


def _checkpoints(n_trees):
    return sorted({min(k, n_trees) for k in CHECKPOINTS} | {n_trees})


def _lightgbm(s, train, valid, test, norm):
    import lightgbm as lgb

    def ds(d):
        return lgb.Dataset(d.X, d.y, group=d.query_sizes, free_raw_data=False)

    params = dict(objective="lambdarank", learning_rate=s.learning_rate, num_leaves=s.leaves,
                  min_data_in_leaf=s.min_leaf, metric="ndcg", eval_at=[10], verbose=-1,
                  seed=s.seed, num_threads=2, lambdarank_norm=norm)
    evals = {}
    callbacks = [lgb.record_evaluation(evals)]
    if valid is not None:
        callbacks.append(lgb.early_stopping(s.patience, verbose=False))
    booster = lgb.train(params, ds(train), s.trees, valid_sets=[ds(valid if valid is not None else test)],
                        callbacks=callbacks)
    n_trees = booster.best_iteration or booster.current_iteration()
    curve = [] if valid is not None else list(evals["valid_0"]["ndcg@10"])
    return {k: booster.predict(test.X, num_iteration=k) for k in _checkpoints(n_trees)}, curve


def _xgboost(s, train, valid, test):
    import xgboost as xgb

    def dm(d):
        return xgb.DMatrix(d.X, d.y, qid=np.repeat(np.arange(d.n_queries), d.query_sizes))

    params = dict(objective="rank:ndcg", eta=s.learning_rate, max_leaves=s.leaves,
                  grow_policy="lossguide", tree_method="hist", eval_metric="ndcg@10", nthread=2,
                  seed=s.seed)
    evals = {}
    booster = xgb.train(params, dm(train), s.trees, evals=[(dm(valid if valid is not None else test), "v")],
                        early_stopping_rounds=s.patience if valid is not None else None,
                        evals_result=evals, verbose_eval=False)
    n_trees = booster.best_iteration + 1 if valid is not None else s.trees
    curve = [] if valid is not None else list(evals["v"]["ndcg@10"])
    test_matrix = xgb.DMatrix(test.X)
    return {k: booster.predict(test_matrix, iteration_range=(0, k)) for k in _checkpoints(n_trees)}, curve


def query_normalised(data: Dataset) -> Dataset:
    """Min-max normalise every feature within each query (LETOR's QueryLevelNorm); constant -> 0."""
    X = data.X.astype(np.float64)
    qid = np.repeat(np.arange(data.n_queries), data.query_sizes)  # (n_rows,)
    lo = np.full((data.n_queries, data.n_features), np.inf)
    hi = np.full((data.n_queries, data.n_features), -np.inf)
    np.minimum.at(lo, qid, X)
    np.maximum.at(hi, qid, X)
    span = (hi - lo)[qid]  # (n_rows, n_features)
    Xn = np.where(span > 0, (X - lo[qid]) / np.where(span > 0, span, 1.0), 0.0)
    return dataclasses.replace(data, X=Xn.astype(np.float32))


def scored(test, scores, conventions):
    out = {}
    for convention, names in conventions.items():
        values = evaluate(names, test.y, scores, test.query_offsets, convention=convention)
        out.update({f"{m} ({convention})": float(values[m]) for m in names})
    return out


def run_folds(folds, rankers, s: Setup):
    """The early-stopping protocol over ``folds`` (an iterable of (train, valid, test))."""
    conventions = {"ranklib": ["ndcg@10"], "letor": ["ndcg@10", "map"]}
    results = {name: [] for name in rankers}
    for i, (train, valid, test) in enumerate(folds, 1):
        for name in rankers:
            start = time.perf_counter()
            by_trees, _ = fit_predict(name, s, train, valid, test)
            n_trees = max(by_trees)
            row = scored(test, by_trees[n_trees], conventions) | {"trees": n_trees}
            results[name].append(row)
            print(f"fold {i}  {name:<31} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()
                                                        if k != "trees")
                  + f"  {n_trees:>4} trees  {time.perf_counter() - start:5.1f} s", flush=True)
    return {name: {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
            for name, rows in results.items() if rows}


def generated_sets(s: Setup, n_queries, n_test_queries, normalise):
    """The MSLR-shaped training and test sets of ``generate.py`` (seed ``s.seed``)."""
    import generate

    train, test = generate.train_test(n_queries, n_test_queries, seed=s.seed)
    return (query_normalised(train), query_normalised(test)) if normalise else (train, test)


def run_fixed_trees(rankers, s: Setup, train, test):
    """A fixed number of trees, no validation set: test metrics per tree and at the checkpoints."""
    summary = {}
    for name in rankers:
        start = time.perf_counter()
        by_trees, curve = fit_predict(name, s, train, None, test)
        row = {f"ndcg@10 @{k}": float(evaluate(["ndcg@10"], test.y, p, test.query_offsets)["ndcg@10"])
               for k, p in by_trees.items()}
        row |= {f"map @{k}": float(evaluate(["map"], test.y, p, test.query_offsets)["map"])
                for k, p in by_trees.items()}
        summary[name] = row | {"curve": [float(v) for v in curve]}
        print(f"{name:<31} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items())
              + f"  {time.perf_counter() - start:6.1f} s", flush=True)
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("protocol", choices=["mq2008", "generated", "files"])
    p.add_argument("--trees", type=int, default=1000)
    p.add_argument("--learning-rate", type=float)
    p.add_argument("--leaves", type=int)
    p.add_argument("--min-samples-leaf", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--queries", type=int, default=1500, help="generated: training queries")
    p.add_argument("--test-queries", type=int, default=500, help="generated: test queries")
    p.add_argument("--query-normalised", action="store_true", help="generated: min-max per query")
    p.add_argument("--train")
    p.add_argument("--valid")
    p.add_argument("--test")
    p.add_argument("--xgboost", action="store_true", help="also XGBoost rank:ndcg with its defaults")
    p.add_argument("--json", help="append the summary to this JSON file (a list of runs)")
    args = p.parse_args(argv)
    rankers = [r for r in RANKERS if r != "xgboost" or args.xgboost]
    generated = args.protocol == "generated"
    fixed = generated or (args.protocol == "files" and args.valid is None)
    s = Setup(trees=args.trees, learning_rate=args.learning_rate or (0.1 if generated else 0.05),
              leaves=args.leaves or (31 if generated else 15),
              min_leaf=args.min_samples_leaf or (50 if generated else 20), seed=args.seed,
              patience=None if fixed else 100)
    if fixed:
        train, test = (generated_sets(s, args.queries, args.test_queries, args.query_normalised) if generated
                       else _read_files(args.train, None, args.test)[::2])
        summary = run_fixed_trees(rankers, s, train, test)
    else:
        folds = ((load_mq2008(f) for f in range(1, 6)) if args.protocol == "mq2008" else
                 [_read_files(args.train, args.valid, args.test)])
        summary = run_folds(folds, rankers, s)
        print("\nmean over folds")
        for name, row in summary.items():
            print(f"  {name:<31} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()))
    if args.json:
        words = sys.argv[1:] if argv is None else list(argv)
        run = {"title": _title(args), "label": _label(args), "command": " ".join(["python benchmarks/normalization.py"] + words),
               "protocol": args.protocol, "setup": dataclasses.asdict(s), "summary": summary,
               "query_normalised": bool(args.query_normalised), "queries": args.queries,
               "test_queries": args.test_queries}
        try:
            with open(args.json) as f:
                runs = json.load(f)
        except FileNotFoundError:
            runs = []
        with open(args.json, "w") as f:
            json.dump(runs + [run], f, indent=1)


def _label(args) -> str:
    """A short name of the data (a plot's title)."""
    if args.protocol == "generated":
        return f"MSLR-shaped, {'query-normalised' if args.query_normalised else 'raw'} features"
    return "MQ2008" if args.protocol == "mq2008" else args.train


def _title(args) -> str:
    if args.protocol == "generated":
        features = "query-normalised" if args.query_normalised else "raw"
        return (f"MSLR-shaped, {args.queries:,} training / {args.test_queries:,} test queries, "
                f"{features} features: test metrics at 50, 200, {args.trees} trees")
    if args.protocol == "files" and args.valid is None:
        return f"{args.train}: test metrics at 50, 200, {args.trees} trees"
    where = "MQ2008, 5 folds" if args.protocol == "mq2008" else args.train
    return f"{where}: early stopping on validation NDCG@10, test metrics, mean over folds"


def _read_files(train, valid, test):
    train = read_letor(train)
    return (train, valid and read_letor(valid, n_features=train.n_features),
            read_letor(test, n_features=train.n_features))


if __name__ == "__main__":
    main()

"""Quality on LETOR 4.0 MQ2008, 5 folds, side by side with LightGBM (and XGBoost if installed).

Protocol (the one the peers' numbers in shared/data/README.md were measured with): train on
each fold's train queries, early stopping on its validation NDCG@10, report test NDCG@10 under
the RankLib convention (a query with no relevant document scores 0), mean over the five folds.

    python benchmarks/mq2008_folds.py [--engine fast|reference] [--trees 1000] [--no-peers]
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

from twinrank.reference.io.data import load_mq2008

PARAMS = dict(learning_rate=0.05, max_leaves=15, min_samples_leaf=20, metric="ndcg@10",
              early_stopping_rounds=100, seed=0)


def twinrank_scores(engine: str, train, valid, test, n_trees: int):
    LambdaMART = importlib.import_module(f"twinrank.{engine}.lambdamart").LambdaMART
    est = LambdaMART(n_trees=n_trees, **PARAMS).fit(train, eval_set=[valid])
    return est.predict(test), est.model_.n_trees


def lightgbm_scores(train, valid, test, n_trees: int):
    import lightgbm as lgb

    def ds(d):
        return lgb.Dataset(d.X, d.y, group=d.query_sizes, free_raw_data=False)

    params = dict(objective="lambdarank", learning_rate=PARAMS["learning_rate"],
                  num_leaves=PARAMS["max_leaves"], min_data_in_leaf=PARAMS["min_samples_leaf"],
                  metric="ndcg", eval_at=[10], verbose=-1, seed=0, num_threads=2)
    booster = lgb.train(params, ds(train), n_trees, valid_sets=[ds(valid)],
                        callbacks=[lgb.early_stopping(PARAMS["early_stopping_rounds"], verbose=False)])
    return booster.predict(test.X, num_iteration=booster.best_iteration), booster.best_iteration


def xgboost_scores(train, valid, test, n_trees: int):
    import xgboost as xgb

    dtrain = xgb.DMatrix(train.X, train.y, qid=train.qid)
    dvalid = xgb.DMatrix(valid.X, valid.y, qid=valid.qid)
    params = dict(objective="rank:ndcg", eta=PARAMS["learning_rate"], max_leaves=PARAMS["max_leaves"],
                  grow_policy="lossguide", tree_method="hist", eval_metric="ndcg@10", nthread=2, seed=0)
    booster = xgb.train(params, dtrain, n_trees, evals=[(dvalid, "valid")],
                        early_stopping_rounds=PARAMS["early_stopping_rounds"], verbose_eval=False)
    return booster.predict(xgb.DMatrix(test.X), iteration_range=(0, booster.best_iteration + 1)), \
        booster.best_iteration + 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast")
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--no-peers", action="store_true", help="twinrank only")
    args = parser.parse_args(argv)
    metrics = importlib.import_module(f"twinrank.{args.engine}.metrics")
    rankers = {"twinrank": lambda *d: twinrank_scores(args.engine, *d, args.trees)}
    if not args.no_peers:
        rankers.update(lightgbm=lambda *d: lightgbm_scores(*d, args.trees),
                       xgboost=lambda *d: xgboost_scores(*d, args.trees))
    results = {name: [] for name in rankers}
    for fold in range(1, 6):
        train, valid, test = load_mq2008(fold)
        for name, fit in rankers.items():
            start = time.perf_counter()
            try:
                scores, n_trees = fit(train, valid, test)
            except ImportError:
                continue
            value = metrics.evaluate(["ndcg@10"], test.y, scores, test.query_offsets,
                                     convention="ranklib")["ndcg@10"]
            results[name].append(value)
            print(f"fold {fold}  {name:<9} test NDCG@10 (ranklib) {value:.4f}  "
                  f"{n_trees:>4} trees  {time.perf_counter() - start:6.1f} s", flush=True)
    print("\nmean over folds, test NDCG@10 (ranklib convention)")
    for name, values in results.items():
        if values:
            print(f"  {name:<9} {np.mean(values):.4f}  ({len(values)} folds)")


if __name__ == "__main__":
    main()

"""Random forest vs IGBRT (and GBRT) on LETOR 4.0 MQ2008, 5 folds.

Protocol (as ``mq2008_folds.py``): train on each fold's train queries, report test NDCG@10
under the RankLib convention (a query with no relevant document scores 0), mean over the
five folds. The boosted models (IGBRT's boosting, GBRT) stop early on the fold's validation
NDCG@10 and keep their best round; the forest has no stopping rule (more trees do not
overfit). IGBRT's forest is the random forest of the same fold, grown with the same
parameters and seed: the question is whether boosting its residuals helps (Mohan 2010, Mohan
et al. 2010 report that it does). The parameters below were chosen on the validation sets
of the folds (mean validation NDCG@10), never on the test sets.

    python benchmarks/pointwise_folds.py [--engine fast|reference] [--forest-trees 300] [--threads N]
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

from twinrank.reference.data import load_mq2008

FOREST = dict(max_leaves=1024, min_samples_leaf=5, feature_fraction=0.1, bootstrap=True, seed=0)
BOOST = dict(learning_rate=0.05, max_leaves=31, min_samples_leaf=50, metric="ndcg@10",
             convention="ranklib", early_stopping_rounds=50)


def fit_all(engine: str, train, valid, n_forest_trees: int, n_boost_trees: int, n_threads):
    """The three fitted rankers of one fold, with their training times."""
    forest_module = importlib.import_module(f"twinrank.{engine}.forest")
    gbrt_module = importlib.import_module(f"twinrank.{engine}.gbrt")
    forest_params = dict(FOREST, n_trees=n_forest_trees)
    fitted, seconds = {}, {}
    for name, est in [
        ("random forest", forest_module.RandomForest(**forest_params, n_threads=n_threads)),
        ("IGBRT", forest_module.IGBRT(**{f"rf_{k}": v for k, v in forest_params.items() if k != "seed"},
                                      **BOOST, n_trees=n_boost_trees, seed=0, n_threads=n_threads)),
        ("GBRT", gbrt_module.GBRT(**BOOST, n_trees=n_boost_trees, seed=0, n_threads=n_threads)),
    ]:
        start = time.perf_counter()
        fitted[name] = est.fit(train, eval_set=[valid])
        seconds[name] = time.perf_counter() - start
    return fitted, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast")
    parser.add_argument("--forest-trees", type=int, default=300)
    parser.add_argument("--boost-trees", type=int, default=1000, help="most boosting rounds")
    parser.add_argument("--threads", type=int, help="threads of the fast engine (default: all)")
    args = parser.parse_args(argv)
    metrics = importlib.import_module(f"twinrank.{args.engine}.metrics")
    results = {}
    for fold in range(1, 6):
        train, valid, test = load_mq2008(fold)
        fitted, seconds = fit_all(args.engine, train, valid, args.forest_trees, args.boost_trees,
                                  args.threads)
        same = all(s.equals(t) for s, t in zip(fitted["IGBRT"].model_.init_model.trees,
                                               fitted["random forest"].model_.trees))
        assert same, "IGBRT's forest is not the random forest of the fold"
        for name, est in fitted.items():
            value = metrics.evaluate(["ndcg@10"], test.y, est.predict(test), test.query_offsets,
                                     convention="ranklib")["ndcg@10"]
            results.setdefault(name, []).append(value)
            boosted = "" if name == "random forest" else f"{est.model_.n_trees:>4} boosted trees"
            print(f"fold {fold}  {name:<13} test NDCG@10 (ranklib) {value:.4f}  {boosted:<18}"
                  f"{seconds[name]:6.1f} s", flush=True)
    print("\nmean over folds, test NDCG@10 (ranklib convention)")
    for name, values in results.items():
        print(f"  {name:<13} {np.mean(values):.4f}  " + " ".join(f"{v:.4f}" for v in values))
    wins = sum(i > r for i, r in zip(results["IGBRT"], results["random forest"]))
    print(f"IGBRT beats its random forest on {wins} of 5 folds, by "
          f"{np.mean(results['IGBRT']) - np.mean(results['random forest']):+.4f} on average")


if __name__ == "__main__":
    main()

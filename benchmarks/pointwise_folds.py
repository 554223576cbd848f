"""Random forest vs IGBRT (and GBRT) on LETOR 4.0 MQ2008, 5 folds, several seeds.

Protocol (as ``mq2008_folds.py``): train on each fold's train queries, report test NDCG@10
under the RankLib convention (a query with no relevant document scores 0), mean over the
five folds. The boosted models (IGBRT's boosting, GBRT) stop early on the fold's validation
NDCG@10 and keep their best round; the forest has no stopping rule (more trees do not
overfit). The random forest is IGBRT's own forest (``model_.init_model``: the
``RandomForest`` of the same parameters and seed, as ``tests/rankers/test_forest.py`` checks), so the
comparison asks exactly whether boosting the forest's residuals helps (Mohan 2010; Mohan,
Chen & Weinberger 2011). Each seed grows other forests; the last lines average over seeds.

    python benchmarks/pointwise_folds.py [--engine fast|reference] [--seeds 3] [--threads N]
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

from twinrank.reference.io.data import load_mq2008

# Chosen on the validation sets only (mean validation NDCG@10 over the folds and seeds 1-3):
# the forest's min_samples_leaf among 5, 20, 50 by the forest's own score (50), then the
# boosting's (learning_rate, max_leaves, min_samples_leaf) among (0.05, 31, 50) and
# (0.05, 8, 20) by IGBRT's score on that forest. (On the min_samples_leaf=5 forest,
# (0.02, 15, 50) and (0.01, 8, 50) were tried too.)
FOREST = dict(rf_n_trees=300, rf_max_leaves=1024, rf_min_samples_leaf=50, rf_feature_fraction=0.1,
              rf_bootstrap=True)
BOOST = dict(n_trees=1000, learning_rate=0.05, max_leaves=8, min_samples_leaf=20,
             metric="ndcg@10", convention="ranklib", early_stopping_rounds=50)


def test_ndcg(metrics, test, scores) -> float:
    return metrics.evaluate(["ndcg@10"], test.y, scores, test.query_offsets,
                            convention="ranklib")["ndcg@10"]


def one_fold(engine: str, fold: int, seed: int, n_threads) -> dict:
    """Test NDCG@10 of the forest, IGBRT and GBRT of one fold and seed (and what they kept)."""
    forest = importlib.import_module(f"twinrank.{engine}.forest")
    gbrt = importlib.import_module(f"twinrank.{engine}.gbrt")
    predict = importlib.import_module(f"twinrank.{engine}.predict")
    metrics = importlib.import_module(f"twinrank.{engine}.metrics")
    train, valid, test = load_mq2008(fold)
    start = time.perf_counter()
    igbrt = forest.IGBRT(**FOREST, **BOOST, seed=seed, n_threads=n_threads).fit(train, eval_set=[valid])
    igbrt_seconds = time.perf_counter() - start
    start = time.perf_counter()
    plain = gbrt.GBRT(**BOOST, seed=seed, n_threads=n_threads).fit(train, eval_set=[valid])
    gbrt_seconds = time.perf_counter() - start
    return {
        "random forest": (test_ndcg(metrics, test, predict.predict_ensemble(igbrt.model_.init_model, test.X)), ""),
        "IGBRT": (test_ndcg(metrics, test, igbrt.predict(test)),
                  f"{igbrt.model_.n_trees:>4} boosted trees, {igbrt_seconds:5.1f} s with its forest"),
        "GBRT": (test_ndcg(metrics, test, plain.predict(test)),
                 f"{plain.model_.n_trees:>4} trees, {gbrt_seconds:5.1f} s"),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1")
    parser.add_argument("--threads", type=int, help="threads of the fast engine (default: all)")
    args = parser.parse_args(argv)
    results = {}  # ranker -> (n_seeds, 5) test NDCG@10
    for seed in range(args.seeds):
        for fold in range(1, 6):
            for name, (value, note) in one_fold(args.engine, fold, seed, args.threads).items():
                results.setdefault(name, np.zeros((args.seeds, 5)))[seed, fold - 1] = value
                print(f"seed {seed} fold {fold}  {name:<13} test NDCG@10 (ranklib) {value:.4f}  {note}",
                      flush=True)
    print("\nmean over the 5 folds, test NDCG@10 (ranklib convention)")
    print(f"  {'':<13} " + " ".join(f"seed {s:<3}" for s in range(args.seeds)) + "  mean")
    for name, values in results.items():
        folds_mean = values.mean(axis=1)  # (n_seeds,)
        print(f"  {name:<13} " + " ".join(f"{v:.4f}  " for v in folds_mean) + f"  {folds_mean.mean():.4f}")
    gain = results["IGBRT"] - results["random forest"]  # (n_seeds, 5)
    print(f"IGBRT - its random forest: {gain.mean():+.4f} on average; better on {(gain > 0).sum()}, "
          f"equal on {(gain == 0).sum()}, worse on {(gain < 0).sum()} of {gain.size} fold-seeds")


if __name__ == "__main__":
    main()

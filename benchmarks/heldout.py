"""Fast LambdaMART vs LightGBM lambdarank on any held-out LETOR split, same parameters.

    python benchmarks/heldout.py --train rank.train --test rank.test [--valid vali.txt] [--trees 300]

Without ``--valid`` both train a fixed number of trees; with it, both stop early on its
NDCG@10. Reports test NDCG@10 under the lightgbm and ranklib conventions.
"""
from __future__ import annotations

import argparse

from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.io.letor import read_letor


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--valid")
    p.add_argument("--trees", type=int, default=300)
    p.add_argument("--leaves", type=int, default=31)
    p.add_argument("--learning-rate", type=float, default=0.05)
    p.add_argument("--min-samples-leaf", type=int, default=20)
    args = p.parse_args(argv)
    train = read_letor(args.train)
    test = read_letor(args.test, n_features=train.n_features)
    valid = read_letor(args.valid, n_features=train.n_features) if args.valid else None
    stop = 50 if valid is not None else None
    est = LambdaMART(n_trees=args.trees, learning_rate=args.learning_rate, max_leaves=args.leaves,
                     min_samples_leaf=args.min_samples_leaf, early_stopping_rounds=stop)
    est.fit(train, eval_set=[valid] if valid is not None else None)
    scores = {"twinrank": est.predict(test)}
    try:
        scores["lightgbm"] = lightgbm_scores(train, valid, test, args, stop)
    except ImportError:
        pass
    for name, s in scores.items():
        row = [evaluate(["ndcg@10"], test.y, s, test.query_offsets, convention=c)["ndcg@10"]
               for c in ("lightgbm", "ranklib")]
        print(f"{name:<9} test NDCG@10 lightgbm {row[0]:.4f}  ranklib {row[1]:.4f}")


def lightgbm_scores(train, valid, test, args, stop):
    import lightgbm as lgb

    def ds(d):
        return lgb.Dataset(d.X, d.y, group=d.query_sizes, free_raw_data=False)

    params = dict(objective="lambdarank", learning_rate=args.learning_rate, num_leaves=args.leaves,
                  min_data_in_leaf=args.min_samples_leaf, metric="ndcg", eval_at=[10],
                  verbose=-1, seed=0, num_threads=2)
    valid_sets = [ds(valid)] if valid is not None else []
    callbacks = [lgb.early_stopping(stop, verbose=False)] if stop else []
    booster = lgb.train(params, ds(train), args.trees, valid_sets=valid_sets, callbacks=callbacks)
    return booster.predict(test.X, num_iteration=booster.best_iteration or None)


if __name__ == "__main__":
    main()

"""``twinrank demo``: LambdaMART on the bundled MQ2008 Fold1, scored on its test queries."""
from __future__ import annotations

import time

from ._cli_common import add_engine_option, add_threads_option, engine_module
from ._cli_train import TreeCounter, trained_summary

DEMO_PARAMS = dict(n_trees=300, learning_rate=0.05, max_leaves=15, min_samples_leaf=20,
                   metric="ndcg@10", early_stopping_rounds=50, seed=0)
REPORTED = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="train LambdaMART on bundled MQ2008 and print test metrics",
                       description="Train LambdaMART on the bundled LETOR 4.0 MQ2008 Fold1 "
                                   "(early stopping on its validation queries) and print test "
                                   "NDCG@1/3/5/10 and MAP under two conventions.")
    p.add_argument("--fold", type=int, default=1, choices=range(1, 6), help="MQ2008 fold (default 1)")
    add_threads_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_engine_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.reference.data import load_mq2008

    from ._progress import Progress

    train, valid, test = load_mq2008(args.fold)
    print(f"MQ2008 Fold{args.fold}: {train.n_queries} training, {valid.n_queries} validation, "
          f"{test.n_queries} test queries; {train.n_features} features; engine {args.engine}")
    est = engine_module(args.engine, "lambdamart").LambdaMART(**DEMO_PARAMS, n_threads=args.threads)
    counter = TreeCounter(None if args.quiet else Progress(DEMO_PARAMS["n_trees"]))
    start = time.perf_counter()
    est.fit(train, eval_set=[valid], callback=counter)
    counter.close()
    print(f"{trained_summary(est.model_, counter.grown)}, in {time.perf_counter() - start:.1f} s")
    scores = est.predict(test)
    metrics = engine_module(args.engine, "metrics")
    print(f"{'test':<10}" + "".join(f"{m:>10}" for m in REPORTED))
    for convention in ("lightgbm", "ranklib"):
        values = metrics.evaluate(REPORTED, test.y, scores, test.query_offsets, convention=convention)
        print(f"{convention:<10}" + "".join(f"{values[m]:>10.4f}" for m in REPORTED))
    n_empty = sum(test.y[lo:hi].max(initial=0) == 0
                  for lo, hi in zip(test.query_offsets[:-1], test.query_offsets[1:]))
    print(f"(the two rows are two conventions of the same scores: {n_empty} of the {test.n_queries} test "
          "queries have no relevant document and score 1 under lightgbm's, 0 under ranklib's)")
    return 0

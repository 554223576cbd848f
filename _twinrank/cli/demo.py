"""``twinrank demo``: LambdaMART on the bundled MQ2008 Fold1, scored on its test queries."""
from __future__ import annotations

import time

import numpy as np

from twinrank.cli._common import add_engine_option, add_threads_option, engine_module
from twinrank.cli.training.train import TreeCounter, trained_summary
from twinrank.fast.runtime._compile_notice import session

DEMO_PARAMS = dict(n_trees=300, learning_rate=0.05, max_leaves=15, min_samples_leaf=20,
                   metric="ndcg@10", early_stopping_rounds=50, seed=0)
REPORTED = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]
SHOWN = ("lightgbm", "ranklib", "letor")  # the rows of the table; xgboost = lightgbm, trec needs doc ids


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="train LambdaMART on bundled MQ2008 and print test metrics",
                       description="Train LambdaMART on the bundled LETOR 4.0 MQ2008 Fold1 "
                                   "(early stopping on its validation queries) and print test "
                                   "NDCG@1/3/5/10 and MAP under three evaluation conventions "
                                   "(lightgbm, ranklib, letor), with why they differ.")
    p.add_argument("--fold", type=int, default=1, choices=range(1, 6), help="MQ2008 fold (default 1)")
    add_threads_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_engine_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.cli._progress import Progress
    from twinrank.reference.io.data import load_mq2008

    train, valid, test = load_mq2008(args.fold)
    print(f"MQ2008 Fold{args.fold}: {train.n_queries} training, {valid.n_queries} validation, "
          f"{test.n_queries} test queries; {train.n_features} features; engine {args.engine}")
    est = engine_module(args.engine, "lambdamart").LambdaMART(**DEMO_PARAMS, n_threads=args.threads)
    counter = TreeCounter(None if args.quiet else Progress(DEMO_PARAMS["n_trees"], convention=est.convention))
    with session():  # a cold cache: one "compiling" line for the fit, the prediction and the table
        start = time.perf_counter()
        est.fit(train, eval_set=[valid], callback=counter)
        seconds = time.perf_counter() - start
        counter.close()
        table = conventions_table(engine_module(args.engine, "metrics"), test, est.predict(test))
    print(f"{trained_summary(est.model_, counter.grown, est.convention)}, in {seconds:.1f} s")
    print(table)
    return 0


def conventions_table(metrics, test, scores) -> str:
    """The test metrics of ``scores`` under each of :data:`SHOWN`, and why the rows differ."""
    lines = [f"{'convention':<10}" + "".join(f"{m:>10}" for m in REPORTED)]
    for convention in SHOWN:
        values = metrics.evaluate(REPORTED, test.y, scores, test.query_offsets, convention=convention)
        lines.append(f"{convention:<10}" + "".join(f"{values[m]:>10.4f}" for m in REPORTED))
    sizes = np.diff(test.query_offsets)
    n_empty = sum(test.y[lo:hi].max(initial=0) == 0
                  for lo, hi in zip(test.query_offsets[:-1], test.query_offsets[1:]))
    n = test.n_queries
    lines += [
        "The rows are three evaluation conventions of the same test scores (twinrank evaluate --help):",
        f"- lightgbm, ranklib: {n_empty} of the {n} test queries have no relevant document; they score 1 under",
        "  LightGBM's convention (also XGBoost's), 0 under RankLib's.",
        "- letor: LETOR 4.0's Eval-Score-4.0.pl scores NDCG@k of a query with fewer than k documents 0;",
        f"  {int((sizes < 10).sum())} of the {n} test queries have fewer than 10 documents, which is why",
        "  its ndcg@10 can be lower than its ndcg@5.",
    ]
    return "\n".join(lines)

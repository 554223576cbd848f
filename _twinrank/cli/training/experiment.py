"""``twinrank experiment variance``: BL-MART's variance experiment (Ganjisaffar et al. 2011, Table 5).

Trains LambdaMART and BL-MART (with the same member parameters, ``--set``) on
``--samples`` samples of ``--fraction`` of the training queries, scores the test set
with each, and prints per metric the mean and variance over the samples and
BL-MART's reduction of LambdaMART's variance (:func:`twinrank.reference.analysis.pools.variance_experiment`).
``--sample-weight FILE`` weighs the training rows (a sample keeps its rows' weights).
"""
from __future__ import annotations

import argparse
import json
import sys

from twinrank.cli._common import (
    add_engine_option,
    add_reading_options,
    check_input,
    engine_module,
    reading_options,
    require_queries,
)
from twinrank.cli.training.grid import parse_params
from twinrank.cli.training.train import note_unread_weights, weighted
from twinrank.reference.errors import ParameterError

EXAMPLE = """\
example (MQ2008 fold 1, members of 50 trees, 10 members a bag):
  twinrank data mq2008 --fold 1 --out mq2008
  twinrank experiment variance --train mq2008/train.txt --valid mq2008/vali.txt --test mq2008/test.txt \\
      --set n_trees=50 --models 10 --samples 10
"""


def add_parser(sub) -> None:
    p = sub.add_parser("experiment", help="the papers' experiments: BL-MART's variance across training samples",
                       description="Run one of the papers' experiments.")
    kinds = p.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    q = kinds.add_parser("variance", help="LambdaMART vs BL-MART: mean and variance over training samples",
                         description=__doc__.split("\n", 1)[1].strip() + "\n\n" + EXAMPLE,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("--train", required=True, help="the training queries to sample (LETOR file)")
    q.add_argument("--valid", help="validation data of every model (early stopping; default: none)")
    q.add_argument("--test", required=True, help="the test set every model scores (LETOR file)")
    q.add_argument("--sample-weight", metavar="FILE",
                   help="the training rows' weights, one number per line, per row or per query (LightGBM's "
                        "<data>.weight); a sample keeps its rows' weights (default: none)")
    q.add_argument("--samples", type=int, default=10, help="training samples T, at least 2 (default 10)")
    q.add_argument("--fraction", type=float, default=0.67,
                   help="fraction of the training queries in a sample, in (0, 1] (default 0.67)")
    q.add_argument("--models", type=int, default=10, help="BL-MART's members B (default 10)")
    q.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a LambdaMART parameter of every model, e.g. --set n_trees=50 (repeatable)")
    q.add_argument("--metric", default="ndcg@1,ndcg@3,ndcg@10,map",
                   help="comma-separated metrics (default ndcg@1,ndcg@3,ndcg@10,map)")
    q.add_argument("--convention", default="letor", help="the metrics' convention (default letor)")
    q.add_argument("--seed", type=int, default=0, help="master seed of the samples and models (default 0)")
    q.add_argument("--json", action="store_true", help="print JSON: mean, variance, reduction per method")
    q.add_argument("--quiet", action="store_true", help="no progress line per sample")
    add_reading_options(q)
    add_engine_option(q)
    q.set_defaults(run=run)


def run(args) -> int:
    from twinrank.reference.io.letor import read_letor

    for path, flag in ((args.train, "--train"), (args.valid, "--valid"), (args.test, "--test"),
                       (args.sample_weight, "--sample-weight")):
        check_input(path, flag)
    params = parse_params(args.set, "bl-mart", many=False)
    if args.models < 1 or args.samples < 2 or not 0 < args.fraction <= 1:
        raise ParameterError(f"need --models >= 1, --samples >= 2 and --fraction in (0, 1]; got {args.models}, "
                             f"{args.samples}, {args.fraction}")
    lambdamart = engine_module(args.engine, "lambdamart").LambdaMART
    bagging = engine_module(args.engine, "bagging").BLMART
    bagging(**params, n_models=args.models).validated_params()  # every parameter checked before any data
    train = read_letor(args.train, **reading_options(args))
    if args.sample_weight is not None:
        train = weighted(train, args.sample_weight)
    else:
        note_unread_weights(args.train)
    valid = read_letor(args.valid, n_features=train.n_features, **reading_options(args)) if args.valid else None
    test = read_letor(args.test, n_features=train.n_features, **reading_options(args))
    for data, path, flag in ((train, args.train, "--train"), (test, args.test, "--test")):
        require_queries(data, path, flag, "the rankers are compared query by query")
    methods = {"LambdaMART": lambda seed: lambdamart(**{**params, "seed": seed}),
               f"BL-MART (B={args.models})": lambda seed: bagging(**{**params, "seed": seed}, n_models=args.models)}
    progress = None if args.quiet else (lambda t, n: print(f"sample {t}/{n} done", file=sys.stderr))
    table = engine_module(args.engine, "pools").variance_experiment(
        methods, train, test, valid=valid, samples=args.samples, fraction=args.fraction,
        metrics=tuple(args.metric.split(",")), convention=args.convention, seed=args.seed, progress=progress)
    if args.json:
        print(json.dumps({"mean": table.mean, "variance": table.variance, "reduction": table.reduction}, indent=1))
    else:
        print(table.to_text())
    return 0

"""``twinrank train``: fit a ranker on a LETOR file and save it as a JSON model."""
from __future__ import annotations

import sys

from .cli import add_engine_option, engine_module

ALGORITHMS = {"lambdamart": ("lambdamart", "LambdaMART")}


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a ranker and save the model",
                       description="Train a ranker on LETOR/SVMlight data and write the model as JSON.")
    p.add_argument("--train", required=True, help="training data (LETOR format, .gz ok)")
    p.add_argument("--valid", help="validation data: metric history and early stopping")
    p.add_argument("--model", required=True, help="where to write the model (JSON, written atomically)")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="lambdamart")
    p.add_argument("--trees", type=int, default=100, help="boosting rounds (default 100)")
    p.add_argument("--leaves", type=int, default=31, help="max leaves per tree (default 31)")
    p.add_argument("--learning-rate", type=float, default=0.1, help="shrinkage (default 0.1)")
    p.add_argument("--min-samples-leaf", type=_count_or_fraction, default=20,
                   help="min rows per leaf: a count, or a fraction of the rows if < 1 (default 20)")
    p.add_argument("--query-subsample", type=float, default=1.0, help="fraction of queries per tree")
    p.add_argument("--feature-fraction", type=float, default=1.0, help="fraction of features per node")
    p.add_argument("--max-bins", type=int, default=255, help="bins per feature (<= 255)")
    p.add_argument("--sigma", type=float, default=1.0, help="RankNet sigmoid steepness")
    p.add_argument("--truncation", type=int, help="only pairs with a document in the top N")
    p.add_argument("--target", help="metric the lambdas optimise (default: --metric)")
    p.add_argument("--metric", default="ndcg@10", help="validation metric (default ndcg@10)")
    p.add_argument("--convention", default="lightgbm", help="metric convention preset")
    p.add_argument("--early-stopping", type=int, metavar="N", help="stop after N rounds without improvement")
    p.add_argument("--overfit-tolerance", type=float, metavar="F",
                   help="BL-MART: go on until the validation metric drops by more than F (relative)")
    p.add_argument("--init-model", help="prior model to start from (LambdaSMART)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, help="threads of the fast engine (default: all cores)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_engine_option(p)
    p.set_defaults(run=run)


def _count_or_fraction(text: str):
    value = float(text)
    return int(value) if value >= 1 and value.is_integer() else value


def run(args) -> int:
    from twinrank.reference.letor import read_letor

    from ._progress import Progress

    train = read_letor(args.train)
    valid = read_letor(args.valid, n_features=train.n_features) if args.valid else None
    module, name = ALGORITHMS[args.algorithm]
    cls = getattr(engine_module(args.engine, module), name)
    est = cls(n_trees=args.trees, max_leaves=args.leaves, learning_rate=args.learning_rate,
              min_samples_leaf=args.min_samples_leaf, query_subsample=args.query_subsample,
              feature_fraction=args.feature_fraction, max_bins=args.max_bins, sigma=args.sigma,
              truncation=args.truncation, target=args.target, metric=args.metric,
              convention=args.convention, early_stopping_rounds=args.early_stopping,
              overfit_tolerance=args.overfit_tolerance, init_model=args.init_model,
              seed=args.seed, n_threads=args.threads)
    progress = None if args.quiet else Progress(args.trees)
    est.fit(train, eval_set=[valid] if valid is not None else None, callback=progress)
    if progress is not None:
        progress.close()
    est.save(args.model)
    model = est.model_
    best = f", best iteration {model.best_iteration}" if model.best_iteration is not None else ""
    print(f"trained {model.n_trees} trees{best}; model written to {args.model}", file=sys.stderr)
    return 0

"""``twinrank train``: fit a ranker on a LETOR file and save it as a JSON model.

Each flag maps to the estimator parameter of the same name; a flag the user
leaves out keeps the estimator's default, and a flag the chosen algorithm does not
take is an error rather than silently ignored.
"""
from __future__ import annotations

import argparse
import sys

from twinrank.reference.errors import ParameterError

from .cli import add_engine_option, engine_module

# --algorithm NAME -> (module, class)
ALGORITHMS = {"lambdamart": ("lambdamart", "LambdaMART"),
              "mcrank": ("classification", "McRank"),
              "gbrt": ("gbrt", "GBRT"),
              "random-forest": ("forest", "RandomForest"),
              "igbrt": ("forest", "IGBRT")}


def _weighting(text: str):
    """McRank's weighting: a name, or comma-separated numbers (one per label)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        return text


def _true_or_false(text: str) -> bool:
    choices = {"true": True, "false": False}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return choices[text.lower()]


# (flag, estimator parameter, type, help); type bool: a switch giving True (left out: the default)
FLAGS = [
    ("--trees", "n_trees", int, "boosting rounds / trees"),
    ("--leaves", "max_leaves", int, "max leaves per tree"),
    ("--max-depth", "max_depth", int, "max depth of a tree"),
    ("--learning-rate", "learning_rate", float, "shrinkage"),
    ("--min-samples-leaf", "min_samples_leaf", None, "min rows per leaf: a count, or a fraction of the rows if < 1"),
    ("--query-subsample", "query_subsample", float, "fraction of queries per tree"),
    ("--feature-fraction", "feature_fraction", float, "fraction of features per node"),
    ("--max-bins", "max_bins", int, "bins per feature (<= 255)"),
    ("--sigma", "sigma", float, "RankNet sigmoid steepness"),
    ("--truncation", "truncation", int, "only pairs with a document in the top N"),
    ("--normalize", "normalize", _true_or_false,
     "LambdaRank per-query normalisation as LightGBM/XGBoost (true, the default) or the paper's (false)"),
    ("--target", "target", str, "metric the lambdas optimise (default: --metric)"),
    ("--metric", "metric", str, "validation metric, e.g. ndcg@10"),
    ("--convention", "convention", str, "metric convention preset: lightgbm, ranklib, letor, trec"),
    ("--early-stopping", "early_stopping_rounds", int, "stop after N rounds without improvement"),
    ("--overfit-tolerance", "overfit_tolerance", float,
     "BL-MART: go on until the validation metric drops by more than this fraction"),
    ("--init-model", "init_model", str, "prior model file to start from (LambdaSMART)"),
    ("--seed", "seed", int, "seed of every random draw"),
    ("--missing", "missing", str,
     "missing values: learn (each split learns), separate (NaN rows get their own child),\n     or a fitted fill: zero, one, mean, median, iterative"),
    ("--subsample", "subsample", float, "fraction of the rows (or queries: --subsample-by) per tree"),
    ("--weighting", "weighting", _weighting,
     "McRank's relevance weights: linear, square, exp2, or one number per label, e.g. 0,1,3"),
    ("--fit-weights", "fit_weights", _true_or_false, "McRank: true to fit the relevance weights by least squares"),
    ("--subsample-by", "subsample_by", str, "what --subsample draws: rows or queries"),
    ("--average-runs", "average_runs", int, "GBRT: average this many runs, seeded seed, seed+1, ..."),
    ("--bootstrap", "bootstrap", _true_or_false, "random forest: true to grow each tree on a bootstrap sample"),
    ("--rf-trees", "rf_n_trees", int, "IGBRT: trees of the initial random forest"),
    ("--rf-leaves", "rf_max_leaves", int, "IGBRT: max leaves per forest tree"),
    ("--rf-max-depth", "rf_max_depth", int, "IGBRT: max depth of a forest tree"),
    ("--rf-min-samples-leaf", "rf_min_samples_leaf", None, "IGBRT: min rows per forest leaf"),
    ("--rf-feature-fraction", "rf_feature_fraction", float, "IGBRT: fraction of features per forest node"),
    ("--rf-bootstrap", "rf_bootstrap", _true_or_false, "IGBRT: true to bootstrap each forest tree"),
    ("--rf-query-subsample", "rf_query_subsample", float, "IGBRT: fraction of queries per forest tree"),
    ("--eval-train", "eval_train", bool,
     "also record the metric on the training set after every tree (costs one evaluation per tree)"),
]


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a ranker and save the model",
                       description="Train a ranker on LETOR/SVMlight data and write the model as JSON. "
                                   "Flags left out keep the algorithm's defaults.")
    p.add_argument("--train", required=True, help="training data (LETOR format, .gz ok)")
    p.add_argument("--valid", help="validation data: metric history and early stopping")
    p.add_argument("--model", required=True, help="where to write the model (JSON, written atomically)")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="lambdamart")
    for flag, dest, kind, text in FLAGS:
        if kind is bool:
            p.add_argument(flag, dest=dest, action="store_true", default=None, help=text)
        else:
            p.add_argument(flag, dest=dest, type=kind or _count_or_fraction, help=text)
    p.add_argument("--threads", type=int, help="threads of the fast engine (default: all cores)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_engine_option(p)
    p.set_defaults(run=run)


def _count_or_fraction(text: str):
    value = float(text)
    return int(value) if value >= 1 and value.is_integer() else value


def estimator_from_args(args):
    """The chosen algorithm's estimator with the flags the user gave."""
    module, name = ALGORITHMS[args.algorithm]
    cls = getattr(engine_module(args.engine, module), name)
    accepted = set(cls._param_names())
    given = {dest: getattr(args, dest) for _, dest, _, _ in FLAGS if getattr(args, dest) is not None}
    unknown = sorted(flag for flag, dest, _, _ in FLAGS if dest in given and dest not in accepted)
    if unknown:
        raise ParameterError(f"--algorithm {args.algorithm} does not take {', '.join(unknown)}")
    return cls(**given, n_threads=args.threads)


def planned_trees(est) -> int:
    """The most trees ``est.fit`` grows: more than ``n_trees`` for averaged runs and IGBRT."""
    planned = getattr(est, "planned_trees", None)
    return est.n_trees if planned is None else planned()


def run(args) -> int:
    from twinrank.reference.letor import read_letor

    from ._progress import Progress

    est = estimator_from_args(args)
    train = read_letor(args.train)
    valid = read_letor(args.valid, n_features=train.n_features) if args.valid else None
    progress = None if args.quiet else Progress(planned_trees(est))
    est.fit(train, eval_set=[valid] if valid is not None else None, callback=progress)
    if progress is not None:
        progress.close()
    est.save(args.model)
    model = est.model_
    best = f", best iteration {model.best_iteration}" if model.best_iteration is not None else ""
    print(f"trained {model.n_trees} trees{best}; model written to {args.model}", file=sys.stderr)
    return 0

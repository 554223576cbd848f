"""``twinrank predict``: score a LETOR file with a saved model, one score per line (or, with
``--contributions``, each feature's share of each score, one row per line)."""
from __future__ import annotations

import sys

from twinrank.cli._common import (
    STDOUT,
    add_accept_edited_option,
    add_engine_option,
    add_reading_options,
    add_threads_option,
    check_input,
    check_output,
    check_overwrites,
    data_inputs,
    engine_module,
    read_model,
    reading_options,
    require_queries,
)
from twinrank.cli.evaluation.cost import add_exit_options, exits_from_args
from twinrank.reference.errors import DataFormatError, ModelFormatError, ParameterError


def add_parser(sub) -> None:
    p = sub.add_parser("predict", help="score data with a saved model",
                       description="Score LETOR data with a twinrank model; writes one score per line, "
                                   "aligned with the data rows. The data must have the model's number "
                                   "of features (the largest feature id in the file); a wider file is "
                                   "an error naming the line, a narrower one needs --allow-fewer-features.")
    p.add_argument("--model", required=True, help="model file (JSON, from either engine)")
    p.add_argument("--data", required=True, help="data to score (LETOR format, .gz ok)")
    p.add_argument("--output", default=STDOUT,
                   help="scores file to write (atomically); '-' for standard output (default: -)")
    p.add_argument("--trees", metavar="K|best",
                   help="score with the first K trees only, or 'best': the first best-iteration trees "
                        "(IGBRT: K boosted trees on its whole forest; McRank: K trees of every "
                        "classifier; a random forest averages its first K) (default: every tree)")
    p.add_argument("--contributions", action="store_true",
                   help="write each row's per-feature contributions instead of its score (exact path-dependent "
                        "TreeSHAP, LightGBM's pred_contrib): a line of n_features + 1 numbers, f1 ... fN and "
                        "then the base value, adding up to the row's score; for a model that is a sum of trees "
                        "(default: scores)")
    p.add_argument("--allow-fewer-features", action="store_true",
                   help="score a file whose largest feature id is below the model's width: the "
                        "features it lacks are read as 0.0, the format's absent-feature value (not "
                        "as missing values) (default: such a file is refused)")
    add_reading_options(p, labels=False)
    add_threads_option(p)
    add_exit_options(p)
    add_engine_option(p)
    add_accept_edited_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.fast.runtime._threads import threads
    from twinrank.reference.io.letor import contribution_lines, read_letor, write_contributions, write_scores
    from twinrank.reference.io.model import BagModel, McRankModel

    check_input(args.model, "--model")
    check_input(args.data, "--data")
    check_output(args.output, "--output")
    check_overwrites({"--output": args.output}, {"--model": args.model, **data_inputs("--data", args.data)})
    exits = exits_from_args(args)
    if args.contributions and exits is not None:
        raise ParameterError("--contributions explains the whole sum of trees; early exits (--exit-every) stop "
                             "it document by document: give one or the other")
    model = read_model(args)
    if isinstance(model, BagModel) and exits is not None:
        raise ParameterError(f"{args.model}: a BL-MART bag (bl-mart) is scored whole, its members' scores "
                             f"combined per query: no early exits")
    model = first_trees(model, args.trees)
    data = read_letor(args.data, n_features=model.n_features, max_label=None, **reading_options(args))
    if data.n_features_in_file < model.n_features and not args.allow_fewer_features:
        raise DataFormatError(args.data, None, f"has {data.n_features_in_file} features (its largest feature "
                                               f"id) but the model takes {model.n_features}; pass "
                                               "--allow-fewer-features to read the missing ones as 0.0")
    if args.contributions:
        contributions = engine_module(args.engine, "contributions").predict_contributions

        def predict(model, X):
            try:
                return contributions(model, X)
            except ModelFormatError as e:
                raise ModelFormatError(f"{args.model}: {e}") from None
    elif exits is not None:
        if isinstance(model, McRankModel):
            raise ParameterError(f"{args.model}: {model.described} ({model.algorithm}) scores by expected "
                                 "relevance over its classifiers, not by one sum of trees: no early exits")
        exit_scores = engine_module(args.engine, "exits").predict_exits

        def predict(model, X):
            return exit_scores(model, X, data.query_offsets, exits).scores
    elif isinstance(model, McRankModel):
        predict = engine_module(args.engine, "classification").expected_relevance
    elif isinstance(model, BagModel):
        require_queries(data, args.data, "--data", "a BL-MART bag combines its members' scores per query")

        def predict(model, X):
            return engine_module(args.engine, "bagging").bag_scores(model, X, data.query_offsets)
    else:
        predict = engine_module(args.engine, "predict").predict_ensemble
    with threads(args.threads):
        scores = predict(model, data.X)
    if args.output == STDOUT:
        sys.stdout.write(contribution_lines(scores) if args.contributions
                         else "".join(f"{s!r}\n" for s in scores.tolist()))
        where = "standard output"
    else:
        (write_contributions if args.contributions else write_scores)(args.output, scores)
        where = args.output
    what = f"contributions (f1 ... f{model.n_features}, then the base value)" if args.contributions else "scores"
    print(f"scored {data.n_rows} rows of {data.n_queries} queries; {what} written to {where}", file=sys.stderr)
    return 0


def first_trees(model, trees: str | None):
    """``model`` keeping its first ``trees`` trees (a count, or ``"best"``); None keeps it whole.

    A BL-MART bag is refused: its members are combined whole, and no count of trees is one
    model of it.
    """
    if trees is None:
        return model
    if hasattr(model, "members"):
        raise ParameterError(f"--trees {trees}: a BL-MART bag (bl-mart) is scored whole, its members' scores "
                             "combined per query; its members have no common first trees")
    if hasattr(model, "classifiers"):  # McRank: the same count of every classifier
        model.classifiers = [first_trees(c, trees) for c in model.classifiers]
        return model
    return model.truncated(_tree_count(model, trees))


def _why_no_best(model) -> str:
    """Why ``model`` records no best iteration, read off what it stored (algorithm, history, runs)."""
    history = model.history or {}
    if model.sizes_only:
        sizes = f"{model.snapshot_sizes} or " if model.snapshots else ""
        return (f"this {model.algorithm} model keeps none, since its first k trees were rescaled after they were "
                f"grown and are not its model of k trees; score at its sizes {sizes}{model.n_trees} "
                f"(--trees K), or train with --snapshot-sizes")
    if any(key.startswith("run") for key in history):
        return ("its runs (--average-runs > 1) each stopped at their own best iteration, so no one count of "
                "its trees is best")
    if not any(":" in key for key in history):
        return "it was trained without validation data (--valid)"
    return "it was trained without early stopping (--early-stopping N with --valid)"


def _tree_count(model, trees: str) -> int:
    if trees == "best":
        if model.best_iteration is None:
            raise ParameterError(f"--trees best: the model has no best iteration: {_why_no_best(model)}")
        return model.best_iteration
    try:
        k = int(trees)
    except ValueError:
        raise ParameterError(f"--trees takes a number of trees or 'best', got {trees!r}") from None
    if model.snapshots and k in model.snapshot_sizes:
        return k
    if model.sizes_only and k != model.n_trees:
        kept = f"its snapshot sizes {model.snapshot_sizes} and " if model.snapshots else ""
        raise ParameterError(f"--trees {k}: this {model.algorithm} model scores at {kept}its final size "
                             f"{model.n_trees} only: its first {k} trees were rescaled after they were grown; "
                             f"train with --snapshot-sizes {k} to keep its model of {k} trees")
    if not 1 <= k <= model.n_trees:
        raise ParameterError(f"--trees {k}: the model has {model.n_trees} trees; give 1 to {model.n_trees}")
    return k

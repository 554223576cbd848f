"""``twinrank train``: fit a ranker on a LETOR file and save it as a JSON model.

Each flag is generated from an estimator parameter and named after it
(``max_leaves`` -> ``--max-leaves``; today's short flags such as ``--leaves`` stay as
aliases), its type and help from the parameter's dataclass field
(:mod:`twinrank.reference.params`). A flag the user leaves out keeps the estimator's
default, and a flag the chosen algorithm does not take is an error rather than
silently ignored.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import os
import re
import sys

from twinrank._layout import twin_module
from twinrank.cli._common import (
    add_accept_edited_option,
    add_engine_option,
    add_reading_options,
    check_input,
    check_output,
    check_overwrites,
    data_inputs,
    engine_module,
    plain_text,
    read_model,
    reading_options,
    require_queries,
)
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.evaluation.metrics import CONVENTIONS, parse_metric

# --algorithm NAME -> (module, class)
ALGORITHMS = {"lambdamart": ("lambdamart", "LambdaMART"),
              "mcrank": ("classification", "McRank"),
              "cumulative-regression": ("classification", "CumulativeRegression"),
              "gbrt": ("gbrt", "GBRT"),
              "random-forest": ("forest", "RandomForest"),
              "igbrt": ("forest", "IGBRT"),
              "bl-mart": ("bagging", "BLMART"),
              "dart": ("dart", "DART"),
              "x-dart": ("dart", "XDART")}
LISTWISE = ("lambdamart", "dart", "x-dart")  # rankers that learn from pairs of one query's documents


def _weighting(text: str):
    """McRank's weighting: a name, or comma-separated numbers (one per label)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        return text


def _metric(text: str) -> str:
    """A metric name, checked now rather than when (or if) a validation set is scored."""
    try:
        parse_metric(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _pair(text: str) -> tuple:
    """``"0.1,5"`` -> (0.1, 5.0): a range such as ``--step-range``."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two numbers LO,HI such as 0.1,5, got {text!r}") from None
    return lo, hi


def _sizes(text: str) -> tuple:
    """``"100,200,300"`` -> (100, 200, 300): ``--snapshot-sizes``."""
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected tree counts such as 100,200,300, got {text!r}") from None


def _true_or_false(text: str) -> bool:
    choices = {"true": True, "false": False}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return choices[text.lower()]


# today's short flags, kept as aliases of the flags named after the parameters
ALIASES = {"n_trees": ["--trees"], "max_leaves": ["--leaves"],
           "early_stopping_rounds": ["--early-stopping"], "rf_n_trees": ["--rf-trees"],
           "rf_max_leaves": ["--rf-leaves"], "n_threads": ["--threads"]}
SWITCHES = ("eval_train", "low_memory")  # a bare flag giving True (left out: the default)


def flag(name: str) -> str:
    """The flag of an estimator parameter: ``max_leaves`` -> ``--max-leaves``."""
    return "--" + name.replace("_", "-")


def estimator_classes() -> dict:
    """``{algorithm: reference estimator class}`` (both twins share the signatures)."""
    return {algorithm: getattr(importlib.import_module(twin_module("reference", module)), name)
            for algorithm, (module, name) in ALGORITHMS.items()}


def parameters() -> dict:
    """``{parameter: {algorithm: default}}`` over every estimator's keyword parameters, in order."""
    table = {}
    for algorithm, cls in estimator_classes().items():
        for p in inspect.signature(cls.__init__).parameters.values():
            if p.kind == p.KEYWORD_ONLY:
                table.setdefault(p.name, {})[algorithm] = p.default
    return table


def field_of(name: str):
    """``(dataclass field, prefix)`` of the parameter ``name`` in the estimators' parameter objects."""
    for cls in estimator_classes().values():
        for entry in cls.param_objects:
            prefix, params_class = entry if isinstance(entry, tuple) else ("", entry)
            for f in dataclasses.fields(params_class):
                if prefix + f.name == name:
                    return f, params_class, prefix
    raise KeyError(name)


def _kind(name: str, annotation: str):
    """The argparse type of a parameter, from its dataclass field's annotation."""
    if name == "weighting":
        return _weighting
    if name == "metric":
        return _metric
    if name == "step_range":
        return _pair
    if name == "snapshot_sizes":
        return _sizes
    if "bool" in annotation:
        return _true_or_false
    if "int" in annotation and "float" in annotation:
        return _count_or_fraction
    return {"int": int, "float": float}.get(annotation.split(" ")[0], str)


def _help(name: str, params_class, prefix: str, defaults: dict) -> str:
    """The field's description in its dataclass docstring, then the defaults per algorithm."""
    text = _described(params_class).get(name[len(prefix):], "")
    if prefix == "rf_":
        text = f"IGBRT's forest: {text}"
    values = {}
    for algorithm, value in defaults.items():
        values.setdefault(repr(value), []).append(algorithm)
    shown = "; ".join(v if len(values) == 1 else f"{', '.join(a)}: {v}" for v, a in values.items())
    return f"{text} (default: {shown})".replace("%", "%%")


def _described(params_class) -> dict:
    """``{field: first sentence}`` from a numpy-style ``Parameters`` section."""
    found, name = {}, None
    for line in (params_class.__doc__ or "").splitlines():
        match = re.match(r"    (\w+) : ", line)
        if match:
            name = match.group(1)
            found[name] = ""
        elif name and line.startswith("        ") and not found[name].endswith("."):
            found[name] = (found[name] + " " + line.strip()).strip()
    return {k: re.split(r"(?<!e\.g\.)(?<=\.) ", plain_text(v))[0] for k, v in found.items()}


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a ranker and save the model",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Train a ranker on LETOR/SVMlight data and write the model as JSON. "
                                   "Every parameter of the chosen algorithm's estimator has a flag of "
                                   "its name (max_leaves: --max-leaves); flags left out keep the "
                                   "algorithm's defaults.")
    p.add_argument("--train", required=True, help="training data (LETOR format, .gz ok; a sibling "
                                                     "<file>.query group file is used)")
    p.add_argument("--sample-weight", metavar="FILE",
                   help="the training rows' weights, one number per line (LightGBM's <data>.weight): one per "
                        "row, or one per query given to each of its rows (default: every row weighs 1)")
    p.add_argument("--valid", help="validation data: metric history and early stopping (default: none)")
    p.add_argument("--model", required=True, help="where to write the model (JSON, written atomically; "
                                                     "its folder is checked before training)")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="lambdamart",
                   help="the ranker to train (default: lambdamart)")
    p.add_argument("--single-query", action="store_true",
                   help="accept data without query ids (no qid: and no group file) as one query of all "
                        "rows; only for the pointwise algorithms (gbrt, random-forest, igbrt, mcrank), "
                        "whose trees ignore queries (default: such data is refused)")
    groups = {}
    for name, defaults in parameters().items():
        field, params_class, prefix = field_of(name)
        title = "parameters of " + ", ".join(defaults)
        group = groups.get(title) or groups.setdefault(title, p.add_argument_group(title))
        flags = [flag(name), *ALIASES.get(name, [])]
        text = _help(name, params_class, prefix, defaults)
        if name in SWITCHES:
            group.add_argument(*flags, dest=name, action="store_true", default=None, help=text)
        else:
            choices = sorted(CONVENTIONS) if name == "convention" else None
            group.add_argument(*flags, dest=name, type=_kind(name, str(field.type)), choices=choices, help=text)
    p.add_argument("--quiet", action="store_true", help="no progress display (default: a line every 10 "
                                                         "trees on stderr, or a live line on a terminal)")
    add_reading_options(p)
    add_engine_option(p)
    add_accept_edited_option(p)
    p.set_defaults(run=run)


def _count_or_fraction(text: str):
    """A count, a fraction, or a percent ``p%`` (kept as the string; the parameter object checks it)."""
    if text.endswith("%"):
        return text
    value = float(text)
    return int(value) if value >= 1 and value.is_integer() else value


def estimator_from_args(args):
    """The chosen algorithm's estimator with the flags the user gave."""
    module, name = ALGORITHMS[args.algorithm]
    cls = getattr(engine_module(args.engine, module), name)
    accepted = set(cls._param_names())
    given = {name: getattr(args, name) for name in parameters() if getattr(args, name) is not None}
    unknown = sorted(flag(name) for name in given if name not in accepted)
    if unknown:
        raise ParameterError(f"--algorithm {args.algorithm} does not take {', '.join(unknown)}")
    return cls(**given)


def progress_of(est, convention):
    """The progress display of ``est.fit``: trees, or X-DART's iterations, said once why there are more."""
    from twinrank.cli._progress import Progress  # imports the fast runtime: only when training

    total = planned_trees(est)
    if not getattr(est, "prune", False):
        return Progress(total, convention=convention)
    print(f"x-dart: up to {total} iterations for {est.n_trees} trees (an iteration adds a tree or prunes "
          "the dropped ones; max_iterations caps them)", file=sys.stderr)
    return Progress(total, convention=convention, unit="iterations")


def planned_trees(est) -> int:
    """The most trees ``est.fit`` grows: more than ``n_trees`` for averaged runs and IGBRT."""
    planned = getattr(est, "planned_trees", None)
    return est.n_trees if planned is None else planned()


def run(args) -> int:
    from twinrank.reference.io.letor import read_letor

    est = estimator_from_args(args)
    _check_files(args, est)
    if getattr(args, "init_model", None) is not None:  # read (and refused) before any data
        est.set_params(init_model=read_model(args, args.init_model))
    train = _read(read_letor, args, args.train, "--train")
    if args.sample_weight is not None:
        train = weighted(train, args.sample_weight)
    else:
        note_unread_weights(args.train)
    valid = _read(read_letor, args, args.valid, "--valid", n_features=train.n_features) if args.valid else None
    convention = getattr(est, "convention", None)
    if args.algorithm == "bl-mart":
        members = MemberProgress(est.n_models, quiet=args.quiet)
        with interrupted(f"after {{}} of {est.n_models} members; no model written", members):
            est.fit(train, eval_set=[valid] if valid is not None else None, callback=members)
        summary = f"trained {est.n_models} members ({est.model_.n_trees} trees kept in all)"
    else:
        counter = TreeCounter(None if args.quiet else progress_of(est, convention))
        with interrupted(f"after {{}} of {planned_trees(est)} trees; no model written", counter):
            est.fit(train, eval_set=[valid] if valid is not None else None, callback=counter)
        counter.close()
        summary = trained_summary(est.model_, counter.grown, convention)
    est.save(args.model)
    print(f"{summary}; model written to {args.model}", file=sys.stderr)
    return 0


def _check_files(args, est) -> None:
    """Every file named on the command line, checked before the data are read or a tree grown;
    ``--valid`` by the estimator's own rule (``needs_validation``)."""
    check_input(args.train, "--train")
    check_input(args.valid, "--valid")
    check_input(args.sample_weight, "--sample-weight")
    check_output(args.model, "--model")
    check_overwrites({"--model": args.model},
                     {**data_inputs("--train", args.train), **data_inputs("--valid", args.valid),
                      "--sample-weight": args.sample_weight,
                      "--init-model": getattr(args, "init_model", None),
                      "--feature-costs": getattr(args, "feature_costs", None)})
    needs = est.needs_validation(est.validated_params())
    if needs and not args.valid:
        raise ParameterError(f"{needs[0]} needs --valid: it reads the validation data while training")
    if args.single_query and args.algorithm in LISTWISE:
        raise ParameterError(f"--single-query is for the pointwise algorithms: {args.algorithm} learns from "
                             "pairs of documents of the same query")


def _read(read_letor, args, path, option: str, **kwargs):
    data = read_letor(path, **reading_options(args), **kwargs)
    if data.n_features == 0:
        raise DataFormatError(path, None, f"no row has a feature ({data.n_rows} rows of labels and query ids "
                                          f"only): a ranker has nothing to learn from (file given as {option})")
    if not args.single_query:
        why = (f"{args.algorithm} learns from pairs of documents of the same query" if args.algorithm in LISTWISE
               else "give query ids, or --single-query to train on all rows as one query")
        require_queries(data, path, option, why)
    return data


def weighted(train, path):
    """``train`` with the weights of the file ``path`` (:func:`~twinrank.reference.io.letor.read_weights`):
    one per row, or one per query repeated over its rows."""
    from twinrank.reference.io.letor import read_weights
    from twinrank.reference.rankers._fit_data import row_weights

    weights = read_weights(path, train.n_rows, train.n_queries)
    return dataclasses.replace(train, weight=row_weights(weights, train.query_sizes))


def note_unread_weights(path) -> None:
    """Say so when LightGBM's weight file lies next to the training data: LightGBM would read it,
    twinrank reads only the file ``--sample-weight`` names."""
    sibling = f"{path}.weight"
    if os.path.isfile(sibling):
        print(f"note: {sibling} is not read (twinrank reads weights only from --sample-weight FILE); "
              "every row weighs 1", file=sys.stderr)


@contextlib.contextmanager
def interrupted(message: str, counter):
    """Ctrl-C in the block: the progress line ended, then ``KeyboardInterrupt(message)`` with
    ``{}`` the count done so far (the command line prints it as its one line)."""
    try:
        yield
    except KeyboardInterrupt:
        counter.close()
        raise KeyboardInterrupt(message.format(counter.done)) from None


class TreeCounter:
    """The fit's callback: counts the trees grown and passes each record on to the progress display."""

    def __init__(self, progress=None):
        self.progress, self.grown = progress, 0

    @property
    def done(self) -> int:
        return self.grown

    def __call__(self, iteration: int, record: dict) -> None:
        self.grown += 1
        if self.progress is not None:
            self.progress(iteration, record)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()


class MemberProgress:
    """BL-MART's callback: one line per finished member (its trees and validation metric)."""

    def __init__(self, n_models: int, quiet: bool = False):
        self.n_models, self.done, self.quiet = n_models, 0, quiet

    def __call__(self, member: int, row: dict) -> None:
        self.done += 1
        if self.quiet:
            return
        metric = next((f", {k} {v:.4f}" for k, v in row.items() if k.startswith("valid:")
                       and v == v), "")
        print(f"member {self.done}/{self.n_models} (#{member}): {row['n_trees']} trees{metric}", file=sys.stderr)

    def close(self) -> None:
        pass


def total_trees(model) -> int:
    """Every tree a model holds: its own, its prior model's (IGBRT's forest) and McRank's classifiers'."""
    if hasattr(model, "classifiers"):
        return sum(total_trees(c) for c in model.classifiers)
    return model.n_trees + (0 if model.init_model is None else total_trees(model.init_model))


def trained_summary(model, grown: int, convention: str | None = None) -> str:
    """``trained 20 trees; the model keeps the first 15 (best iteration 15: valid:ndcg@10 0.6123, lightgbm convention)``."""
    if getattr(model, "snapshots", None) or model.algorithm in ("dart", "x-dart"):
        return dart_summary(model, grown)
    kept = total_trees(model)
    prior = 0 if getattr(model, "init_model", None) is None else total_trees(model.init_model)
    text = f"trained {grown} trees" + (f" ({prior} in the starting forest, {grown - prior} boosted)" if prior else "")
    if kept == grown:
        text += f"; the model keeps all {kept}"
    elif prior:
        text += f"; the model keeps the forest and the first {kept - prior} boosted trees"
    elif (getattr(model, "params", None) or {}).get("average_runs", 1) > 1:
        text += f"; the model keeps {kept} of them (each run's trees up to its own stopping point)"
    else:
        text += f"; the model keeps the first {kept}"
    if model.best_iteration is not None:
        key = next((k for k in model.history if k.startswith("valid:")), None)
        value = f": {key} {model.history[key][model.best_iteration - 1]:.4f}" if key else ""
        value += f", {convention} convention" if key and convention else ""
        text += f" (best iteration {model.best_iteration}{value})"
    return text


def dart_summary(model, iterations: int) -> str:
    """``ran 212 iterations (41 pruned the dropped trees, 160 kept them rescaled by DART's normalisation);
    the model has 150 trees; snapshots at [50, 100]``."""
    branches = model.history.get("branch", [])
    text = (f"ran {iterations} iterations ({branches.count('prune')} pruned the dropped trees, "
            f"{branches.count('normalize')} kept them rescaled by DART's normalisation); "
            f"the model has {model.n_trees} trees")
    if model.n_trees < model.params.get("n_trees", model.n_trees):
        text += " (the iteration cap came first)"
    return text + (f"; snapshots at sizes {model.snapshot_sizes}" if model.snapshots else "")

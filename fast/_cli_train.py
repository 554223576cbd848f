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
import dataclasses
import importlib
import inspect
import re
import sys

from twinrank.reference.errors import ParameterError

from ._cli_common import add_engine_option, engine_module

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


# today's short flags, kept as aliases of the flags named after the parameters
ALIASES = {"n_trees": ["--trees"], "max_leaves": ["--leaves"],
           "early_stopping_rounds": ["--early-stopping"], "rf_n_trees": ["--rf-trees"],
           "rf_max_leaves": ["--rf-leaves"], "n_threads": ["--threads"]}
SWITCHES = ("eval_train",)  # a bare flag giving True (left out: the default)


def flag(name: str) -> str:
    """The flag of an estimator parameter: ``max_leaves`` -> ``--max-leaves``."""
    return "--" + name.replace("_", "-")


def estimator_classes() -> dict:
    """``{algorithm: reference estimator class}`` (both twins share the signatures)."""
    return {algorithm: getattr(importlib.import_module(f"twinrank.reference.{module}"), name)
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
    plain = {k: re.sub(r":\w+:`~?([^`]+)`", r"\1", v).replace("``", "").replace("\\,", " ")
             .replace("\\", "").replace("$", "") for k, v in found.items()}
    return {k: re.split(r"(?<!e\.g\.)(?<=\.) ", v)[0] for k, v in plain.items()}


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a ranker and save the model",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Train a ranker on LETOR/SVMlight data and write the model as JSON. "
                                   "Every parameter of the chosen algorithm's estimator has a flag of "
                                   "its name (max_leaves: --max-leaves); flags left out keep the "
                                   "algorithm's defaults.")
    p.add_argument("--train", required=True, help="training data (LETOR format, .gz ok)")
    p.add_argument("--valid", help="validation data: metric history and early stopping")
    p.add_argument("--model", required=True, help="where to write the model (JSON, written atomically)")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="lambdamart")
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
            group.add_argument(*flags, dest=name, type=_kind(name, str(field.type)), help=text)
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
    given = {name: getattr(args, name) for name in parameters() if getattr(args, name) is not None}
    unknown = sorted(flag(name) for name in given if name not in accepted)
    if unknown:
        raise ParameterError(f"--algorithm {args.algorithm} does not take {', '.join(unknown)}")
    return cls(**given)


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

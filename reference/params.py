r"""Parameter objects shared by both twins, with their validation.

A parameter object is plain data: the twins read the same object, so the same
parameters mean the same thing in ``reference`` and ``fast``. Every estimator
parameter is, by name, one field of one of these dataclasses (``rf_<field>`` for an
IGBRT's forest): :func:`from_names` builds a dataclass from an estimator's
parameters, and its ``__post_init__`` validates them, once, before any data work.
A field's default is the library's default, written once here: the estimators'
signatures read it (``max_leaves=TreeParams.max_leaves``).

This module is the one public path of every parameter object; they are written in
private modules, one idea each: ``_tree_params`` (one tree, the boosting loop),
``_algorithm_params`` (one algorithm each) and ``_param_checks`` (the argument checks).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

from twinrank.reference._algorithm_params import (
    BAG_RULES,
    TARGET_DEPTH,
    TARGETS,
    WEIGHTINGS,
    AveragingParams,
    BaggingParams,
    CostParams,
    ForestParams,
    LambdaRankParams,
    McRankParams,
    parse_target,
)
from twinrank.reference._dart_params import DROP_STRATEGIES, DARTParams
from twinrank.reference._param_checks import (
    check_bool,
    check_fraction,
    check_int,
    check_min_samples_leaf,
    check_n_threads,
    check_real,
    check_sigma,
)
from twinrank.reference._tree_params import MISSING_SPLITS, BoostParams, TreeParams
from twinrank.reference.errors import ParameterError

__all__ = ["MISSING_SPLITS", "TreeParams", "check_int", "check_real", "check_fraction", "check_sigma",
           "check_min_samples_leaf", "BoostParams", "ForestParams", "TARGETS", "TARGET_DEPTH", "LambdaRankParams",
           "parse_target", "MISSING_STRATEGIES", "FitParams", "AveragingParams", "WEIGHTINGS",
           "McRankParams", "CostParams", "BaggingParams", "BAG_RULES", "DARTParams", "DROP_STRATEGIES", "check_bool",
           "from_names", "field_names", "missing_split"]


MISSING_STRATEGIES = ("learn", "separate", "zero", "one", "mean", "median", "iterative")


@dataclass(frozen=True)
class FitParams:
    """What a fit does besides growing trees: missing values, prior model, threads, memory, progress.

    Parameters
    ----------
    missing : str
        Missing-value strategy, one of ``MISSING_STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`).
    init_model : None, str, path, Ensemble or fitted estimator
        A prior model the boosting starts from (LambdaSMART, IGBRT's forest).
    n_threads : int or None
        Threads of the fast twin: a positive count (capped at the cores numba was started
        with), or None or -1 for all cores; 0 and other negatives are refused. The reference
        ignores it.
    low_memory : bool
        The fast twin keeps the bins in one layout, column order, without their row-order
        copy (one byte a row and feature less, about a third of a fit's memory on wide
        data), and sums every node's histogram from the columns: the same sums in the same
        order, so the same model bit for bit, at more time per tree (the small nodes' rows
        are read scattered over the columns). Off by default. The reference ignores it.
    verbose : int
        Print one line per ``verbose`` rounds to stderr (0: silent).
    """

    missing: str = "learn"
    init_model: object = None
    n_threads: int | None = None
    low_memory: bool = False
    verbose: int = 0

    def __post_init__(self):
        if self.missing not in MISSING_STRATEGIES:
            raise ParameterError(f"missing must be one of {', '.join(MISSING_STRATEGIES)}; "
                                 f"got {self.missing!r}")
        check_n_threads("n_threads", self.n_threads)
        check_bool("low_memory", self.low_memory)
        check_int("verbose", self.verbose, low=0)
        if isinstance(self.init_model, (bool, numbers.Number)):
            raise ParameterError(f"init_model must be a model, a fitted estimator or a model file, "
                                 f"got {self.init_model!r}")

    @property
    def missing_split(self) -> str:
        """``TreeParams.missing_split`` of the strategy (:func:`missing_split`)."""
        return missing_split(self.missing)


def missing_split(missing: str) -> str:
    """``TreeParams.missing_split`` of a missing-value strategy: three-way splits for ``"separate"``."""
    return "separate" if missing == "separate" else "learn"



def from_names(cls, values: dict, prefix: str = "", **fixed):
    """The dataclass ``cls`` from the entries ``prefix + field`` of ``values`` (and ``fixed``).

    This is the one mapping from an estimator's parameters to its parameter objects:
    a parameter named like a field (after ``prefix``) sets that field; ``fixed`` sets
    fields the estimator does not expose. Validation is ``cls``'s own.
    """
    kwargs = {f.name: values[prefix + f.name] for f in fields(cls) if f.init and prefix + f.name in values}
    return cls(**{**kwargs, **fixed})


def field_names(cls) -> list[str]:
    """The field names of the dataclass ``cls``, nested parameter objects and derived fields excluded."""
    return [f.name for f in fields(cls) if f.name != "tree" and f.init]

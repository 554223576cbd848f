"""Numba-parallel twin of `twinrank.reference.rankers.missing`: the same strategies, fitted and scored by fast kernels.

The imputation loop is the reference's :func:`twinrank.reference.rankers.missing.run_fit`,
run on the engine :data:`twinrank.fast.engine.FAST`; the iterative strategy's
imputers are grown by the fast grower and scored by the fast
:func:`~twinrank.fast.trees.predict.predict_ensemble`.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers.missing import (
    IMPUTER,
    ITERATIVE_ROUNDS,
    MissingValues,
    SPLIT_STRATEGIES,
    STRATEGIES,
    check_strategy,
    fill_values,
    run_fit,
)

__all__ = ["MissingValues", "fit_missing", "run_fit", "fill_values", "check_strategy", "STRATEGIES",
           "SPLIT_STRATEGIES", "ITERATIVE_ROUNDS", "IMPUTER"]


def fit_missing(X, strategy: str = "learn") -> MissingValues:
    """Numba-parallel twin of `twinrank.reference.rankers.missing.fit_missing` (imputers on the fast grower)."""
    return run_fit(FAST, X, strategy)

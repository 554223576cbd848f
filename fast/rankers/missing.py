"""Numba-parallel twin of `twinrank.reference.rankers.missing`: the same strategies, fitted and scored by fast kernels.

The imputation loop is the reference's :func:`twinrank.reference.rankers.missing.run_fit`,
run on the engine :data:`twinrank.fast.engine.FAST`: Algorithm 2's (``"iterative"``)
random forests are grown by the fast grower through the shared forest loop and scored by
the fast :func:`~twinrank.fast.trees.predict.predict_ensemble`.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers.missing import (
    IMPUTER,
    IMPUTER_ALGORITHM,
    ITERATIVE_MAX_ROUNDS,
    ITERATIVE_TOL,
    SPLIT_STRATEGIES,
    STRATEGIES,
    MissingValues,
    check_strategy,
    fill_values,
    run_fit,
)

__all__ = ["MissingValues", "fit_missing", "run_fit", "fill_values", "check_strategy", "STRATEGIES",
           "SPLIT_STRATEGIES", "ITERATIVE_TOL", "ITERATIVE_MAX_ROUNDS", "IMPUTER", "IMPUTER_ALGORITHM"]


def fit_missing(X, strategy: str = "learn", *, tol: float = ITERATIVE_TOL,
                max_rounds: int = ITERATIVE_MAX_ROUNDS) -> MissingValues:
    """Numba-parallel twin of `twinrank.reference.rankers.missing.fit_missing` (forests on the fast grower)."""
    return run_fit(FAST, X, strategy, tol=tol, max_rounds=max_rounds)

"""Numba-parallel twin of `twinrank.reference.missing`: the same strategies, fitted on the fast kernels.

:class:`MissingValues` (and its ``transform``) is plain NumPy preprocessing stored
in the model, re-exported from the reference. Only the iterative strategy's
imputers are grown here, by the fast grower (``boosting.KERNELS``).
"""
from __future__ import annotations

from twinrank.reference.missing import (IMPUTER, ITERATIVE_ROUNDS, SPLIT_STRATEGIES, STRATEGIES,
                                        MissingValues, check_strategy, fill_values, run_fit)

from . import boosting

__all__ = ["MissingValues", "fit_missing", "fill_values", "check_strategy", "STRATEGIES", "SPLIT_STRATEGIES",
           "ITERATIVE_ROUNDS", "IMPUTER"]


def fit_missing(X, strategy: str = "learn") -> MissingValues:
    """Numba-parallel twin of `twinrank.reference.missing.fit_missing` (imputers on the fast grower)."""
    return run_fit(boosting.KERNELS, X, strategy)

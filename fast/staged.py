"""Numba-parallel twin of `twinrank.reference.staged`: the same running sums on the fast kernels.

Each tree's predictions come from the fast :func:`~twinrank.fast.predict.predict_ensemble`
(parallel over rows), added in the reference's order, so the staged scores equal the
reference's and ``predict(X, n_trees=m)`` bit for bit.
"""
from __future__ import annotations

from twinrank.reference.conventions import DEFAULT_CONVENTION
from twinrank.reference.staged import run_staged, run_staged_metrics

from .engine import FAST

__all__ = ["staged_scores", "staged_metrics", "run_staged", "run_staged_metrics"]


def staged_scores(model, X, *, every: int = 1, sizes=None):
    """Numba-parallel twin of `twinrank.reference.staged.staged_scores`."""
    return run_staged(FAST, model, X, every=every, sizes=sizes)


def staged_metrics(model, data, metrics="ndcg@10", *, convention=DEFAULT_CONVENTION, every: int = 1,
                   sizes=None) -> dict:
    """Numba-parallel twin of `twinrank.reference.staged.staged_metrics`."""
    return run_staged_metrics(FAST, model, data, metrics, convention=convention, every=every, sizes=sizes)

"""Numba-parallel twin of `twinrank.reference.analysis.staged`: the same running sums on the fast kernels.

Each tree's predictions come from the fast :func:`~twinrank.fast.trees.predict.predict_ensemble`
(parallel over rows), added in the reference's order, so the staged scores equal the
reference's and ``predict(X, n_trees=m)`` bit for bit.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.analysis.staged import run_staged, run_staged_metrics
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION

__all__ = ["staged_scores", "staged_metrics", "run_staged", "run_staged_metrics"]


def staged_scores(model, X, *, every: int = 1, sizes=None):
    """Numba-parallel twin of `twinrank.reference.analysis.staged.staged_scores`."""
    return run_staged(FAST, model, X, every=every, sizes=sizes)


def staged_metrics(model, data, metrics="ndcg@10", *, convention=DEFAULT_CONVENTION, every: int = 1,
                   sizes=None) -> dict:
    """Numba-parallel twin of `twinrank.reference.analysis.staged.staged_metrics`."""
    return run_staged_metrics(FAST, model, data, metrics, convention=convention, every=every, sizes=sizes)

"""Numba-parallel twin of `twinrank.reference.reweight`: the same loops on the engine ``FAST``."""
from __future__ import annotations

from twinrank.reference.conventions import DEFAULT_CONVENTION
from twinrank.reference.reweight import run_interpolate, run_refit

from .engine import FAST

__all__ = ["refit_weights", "interpolate"]


def refit_weights(model, data, *, sweeps=1, weight_range=(0.0, 5.0), metric="ndcg@10",
                  convention=DEFAULT_CONVENTION, ties="expected"):
    """Numba-parallel twin of `twinrank.reference.reweight.refit_weights`."""
    return run_refit(FAST, model, data, sweeps=sweeps, weight_range=weight_range, metric=metric,
                     convention=convention, ties=ties)


def interpolate(model_a, model_b, valid, *, alpha_range=(0.0, 1.0), metric="ndcg@10",
                convention=DEFAULT_CONVENTION, ties="expected"):
    """Numba-parallel twin of `twinrank.reference.reweight.interpolate`."""
    return run_interpolate(FAST, model_a, model_b, valid, alpha_range=alpha_range, metric=metric,
                           convention=convention, ties=ties)

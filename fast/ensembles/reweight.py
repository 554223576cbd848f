"""Numba-parallel twin of `twinrank.reference.ensembles.reweight`: the same loops on the engine ``FAST``."""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.ensembles.reweight import run_interpolate, run_refit
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION

__all__ = ["refit_weights", "interpolate"]


def refit_weights(model, data, *, sweeps=1, weight_range=(0.0, 5.0), metric="ndcg@10",
                  convention=DEFAULT_CONVENTION, ties="expected"):
    """Numba-parallel twin of `twinrank.reference.ensembles.reweight.refit_weights`."""
    return run_refit(FAST, model, data, sweeps=sweeps, weight_range=weight_range, metric=metric,
                     convention=convention, ties=ties)


def interpolate(model_a, model_b, valid, *, alpha_range=(0.0, 1.0), metric="ndcg@10",
                convention=DEFAULT_CONVENTION, ties="expected"):
    """Numba-parallel twin of `twinrank.reference.ensembles.reweight.interpolate`."""
    return run_interpolate(FAST, model_a, model_b, valid, alpha_range=alpha_range, metric=metric,
                           convention=convention, ties=ties)

"""Numba twin of `twinrank.reference.analysis.diagnostics`: the same experiment, decomposed on the engine ``FAST``.

The training sets, the runs and the averaging over repeats are the reference's
(:func:`~twinrank.reference.analysis.diagnostics.run_bias_variance`); the decomposition is the fast
twin's (:mod:`twinrank.fast.evaluation.variance`).
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.fast.evaluation.variance import decompose, has_relevant, listwise, pointwise, ranking_terms
from twinrank.reference.analysis.diagnostics import (
    BOOTSTRAP_FRACTION,
    LISTWISE_METRICS,
    METHODS,
    NUMBERS,
    BiasVariance,
    Decomposition,
    draw_training_sets,
    mean_decomposition,
    run_bias_variance,
    run_sweep,
)
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.io.data import Dataset

__all__ = ["Decomposition", "BiasVariance", "bias_variance", "sweep", "run_bias_variance", "run_sweep",
           "draw_training_sets", "mean_decomposition", "decompose", "pointwise", "listwise", "ranking_terms",
           "has_relevant", "METHODS", "LISTWISE_METRICS", "NUMBERS", "BOOTSTRAP_FRACTION"]


def bias_variance(make_model, train: Dataset, test: Dataset, *, method: str = "bootstrap", n_models: int = 10,
                  n_repeats: int = 5, fraction: float = BOOTSTRAP_FRACTION, metric: str = "ndcg",
                  convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
                  include_no_relevant: bool = False, pooled: bool = False, params: dict | None = None,
                  progress=None) -> BiasVariance:
    """Numba twin of `twinrank.reference.analysis.diagnostics.bias_variance` (the models are ``make_model``'s twin)."""
    return run_bias_variance(FAST, make_model, train, test, [{}], method=method, n_models=n_models,
                             n_repeats=n_repeats, fraction=fraction, metric=metric, convention=convention,
                             ddof=ddof, seed=seed, executor=executor, include_no_relevant=include_no_relevant,
                             pooled=pooled, params=params, progress=progress)[0]


def sweep(make_model, train: Dataset, test: Dataset, name: str, values, *, method: str = "bootstrap",
          n_models: int = 10, n_repeats: int = 5, fraction: float = BOOTSTRAP_FRACTION, metric: str = "ndcg",
          convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
          include_no_relevant: bool = False, pooled: bool = False, params: dict | None = None,
          progress=None) -> list[BiasVariance]:
    """Numba twin of `twinrank.reference.analysis.diagnostics.sweep`."""
    return run_sweep(FAST, make_model, train, test, name, values, method=method, n_models=n_models,
                     n_repeats=n_repeats, fraction=fraction, metric=metric, convention=convention, ddof=ddof,
                     seed=seed, executor=executor, include_no_relevant=include_no_relevant, pooled=pooled,
                     params=params, progress=progress)

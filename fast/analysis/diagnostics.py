"""Numba twin of `twinrank.reference.analysis.diagnostics`: the same terms from the same score matrix.

The result types, the checks, the training sets and the experiment (training through
the runs layer) are the reference's; what is compiled is the arithmetic over the
score matrix (``_diagnostics_kernels``) and the ranking of every model's scores,
which is the fast twin's NDCG (``twinrank.fast.evaluation.metrics``). The sums run over models
in model order as the reference's, so the mean scores, and with them the rankings of
tied documents, are the reference's bit for bit.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.analysis import _diagnostics_kernels as kernels
from twinrank.fast.evaluation.metrics import metric_by_name
from twinrank.reference.analysis.diagnostics import (
    METHODS,
    LISTWISE_METRICS,
    NUMBERS,
    BiasVariance,
    Decomposition,
    _assemble,
    _check_matrix,
    _check_metric,
    _experiment,
    draw_training_sets,
    has_relevant,
)
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.io.data import Dataset

__all__ = ["Decomposition", "BiasVariance", "pointwise", "listwise", "ranking_terms", "decompose",
           "has_relevant", "bias_variance", "sweep", "draw_training_sets", "METHODS", "LISTWISE_METRICS", "NUMBERS"]


def _means(P) -> np.ndarray:
    mean = np.empty(P.shape[1])
    kernels.column_means(P, mean)
    return mean


def pointwise(P, y, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numba twin of `twinrank.reference.analysis.diagnostics.pointwise`."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    bias2, variance, mse = np.empty(len(y)), np.empty(len(y)), np.empty(len(y))
    kernels.pointwise_kernel(P, y, int(ddof), _means(P), bias2, variance, mse)
    return bias2, variance, mse


def ranking_terms(model_values: np.ndarray, mean_values: np.ndarray, *, ddof: int = 1) -> tuple:
    """Numba twin of `twinrank.reference.analysis.diagnostics.ranking_terms`."""
    model_values = np.ascontiguousarray(model_values, dtype=np.float64)
    out = tuple(np.empty(model_values.shape[1]) for _ in range(4))
    kernels.ranking_terms_kernel(model_values, np.ascontiguousarray(mean_values, dtype=np.float64), int(ddof),
                                 *out)
    return out


def listwise(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION,
             ddof: int = 1) -> tuple:
    """Numba twin of `twinrank.reference.analysis.diagnostics.listwise` (the fast twin's NDCG)."""
    P, y, query_offsets = _check_matrix(P, y, query_offsets, ddof)
    P = np.ascontiguousarray(P)
    score = metric_by_name(_check_metric(metric))
    model_values = np.stack([score(y, P[b], query_offsets, convention=convention) for b in range(P.shape[0])])
    return ranking_terms(model_values, score(y, _means(P), query_offsets, convention=convention), ddof=ddof)


def decompose(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION, ddof: int = 1,
              include_no_relevant: bool = False) -> Decomposition:
    """Numba twin of `twinrank.reference.analysis.diagnostics.decompose`."""
    P, y, query_offsets = _check_matrix(P, y, query_offsets, ddof)
    return _assemble(pointwise(P, y, ddof=ddof),
                     listwise(P, y, query_offsets, metric=metric, convention=convention, ddof=ddof),
                     has_relevant(y, query_offsets, convention=convention), include_no_relevant)


def bias_variance(make_model, train: Dataset, test: Dataset, *, method: str = "bootstrap", n_models: int = 10,
                  n_repeats: int = 5, fraction: float = 0.5, metric: str = "ndcg",
                  convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
                  include_no_relevant: bool = False, params: dict | None = None, progress=None) -> BiasVariance:
    """Numba twin of `twinrank.reference.analysis.diagnostics.bias_variance` (the models are ``make_model``'s twin)."""
    return _experiment(decompose, make_model, train, test, [{}], method=method, n_models=n_models,
                       n_repeats=n_repeats, fraction=fraction, metric=metric, convention=convention, ddof=ddof,
                       seed=seed, executor=executor, include_no_relevant=include_no_relevant, fixed=params,
                       progress=progress)[0]


def sweep(make_model, train: Dataset, test: Dataset, name: str, values, *, method: str = "bootstrap",
          n_models: int = 10, n_repeats: int = 5, fraction: float = 0.5, metric: str = "ndcg",
          convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
          include_no_relevant: bool = False, params: dict | None = None, progress=None) -> list[BiasVariance]:
    """Numba twin of `twinrank.reference.analysis.diagnostics.sweep`."""
    values = list(values)
    if not values:
        raise ParameterError(f"sweep over {name!r}: give at least one value")
    return _experiment(decompose, make_model, train, test, [{name: v} for v in values], method=method,
                       n_models=n_models, n_repeats=n_repeats, fraction=fraction, metric=metric,
                       convention=convention, ddof=ddof, seed=seed, executor=executor,
                       include_no_relevant=include_no_relevant, fixed=params, progress=progress)

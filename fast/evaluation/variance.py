"""Numba twin of `twinrank.reference.evaluation.variance`: the same terms from the same score matrix.

The result type and the checks are the reference's; what is compiled is the arithmetic
over the score matrix (``_variance_kernels``) and the ranking of every model's scores,
which is the fast twin's NDCG (``twinrank.fast.evaluation.metrics``). The sums run over
models in model order as the reference's, so the mean scores, and with them the rankings
of tied documents, are the reference's bit for bit.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.evaluation import _variance_kernels as kernels
from twinrank.fast.evaluation.metrics import metric_by_name
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.evaluation.variance import (
    LISTWISE_METRICS,
    NUMBERS,
    Decomposition,
    assemble,
    check_listwise_metric,
    check_score_matrix,
    has_relevant,
)

__all__ = ["Decomposition", "pointwise", "listwise", "ranking_terms", "decompose", "has_relevant",
           "check_score_matrix", "check_listwise_metric", "assemble", "LISTWISE_METRICS", "NUMBERS"]


def _means(P) -> np.ndarray:
    mean = np.empty(P.shape[1])
    kernels.column_means(P, mean)
    return mean


def pointwise(P, y, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numba twin of `twinrank.reference.evaluation.variance.pointwise`."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    bias2, variance, mse = np.empty(len(y)), np.empty(len(y)), np.empty(len(y))
    kernels.pointwise_kernel(P, y, int(ddof), _means(P), bias2, variance, mse)
    return bias2, variance, mse


def ranking_terms(model_values: np.ndarray, mean_values: np.ndarray, *, ddof: int = 1) -> tuple:
    """Numba twin of `twinrank.reference.evaluation.variance.ranking_terms`."""
    model_values = np.ascontiguousarray(model_values, dtype=np.float64)
    out = tuple(np.empty(model_values.shape[1]) for _ in range(4))
    kernels.ranking_terms_kernel(model_values, np.ascontiguousarray(mean_values, dtype=np.float64), int(ddof),
                                 *out)
    return out


def listwise(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION,
             ddof: int = 1) -> tuple:
    """Numba twin of `twinrank.reference.evaluation.variance.listwise` (the fast twin's NDCG)."""
    P, y, query_offsets = check_score_matrix(P, y, query_offsets, ddof)
    P = np.ascontiguousarray(P)
    score = metric_by_name(check_listwise_metric(metric))
    model_values = np.stack([score(y, P[b], query_offsets, convention=convention) for b in range(P.shape[0])])
    return ranking_terms(model_values, score(y, _means(P), query_offsets, convention=convention), ddof=ddof)


def decompose(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION, ddof: int = 1,
              include_no_relevant: bool = False) -> Decomposition:
    """Numba twin of `twinrank.reference.evaluation.variance.decompose`."""
    P, y, query_offsets = check_score_matrix(P, y, query_offsets, ddof)
    return assemble(pointwise(P, y, ddof=ddof),
                    listwise(P, y, query_offsets, metric=metric, convention=convention, ddof=ddof),
                    has_relevant(y, query_offsets, convention=convention), include_no_relevant)

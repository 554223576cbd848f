"""Numba-parallel twin of `twinrank.reference.metrics`: the same metrics, one thread per query.

Shared with the reference (defined once there, in ``twinrank.reference.conventions``
and ``twinrank.reference.metric_names``, and re-exported here as the reference's
metrics re-exports them): :class:`Convention`, :data:`CONVENTIONS`, input checks
(``prepare``), the convention's gains, discounts, relevance and ERR grades (computed
once per call with NumPy and handed to the kernels), metric names and
:func:`evaluate`'s averaging. What differs is how rows are ranked and summed: a
per-query merge sort (``_ranking``) and a ``prange`` over queries
(``_graded_kernels``, ``_binary_kernels``), O(n log n) time and no ``(n_queries, largest query)`` matrix.
Inputs of fewer than :data:`PARALLEL_MIN_ROWS` rows run the same kernels as a plain
loop, because starting threads costs more than scoring a small validation set.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.conventions import (
    CONVENTIONS, DEFAULT_CONVENTION, Convention, Prepared, check_k, discount, doc_ids_from_comments, err_grades,
    gain, get_convention, prepare, relevant, resolve_ties,
)
from twinrank.reference.errors import ParameterError
from twinrank.reference.metric_names import Metric, _evaluate, _metric_from, parse_metric

from . import _binary_kernels as binary
from . import _graded_kernels as graded
from ._ranking import ranked_rows

PARALLEL_MIN_ROWS = 20_000  # below this many rows the kernels loop over queries on one thread

__all__ = [
    "Convention", "CONVENTIONS", "DEFAULT_CONVENTION", "Metric", "Prepared", "get_convention", "gain", "discount",
    "relevant", "err_grades", "doc_ids_from_comments", "prepare", "check_k", "parse_metric",
    "dcg", "ndcg", "mean_ndcg", "average_precision", "precision", "err", "reciprocal_rank",
    "auc", "pauc", "rmse", "rmse_per_query", "metric_by_name", "evaluate", "PARALLEL_MIN_ROWS",
]


def _ranked(y, scores, query_offsets, convention, doc_ids):
    """Checked inputs and the ranked row ids of every query."""
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    use_keys = p.tie_keys is not None
    keys = p.tie_keys if use_keys else np.empty(0, np.int64)
    return p, ranked_rows(p.scores, keys, use_keys, p.query_offsets, _parallel(p.y))


def _ideal(gains, p):
    """Row ids of every query by descending gain (the ideal ranking)."""
    return ranked_rows(gains, np.empty(0, np.int64), False, p.query_offsets, _parallel(gains))


def _parallel(rows) -> bool:
    return len(rows) >= PARALLEL_MIN_ROWS


def _discounts(p):
    """Discount of 0-based ranks 0 .. largest query - 1, from the reference's definition."""
    largest = int(np.diff(p.query_offsets).max(initial=0))
    return discount(np.arange(1, max(largest, 1) + 1), p.convention)


def _k(k):
    check_k(k)
    return -1 if k is None else int(k)


def dcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
        ties=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.dcg`."""
    k = _k(k)
    convention, expected = resolve_ties(convention, ties)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    if expected:
        return graded.dcg_expected_kernel(gain(p.y, p.convention), p.scores, order, p.query_offsets, _discounts(p),
                                          k, _parallel(p.y))
    return graded.dcg_kernel(gain(p.y, p.convention), order, p.query_offsets, _discounts(p), k, _parallel(p.y))


def ndcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
         ties=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.ndcg`."""
    k = _k(k)
    convention, expected = resolve_ties(convention, ties)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    g = gain(p.y, p.convention)
    c = p.convention
    if expected:
        return graded.ndcg_expected_kernel(g, p.scores, order, _ideal(g, p), p.query_offsets, _discounts(p), k,
                                           c.ndcg_k_beyond_n == "zero", c.no_relevant_value, _parallel(p.y))
    return graded.ndcg_kernel(g, order, _ideal(g, p), p.query_offsets, _discounts(p), k,
                              c.ndcg_k_beyond_n == "zero", c.no_relevant_value, _parallel(p.y))


def mean_ndcg(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.mean_ndcg` (O(n) memory)."""
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    g = gain(p.y, p.convention)
    return graded.mean_ndcg_kernel(g, order, _ideal(g, p), p.query_offsets, _discounts(p),
                                   p.convention.no_relevant_value, _parallel(p.y))


def average_precision(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                      doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.average_precision`."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    c = p.convention
    return binary.average_precision_kernel(relevant(p.y, c), order, p.query_offsets, k,
                                           c.ap_normalizer == "min_k_relevant", c.no_relevant_value, _parallel(p.y))


def precision(y, scores, query_offsets, k, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.precision`."""
    if k is None:
        raise ParameterError("precision needs a cutoff k (an integer >= 1)")
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return binary.precision_kernel(relevant(p.y, p.convention), order, p.query_offsets, k,
                                   p.convention.precision_k_beyond_n == "n", _parallel(p.y))


def err(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.err` (O(n) memory)."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return graded.err_kernel(err_grades(p.y, p.convention), order, p.query_offsets, k, _parallel(p.y))


def reciprocal_rank(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                    doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.reciprocal_rank`."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return binary.reciprocal_rank_kernel(relevant(p.y, p.convention), order, p.query_offsets, k, _parallel(p.y))


def auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.auc`."""
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return binary.auc_kernel(relevant(p.y, p.convention), order, p.query_offsets,
                             p.convention.no_relevant_value, _parallel(p.y))


def pauc(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.pauc`."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < p <= 1.0:
        raise ParameterError(f"pauc's p must be in (0, 1], got {p!r}")
    prep, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return binary.pauc_kernel(relevant(prep.y, prep.convention), order, prep.query_offsets, float(p),
                              prep.convention.no_relevant_value, _parallel(prep.y))


def rmse(y, scores) -> float:
    """Numba-parallel twin of `twinrank.reference.metrics.rmse`."""
    y, scores = np.asarray(y, dtype=np.float64), np.asarray(scores, dtype=np.float64)
    if y.shape != scores.shape or y.ndim != 1 or len(y) == 0:
        raise ParameterError(f"rmse needs non-empty 1-D y and scores of one length, got {y.shape} and {scores.shape}")
    return float(np.sqrt(np.sum(graded.squared_errors(y, scores, _parallel(y))) / len(y)))


def rmse_per_query(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.metrics.rmse_per_query`."""
    p = prepare(y, scores, query_offsets, DEFAULT_CONVENTION)
    return graded.rmse_per_query_kernel(p.y, p.scores, p.query_offsets, _parallel(p.y))


_FUNCTIONS = {f.__name__: f for f in (dcg, ndcg, mean_ndcg, average_precision, precision, err,
                                      reciprocal_rank, auc, pauc, rmse, rmse_per_query)}


def metric_by_name(name: str) -> Metric:
    """Numba-parallel twin of `twinrank.reference.metrics.metric_by_name` (binds the fast functions)."""
    return _metric_from(_FUNCTIONS, name)


def evaluate(metrics, y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None,
             per_query=False) -> dict:
    """Numba-parallel twin of `twinrank.reference.metrics.evaluate`."""
    return _evaluate(_FUNCTIONS, metrics, y, scores, query_offsets, convention=convention,
                     doc_ids=doc_ids, per_query=per_query)

"""Numba-parallel twin of `twinrank.reference.evaluation.metrics`: the same metrics, one thread per query.

Shared with the reference (defined once there, in ``twinrank.reference.evaluation.conventions``
and ``twinrank.reference.evaluation.metric_names``, and re-exported here as the reference's
metrics re-exports them): :class:`Convention`, :data:`CONVENTIONS`, input checks
(``prepare``), the convention's gains, discounts, relevance and ERR grades (computed
once per call with NumPy and handed to the kernels), metric names and
:func:`evaluate`'s averaging. What differs is how rows are ranked and summed: a
per-query merge sort (``_ranking``) and per-query kernels (``_graded_kernels``,
``_binary_kernels``), one contiguous range of queries per thread, O(n log n) time and no
``(n_queries, largest query)`` matrix; the pooled metrics (``global_auc``, ``global_pauc_raw``)
sort all rows at once and walk them in one pass. Inputs of fewer than :data:`PARALLEL_MIN_ROWS`
rows run on the calling thread, because starting threads costs more than scoring a
small validation set. Arrays reach the kernels as float64 / bool / int64, C-contiguous,
whatever the caller passed: one compiled version of each kernel.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.evaluation import _binary_kernels as binary, _graded_kernels as graded
from twinrank.fast.evaluation._ranking import argsort_descending, rank_queries
from twinrank.fast.runtime._compile_notice import session
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import (
    CONVENTIONS,
    DEFAULT_CONVENTION,
    GAIN_TABLES,
    Convention,
    Prepared,
    check_k,
    check_p,
    check_table_labels,
    discount,
    doc_ids_from_comments,
    err_grades,
    gain,
    get_convention,
    prepare,
    relevant,
    resolve_ties,
)
from twinrank.reference.evaluation.metric_names import Metric, _evaluate, _metric_from, parse_metric

PARALLEL_MIN_ROWS = 20_000  # below this many rows the kernels loop over queries on one thread

__all__ = [
    "Convention", "CONVENTIONS", "DEFAULT_CONVENTION", "GAIN_TABLES", "Metric", "Prepared", "get_convention", "gain",
    "discount", "relevant", "err_grades", "doc_ids_from_comments", "prepare", "check_k", "check_p",
    "check_table_labels", "parse_metric", "dcg", "ndcg", "mean_ndcg", "average_precision", "precision", "err",
    "reciprocal_rank", "auc", "pauc", "global_auc", "global_pauc_raw", "rmse", "rmse_per_query", "metric_by_name",
    "evaluate", "PARALLEL_MIN_ROWS",
]


def _ranked(y, scores, query_offsets, convention, doc_ids):
    """Checked inputs and the ranked row ids of every query."""
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    # tie keys (ranks of doc ids, < 2**53) as float64, exactly: argsort compiled for one dtype
    keys = None if p.tie_keys is None else _floats(p.tie_keys)
    return p, _rank(_floats(p.scores), keys, p.query_offsets)


def _ideal(gains, p):
    """Row ids of every query by descending gain (the ideal ranking)."""
    return _rank(gains, None, p.query_offsets)


def _rank(values, keys, query_offsets):
    """Row ids of every query by descending value, ties by descending ``keys`` (None: input order)."""
    order = np.empty(len(values), np.int64)  # (n_rows,) global row ids, ranked per query
    max_size = int(np.diff(query_offsets).max(initial=0))
    _by_query(rank_queries, query_offsets, values, keys, query_offsets, max_size, order)
    return order


def _by_query(kernel, query_offsets, *args):
    """``kernel(first, last, *args)`` over every query, on all threads from ``PARALLEL_MIN_ROWS`` on."""
    over_chunks(kernel, len(query_offsets) - 1, *args, parallel=query_offsets[-1] >= PARALLEL_MIN_ROWS)


def _per_query(kernel, query_offsets, *args) -> np.ndarray:
    """The (n_queries,) values ``kernel`` writes, one per query."""
    out = np.empty(len(query_offsets) - 1)
    _by_query(kernel, query_offsets, *args, out)
    return out


def _floats(values) -> np.ndarray:
    """float64, C-contiguous: the one array type the kernels are compiled for."""
    return np.ascontiguousarray(values, dtype=np.float64)


def _bools(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.bool_)


def _discounts(p):
    """Discount of 0-based ranks 0 .. largest query - 1, from the reference's definition."""
    largest = int(np.diff(p.query_offsets).max(initial=0))
    return _floats(discount(np.arange(1, max(largest, 1) + 1), p.convention))


def _k(k):
    check_k(k)
    return -1 if k is None else int(k)


def dcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
        ties=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.dcg`."""
    k = _k(k)
    convention, expected = resolve_ties(convention, ties)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    if expected:
        return _per_query(graded.dcg_expected_kernel, p.query_offsets, _floats(gain(p.y, p.convention)),
                          _floats(p.scores), order, p.query_offsets, _discounts(p), k)
    return _per_query(graded.dcg_kernel, p.query_offsets, _floats(gain(p.y, p.convention)), order,
                      p.query_offsets, _discounts(p), k)


def ndcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
         ties=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.ndcg`."""
    k = _k(k)
    convention, expected = resolve_ties(convention, ties)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    g = _floats(gain(p.y, p.convention))
    c = p.convention
    if expected:
        return _per_query(graded.ndcg_expected_kernel, p.query_offsets, g, _floats(p.scores), order, _ideal(g, p),
                          p.query_offsets, _discounts(p), k, c.ndcg_k_beyond_n == "zero",
                          float(c.no_relevant_value))
    return _per_query(graded.ndcg_kernel, p.query_offsets, g, order, _ideal(g, p), p.query_offsets,
                      _discounts(p), k, c.ndcg_k_beyond_n == "zero", float(c.no_relevant_value))


def mean_ndcg(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.mean_ndcg` (O(n) memory)."""
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    g = _floats(gain(p.y, p.convention))
    return _per_query(graded.mean_ndcg_kernel, p.query_offsets, g, order, _ideal(g, p), p.query_offsets,
                      _discounts(p), float(p.convention.no_relevant_value))


def average_precision(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                      doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.average_precision`."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    c = p.convention
    return _per_query(binary.average_precision_kernel, p.query_offsets, _bools(relevant(p.y, c)), order,
                      p.query_offsets, k, c.ap_normalizer == "min_k_relevant", float(c.no_relevant_value))


def precision(y, scores, query_offsets, k, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.precision`."""
    if k is None:
        raise ParameterError("precision needs a cutoff k (an integer >= 1)")
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return _per_query(binary.precision_kernel, p.query_offsets, _bools(relevant(p.y, p.convention)), order,
                      p.query_offsets, k, p.convention.precision_k_beyond_n == "n")


def err(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.err` (O(n) memory)."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return _per_query(graded.err_kernel, p.query_offsets, _floats(err_grades(p.y, p.convention)), order,
                      p.query_offsets, k)


def reciprocal_rank(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                    doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.reciprocal_rank`."""
    k = _k(k)
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return _per_query(binary.reciprocal_rank_kernel, p.query_offsets, _bools(relevant(p.y, p.convention)),
                      order, p.query_offsets, k, p.convention.no_relevant_value)


def auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.auc`."""
    p, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return _per_query(binary.auc_kernel, p.query_offsets, _bools(relevant(p.y, p.convention)), order,
                      p.query_offsets, float(p.convention.no_relevant_value))


def pauc(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.pauc`."""
    check_p(p, "pauc")
    prep, order = _ranked(y, scores, query_offsets, convention, doc_ids)
    return _per_query(binary.pauc_kernel, prep.query_offsets, _bools(relevant(prep.y, prep.convention)),
                      order, prep.query_offsets, float(p), float(prep.convention.no_relevant_value))


def global_auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> float:
    """Numba twin of `twinrank.reference.evaluation.metrics.global_auc` (one sort of all rows, one pass)."""
    prep, relevant_rows, order = _pooled(y, scores, query_offsets, convention)
    return binary.pooled_auc(prep.scores, relevant_rows, order, float(prep.convention.no_relevant_value))


def global_pauc_raw(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> float:
    """Numba twin of `twinrank.reference.evaluation.metrics.global_pauc_raw` (one sort of all rows, one pass)."""
    check_p(p, "global_pauc_raw")
    prep, relevant_rows, order = _pooled(y, scores, query_offsets, convention)
    return binary.pooled_pauc_raw(prep.scores, relevant_rows, order, float(p),
                                  float(prep.convention.no_relevant_value))


def _pooled(y, scores, query_offsets, convention):
    """Checked inputs (no tie rule: ties count 1/2), relevance, and every row by descending score.

    One stable merge sort of all rows on the calling thread: the pooled metrics have no queries
    to share out among threads.
    """
    p = prepare(y, scores, query_offsets, resolve_ties(convention, "stable")[0])
    order = np.empty(len(p.y), np.int64)  # (n_rows,)
    argsort_descending(p.scores, order, np.empty(len(p.y), np.int64))
    return p, _bools(relevant(p.y, p.convention)), order


def rmse(y, scores) -> float:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.rmse`."""
    y, scores = np.asarray(y, dtype=np.float64), np.asarray(scores, dtype=np.float64)
    if y.shape != scores.shape or y.ndim != 1 or len(y) == 0:
        raise ParameterError(f"rmse needs non-empty 1-D y and scores of one length, got {y.shape} and {scores.shape}")
    squares = np.empty(len(y))  # (n_rows,)
    over_chunks(graded.squared_errors, len(y), _floats(y), _floats(scores), squares,
                parallel=len(y) >= PARALLEL_MIN_ROWS)
    return float(np.sqrt(np.sum(squares) / len(y)))


def rmse_per_query(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.rmse_per_query`."""
    p = prepare(y, scores, query_offsets, DEFAULT_CONVENTION)
    return _per_query(graded.rmse_per_query_kernel, p.query_offsets, _floats(p.y), _floats(p.scores),
                      p.query_offsets)


_FUNCTIONS = {f.__name__: f for f in (dcg, ndcg, mean_ndcg, average_precision, precision, err,
                                      reciprocal_rank, auc, pauc, global_auc, global_pauc_raw, rmse,
                                      rmse_per_query)}


def metric_by_name(name: str) -> Metric:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.metric_by_name` (binds the fast functions)."""
    return _metric_from(_FUNCTIONS, name)


@session()  # the kernels it compiles on a first run share one line of the compile notice
def evaluate(metrics, y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None,
             per_query=False) -> dict:
    """Numba-parallel twin of `twinrank.reference.evaluation.metrics.evaluate`."""
    return _evaluate(_FUNCTIONS, metrics, y, scores, query_offsets, convention=convention,
                     doc_ids=doc_ids, per_query=per_query)

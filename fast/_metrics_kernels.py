r"""Numba kernels of the ranking metrics: one ranking pass, then one thread per query.

:func:`ranked_rows` sorts the rows of every query into ranked order (stable merge sort,
descending score; with tie keys, a first stable pass by descending key). Every metric
kernel is then a loop over queries around a scalar per-query helper that walks
``order[lo:hi]`` once, adding in rank order as the reference does, so no result depends
on the thread count. No fastmath: the sums are short and must match the reference.

Each driver runs its loop as a ``prange`` when ``parallel`` is true and as a plain loop
otherwise: launching a parallel region costs more than evaluating a small validation
set (the caller decides, see ``twinrank.fast.metrics.PARALLEL_MIN_ROWS``). The two loops
call the same helper, so they give the same numbers.

Shared arguments:

    # IN  order (n_rows,) int64: row ids in ranked order, query by query (ranked_rows)
    #     query_offsets (n_queries + 1,) int64
    #     k: cutoff, an int >= 1, or -1 for the whole list
    # OUT (n_queries,) float64, one value per query
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._ranking import QUERIES_PER_BLOCK, argsort_descending, n_blocks


@njit(parallel=True, cache=True)
def ranked_rows(scores, tie_keys, use_keys, query_offsets, parallel):
    """Row ids of every query by descending score; ties by descending ``tie_keys`` or input order.

    # IN  scores (n_rows,) float64; tie_keys (n_rows,) int64, read only if use_keys
    # OUT (n_rows,) int64 global row ids
    """
    n_queries = len(query_offsets) - 1
    order = np.empty(len(scores), np.int64)
    max_size = 0
    for q in range(n_queries):
        max_size = max(max_size, query_offsets[q + 1] - query_offsets[q])
    if parallel:
        for block in prange(n_blocks(n_queries)):
            _rank_block(block, scores, tie_keys, use_keys, query_offsets, max_size, order)
    else:
        for block in range(n_blocks(n_queries)):
            _rank_block(block, scores, tie_keys, use_keys, query_offsets, max_size, order)
    return order


@njit(cache=True)
def _rank_block(block, scores, tie_keys, use_keys, query_offsets, max_size, order):
    """Rank the queries of one block of ``QUERIES_PER_BLOCK`` with the block's own buffers."""
    local = np.empty(max_size, np.int64)
    scratch = np.empty(max_size, np.int64)
    by_key = np.empty(max_size, np.int64)
    keyed_scores = np.empty(max_size)
    n_queries = len(query_offsets) - 1
    for q in range(block * QUERIES_PER_BLOCK, min(n_queries, (block + 1) * QUERIES_PER_BLOCK)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        n = hi - lo
        if use_keys:
            argsort_descending(tie_keys[lo:hi], by_key[:n], scratch[:n])
            for t in range(n):
                keyed_scores[t] = scores[lo + by_key[t]]
            argsort_descending(keyed_scores[:n], local[:n], scratch[:n])
            for t in range(n):
                order[lo + t] = lo + by_key[local[t]]
        else:
            argsort_descending(scores[lo:hi], local[:n], scratch[:n])
            for t in range(n):
                order[lo + t] = lo + local[t]


@njit(cache=True)
def _top(k, n):
    return n if k < 0 else min(k, n)


@njit(cache=True)
def _dcg(gains, ranked, discounts, top):
    """# IN gains (n_rows,); ranked (n,) row ids in rank order. Sum over the first ``top`` ranks."""
    total = 0.0
    for t in range(top):
        total += gains[ranked[t]] * discounts[t]
    return total


# ----------------------------------------------------------------------------- per query


@njit(cache=True)
def _ndcg_query(gains, order, ideal, lo, hi, discounts, k, zero_beyond_n, no_relevant_value):
    top = _top(k, hi - lo)
    best = _dcg(gains, ideal[lo:hi], discounts, top)
    if zero_beyond_n and k > hi - lo:
        return 0.0
    if best > 0:
        return _dcg(gains, order[lo:hi], discounts, top) / best
    return no_relevant_value


@njit(cache=True)
def _mean_ndcg_query(gains, order, ideal, lo, hi, discounts, no_relevant_value):
    """Mean over k = 1..n of the running DCG over the running ideal DCG."""
    actual, best, total = 0.0, 0.0, 0.0
    for t in range(hi - lo):
        actual += gains[order[lo + t]] * discounts[t]
        best += gains[ideal[lo + t]] * discounts[t]
        total += actual / best if best > 0 else no_relevant_value
    return total / (hi - lo) if hi > lo else no_relevant_value


@njit(cache=True)
def _average_precision_query(relevant, order, lo, hi, k, min_k_normalizer, no_relevant_value):
    top, hits, total = _top(k, hi - lo), 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            hits += 1
            if t < top:
                total += hits / (t + 1)
    z = min(hits, k) if (min_k_normalizer and k > 0) else hits
    return total / z if z > 0 else no_relevant_value


@njit(cache=True)
def _precision_query(relevant, order, lo, hi, k, divide_by_n):
    top, hits = _top(k, hi - lo), 0
    for t in range(top):
        hits += relevant[order[lo + t]]
    denominator = float(top) if divide_by_n else float(k)
    return hits / max(denominator, 1.0)


@njit(cache=True)
def _err_query(grades, order, lo, hi, k):
    reach, total = 1.0, 0.0
    for t in range(_top(k, hi - lo)):
        stop = grades[order[lo + t]]
        total += reach * stop / (t + 1)
        reach *= 1.0 - stop
    return total


@njit(cache=True)
def _reciprocal_rank_query(relevant, order, lo, hi, k):
    for t in range(_top(k, hi - lo)):
        if relevant[order[lo + t]]:
            return 1.0 / (t + 1)
    return 0.0


@njit(cache=True)
def _auc_query(relevant, order, lo, hi, no_relevant_value):
    """Ordered (relevant above irrelevant) pairs over all such pairs."""
    above, ordered = 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            above += 1
        else:
            ordered += above
    pairs = float(above) * ((hi - lo) - float(above))
    return ordered / pairs if pairs > 0 else no_relevant_value


@njit(cache=True)
def _pauc_query(relevant, order, lo, hi, p, no_relevant_value):
    """McClish-standardised area of the ROC staircase over FPR in [0, p]."""
    n_pos = 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            n_pos += 1.0
    n_neg = (hi - lo) - n_pos
    pos, neg = max(n_pos, 1.0), max(n_neg, 1.0)
    above, area = 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            above += 1
        else:
            m = t + 1 - above
            area += above / pos * max(min(m / neg, p) - (m - 1) / neg, 0.0)
    if n_pos * n_neg == 0:
        return no_relevant_value
    return 0.5 * (1.0 + (area - p * p / 2.0) / (p - p * p / 2.0))


@njit(cache=True)
def _rmse_query(y, scores, lo, hi):
    total = 0.0
    for i in range(lo, hi):
        total += (scores[i] - y[i]) ** 2
    return math.sqrt(total / max(hi - lo, 1))


# ----------------------------------------------------------------------------- drivers


@njit(parallel=True, cache=True)
def dcg_kernel(gains, order, query_offsets, discounts, k, parallel):
    """# IN gains (n_rows,) input order; discounts (max_size,) by 0-based rank."""
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            lo, hi = query_offsets[q], query_offsets[q + 1]
            out[q] = _dcg(gains, order[lo:hi], discounts, _top(k, hi - lo))
    else:
        for q in range(len(out)):
            lo, hi = query_offsets[q], query_offsets[q + 1]
            out[q] = _dcg(gains, order[lo:hi], discounts, _top(k, hi - lo))
    return out


@njit(parallel=True, cache=True)
def ndcg_kernel(gains, order, ideal, query_offsets, discounts, k, zero_beyond_n, no_relevant_value, parallel):
    """# IN ideal (n_rows,) row ids by descending gain (ranked_rows of the gains)."""
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts, k,
                                 zero_beyond_n, no_relevant_value)
    else:
        for q in range(len(out)):
            out[q] = _ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts, k,
                                 zero_beyond_n, no_relevant_value)
    return out


@njit(parallel=True, cache=True)
def mean_ndcg_kernel(gains, order, ideal, query_offsets, discounts, no_relevant_value, parallel):
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _mean_ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts,
                                      no_relevant_value)
    else:
        for q in range(len(out)):
            out[q] = _mean_ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts,
                                      no_relevant_value)
    return out


@njit(parallel=True, cache=True)
def average_precision_kernel(relevant, order, query_offsets, k, min_k_normalizer, no_relevant_value, parallel):
    """# IN relevant (n_rows,) bool, input order."""
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _average_precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k,
                                              min_k_normalizer, no_relevant_value)
    else:
        for q in range(len(out)):
            out[q] = _average_precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k,
                                              min_k_normalizer, no_relevant_value)
    return out


@njit(parallel=True, cache=True)
def precision_kernel(relevant, order, query_offsets, k, divide_by_n, parallel):
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k, divide_by_n)
    else:
        for q in range(len(out)):
            out[q] = _precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k, divide_by_n)
    return out


@njit(parallel=True, cache=True)
def err_kernel(grades, order, query_offsets, k, parallel):
    """# IN grades (n_rows,) ERR's stopping probabilities R, input order."""
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _err_query(grades, order, query_offsets[q], query_offsets[q + 1], k)
    else:
        for q in range(len(out)):
            out[q] = _err_query(grades, order, query_offsets[q], query_offsets[q + 1], k)
    return out


@njit(parallel=True, cache=True)
def reciprocal_rank_kernel(relevant, order, query_offsets, k, parallel):
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _reciprocal_rank_query(relevant, order, query_offsets[q], query_offsets[q + 1], k)
    else:
        for q in range(len(out)):
            out[q] = _reciprocal_rank_query(relevant, order, query_offsets[q], query_offsets[q + 1], k)
    return out


@njit(parallel=True, cache=True)
def auc_kernel(relevant, order, query_offsets, no_relevant_value, parallel):
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _auc_query(relevant, order, query_offsets[q], query_offsets[q + 1], no_relevant_value)
    else:
        for q in range(len(out)):
            out[q] = _auc_query(relevant, order, query_offsets[q], query_offsets[q + 1], no_relevant_value)
    return out


@njit(parallel=True, cache=True)
def pauc_kernel(relevant, order, query_offsets, p, no_relevant_value, parallel):
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _pauc_query(relevant, order, query_offsets[q], query_offsets[q + 1], p, no_relevant_value)
    else:
        for q in range(len(out)):
            out[q] = _pauc_query(relevant, order, query_offsets[q], query_offsets[q + 1], p, no_relevant_value)
    return out


@njit(parallel=True, cache=True)
def squared_errors(y, scores, parallel):
    """# OUT (n_rows,) (scores - y)^2."""
    out = np.empty(len(y))
    if parallel:
        for i in prange(len(y)):
            out[i] = (scores[i] - y[i]) ** 2
    else:
        for i in range(len(y)):
            out[i] = (scores[i] - y[i]) ** 2
    return out


@njit(parallel=True, cache=True)
def rmse_per_query_kernel(y, scores, query_offsets, parallel):
    """# OUT (n_queries,) root mean squared error of each query, 0 for an empty query."""
    out = np.empty(len(query_offsets) - 1)
    if parallel:
        for q in prange(len(out)):
            out[q] = _rmse_query(y, scores, query_offsets[q], query_offsets[q + 1])
    else:
        for q in range(len(out)):
            out[q] = _rmse_query(y, scores, query_offsets[q], query_offsets[q + 1])
    return out

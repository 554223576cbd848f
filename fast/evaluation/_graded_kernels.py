r"""Numba kernels of the graded metrics: DCG, NDCG, MeanNDCG and ERR, and the RMSE of scores.

They weigh each ranked document by its label's value: a gain times the discount of its
rank (DCG, NDCG, MeanNDCG) or ERR's stopping probability. The binary metrics (AP, P@k,
RR, AUC, pAUC), which only ask whether a document is relevant, are in
``_binary_kernels``; both follow one pattern.

``_ranking.rank_queries`` sorts the rows of every query into ranked order (stable merge
sort, descending score; with tie keys, a first stable pass by descending key). Every
metric kernel is then a loop over queries around a scalar per-query helper that walks
``order[lo:hi]`` once, adding in rank order as the reference does, so no result depends
on the thread count. No fastmath: the sums are short and must match the reference.

Each driver is a serial, ``nogil`` loop over a range of queries, writing ``out[first:last]``;
``twinrank.fast.evaluation.metrics`` runs one range per thread (``_threads.over_chunks``) from
``PARALLEL_MIN_ROWS`` rows on, else one range on the calling thread: starting threads
costs more than evaluating a small validation set. No ``prange``: it would cost seconds
of compilation per driver for a loop this cheap. Every range calls the same helper,
so the numbers never depend on the thread count.

Shared arguments (of both kernel modules):

    # IN  order (n_rows,) int64: row ids in ranked order, query by query (rank_queries)
    #     query_offsets (n_queries + 1,) int64
    #     k: cutoff, an int >= 1, or -1 for the whole list
    #     first, last: the range of queries to fill
    # OUT out (n_queries,) float64, one value per query
"""
from __future__ import annotations

import math

from twinrank.fast.evaluation._ranking import top_k
from twinrank.fast.runtime._kernel_cache import njit

# ----------------------------------------------------------------------------- per query


@njit(cache=True)
def _dcg(gains, ranked, discounts, top):
    """# IN gains (n_rows,); ranked (n,) row ids in rank order. Sum over the first ``top`` ranks."""
    total = 0.0
    for t in range(top):
        total += gains[ranked[t]] * discounts[t]
    return total


@njit(cache=True)
def _ndcg_query(gains, order, ideal, lo, hi, discounts, k, zero_beyond_n, no_relevant_value):
    top = top_k(k, hi - lo)
    best = _dcg(gains, ideal[lo:hi], discounts, top)
    if zero_beyond_n and k > hi - lo:
        return 0.0
    if best > 0:
        return _dcg(gains, order[lo:hi], discounts, top) / best
    return no_relevant_value


@njit(cache=True)
def _dcg_expected(gains, scores, ranked, discounts, top):
    """Expected DCG over random orders of tied scores: each tie run gets its mean discount (0 past ``top``).

    # IN scores (n_rows,) input order; ranked (n,) row ids in rank order (ties adjacent)
    """
    total, start = 0.0, 0
    for t in range(1, len(ranked) + 1):
        if t < len(ranked) and scores[ranked[t]] == scores[ranked[start]]:
            continue
        mean_discount = 0.0
        for u in range(start, min(t, top)):
            mean_discount += discounts[u]
        mean_discount /= t - start
        for u in range(start, t):
            total += gains[ranked[u]] * mean_discount
        start = t
    return total


@njit(cache=True)
def _ndcg_expected_query(gains, scores, order, ideal, lo, hi, discounts, k, zero_beyond_n, no_relevant_value):
    top = top_k(k, hi - lo)
    best = _dcg(gains, ideal[lo:hi], discounts, top)
    if zero_beyond_n and k > hi - lo:
        return 0.0
    if best > 0:
        return _dcg_expected(gains, scores, order[lo:hi], discounts, top) / best
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
def _err_query(grades, order, lo, hi, k):
    reach, total = 1.0, 0.0
    for t in range(top_k(k, hi - lo)):
        stop = grades[order[lo + t]]
        total += reach * stop / (t + 1)
        reach *= 1.0 - stop
    return total


@njit(cache=True)
def _rmse_query(y, scores, lo, hi):
    total = 0.0
    for i in range(lo, hi):
        total += (scores[i] - y[i]) ** 2
    return math.sqrt(total / max(hi - lo, 1))


# ----------------------------------------------------------------------------- drivers
# Each fills out[first:last], the queries of one thread's share (``_threads.over_chunks``).


@njit(cache=True, nogil=True)
def dcg_kernel(first, last, gains, order, query_offsets, discounts, k, out):
    """# IN gains (n_rows,) input order; discounts (max_size,) by 0-based rank."""
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _dcg(gains, order[lo:hi], discounts, top_k(k, hi - lo))


@njit(cache=True, nogil=True)
def ndcg_kernel(first, last, gains, order, ideal, query_offsets, discounts, k, zero_beyond_n,
                no_relevant_value, out):
    """# IN ideal (n_rows,) row ids by descending gain (rank_queries of the gains)."""
    for q in range(first, last):
        out[q] = _ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts, k,
                             zero_beyond_n, no_relevant_value)


@njit(cache=True, nogil=True)
def dcg_expected_kernel(first, last, gains, scores, order, query_offsets, discounts, k, out):
    """``dcg_kernel`` with ``ties="expected"``. # IN scores (n_rows,) input order, as ranked."""
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _dcg_expected(gains, scores, order[lo:hi], discounts, top_k(k, hi - lo))


@njit(cache=True, nogil=True)
def ndcg_expected_kernel(first, last, gains, scores, order, ideal, query_offsets, discounts, k, zero_beyond_n,
                         no_relevant_value, out):
    """``ndcg_kernel`` with ``ties="expected"``. # IN scores (n_rows,) input order, as ranked."""
    for q in range(first, last):
        out[q] = _ndcg_expected_query(gains, scores, order, ideal, query_offsets[q], query_offsets[q + 1],
                                      discounts, k, zero_beyond_n, no_relevant_value)


@njit(cache=True, nogil=True)
def mean_ndcg_kernel(first, last, gains, order, ideal, query_offsets, discounts, no_relevant_value,
                     out):
    for q in range(first, last):
        out[q] = _mean_ndcg_query(gains, order, ideal, query_offsets[q], query_offsets[q + 1], discounts,
                                  no_relevant_value)


@njit(cache=True, nogil=True)
def err_kernel(first, last, grades, order, query_offsets, k, out):
    """# IN grades (n_rows,) ERR's stopping probabilities R, input order."""
    for q in range(first, last):
        out[q] = _err_query(grades, order, query_offsets[q], query_offsets[q + 1], k)


@njit(cache=True, nogil=True)
def squared_errors(first, last, y, scores, out):
    """# OUT out[first:last] = (scores - y)^2 over rows (not queries)."""
    for i in range(first, last):
        out[i] = (scores[i] - y[i]) ** 2


@njit(cache=True, nogil=True)
def rmse_per_query_kernel(first, last, y, scores, query_offsets, out):
    """# OUT root mean squared error of each query, 0 for an empty query."""
    for q in range(first, last):
        out[q] = _rmse_query(y, scores, query_offsets[q], query_offsets[q + 1])

r"""Numba kernels of the ranking metrics: one ranking pass, then one thread per query.

:func:`ranked_rows` sorts the rows of every query into ranked order (stable merge sort,
descending score; with tie keys, a first stable pass by descending key). Every metric
kernel is then a ``prange`` over queries that walks ``order[lo:hi]`` once and writes one
value per query, adding in rank order as the reference does, so no result depends on
the thread count. No fastmath: the sums are short and must match the reference.

Shared arguments (all kernels):

    # IN  order (n_rows,) int64: row ids in ranked order, query by query (ranked_rows)
    #     query_offsets (n_queries + 1,) int64
    #     k: cutoff, an int >= 1, or -1 for the whole list
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._ranking import QUERIES_PER_BLOCK, argsort_descending, n_blocks


@njit(parallel=True, cache=True)
def ranked_rows(scores, tie_keys, use_keys, query_offsets):
    """Row ids of every query by descending score; ties by descending ``tie_keys`` or input order.

    # IN  scores (n_rows,) float64; tie_keys (n_rows,) int64, read only if use_keys
    # OUT (n_rows,) int64 global row ids
    """
    n_queries = len(query_offsets) - 1
    order = np.empty(len(scores), np.int64)
    max_size = 0
    for q in range(n_queries):
        max_size = max(max_size, query_offsets[q + 1] - query_offsets[q])
    for block in prange(n_blocks(n_queries)):
        local = np.empty(max_size, np.int64)
        scratch = np.empty(max_size, np.int64)
        by_key = np.empty(max_size, np.int64)
        keyed_scores = np.empty(max_size)
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
    return order


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


@njit(parallel=True, cache=True)
def dcg_kernel(gains, order, query_offsets, discounts, k):
    """# IN gains (n_rows,) input order; discounts (max_size,) by 0-based rank. # OUT (n_queries,)"""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _dcg(gains, order[lo:hi], discounts, _top(k, hi - lo))
    return out


@njit(parallel=True, cache=True)
def ndcg_kernel(gains, order, ideal, query_offsets, discounts, k, zero_beyond_n, no_relevant_value):
    """# IN ideal (n_rows,) row ids by descending gain (ranked_rows of the gains). # OUT (n_queries,)"""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        top = _top(k, hi - lo)
        best = _dcg(gains, ideal[lo:hi], discounts, top)
        if zero_beyond_n and k > hi - lo:
            out[q] = 0.0
        elif best > 0:
            out[q] = _dcg(gains, order[lo:hi], discounts, top) / best
        else:
            out[q] = no_relevant_value
    return out


@njit(parallel=True, cache=True)
def mean_ndcg_kernel(gains, order, ideal, query_offsets, discounts, no_relevant_value):
    """# OUT (n_queries,): mean over k = 1..n of the running DCG over the running ideal DCG."""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        actual, best, total = 0.0, 0.0, 0.0
        for t in range(hi - lo):
            actual += gains[order[lo + t]] * discounts[t]
            best += gains[ideal[lo + t]] * discounts[t]
            total += actual / best if best > 0 else no_relevant_value
        out[q] = total / (hi - lo) if hi > lo else no_relevant_value
    return out


@njit(parallel=True, cache=True)
def average_precision_kernel(relevant, order, query_offsets, k, min_k_normalizer, no_relevant_value):
    """# IN relevant (n_rows,) bool input order. # OUT (n_queries,)"""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        top, hits, total = _top(k, hi - lo), 0, 0.0
        for t in range(hi - lo):
            if relevant[order[lo + t]]:
                hits += 1
                if t < top:
                    total += hits / (t + 1)
        z = min(hits, k) if (min_k_normalizer and k > 0) else hits
        out[q] = total / z if z > 0 else no_relevant_value
    return out


@njit(parallel=True, cache=True)
def precision_kernel(relevant, order, query_offsets, k, divide_by_n):
    """# OUT (n_queries,): relevant in the top k over k (or over min(k, n))."""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        top, hits = _top(k, hi - lo), 0
        for t in range(top):
            hits += relevant[order[lo + t]]
        denominator = float(top) if divide_by_n else float(k)
        out[q] = hits / max(denominator, 1.0)
    return out


@njit(parallel=True, cache=True)
def err_kernel(grades, order, query_offsets, k):
    """# IN grades (n_rows,) ERR's stopping probabilities R. # OUT (n_queries,)"""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        reach, total = 1.0, 0.0
        for t in range(_top(k, hi - lo)):
            stop = grades[order[lo + t]]
            total += reach * stop / (t + 1)
            reach *= 1.0 - stop
        out[q] = total
    return out


@njit(parallel=True, cache=True)
def reciprocal_rank_kernel(relevant, order, query_offsets, k):
    """# OUT (n_queries,): 1 / rank of the first relevant document in the top k, else 0."""
    out = np.zeros(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        for t in range(_top(k, hi - lo)):
            if relevant[order[lo + t]]:
                out[q] = 1.0 / (t + 1)
                break
    return out


@njit(cache=True)
def _count(relevant, ranked):
    hits = 0
    for t in range(len(ranked)):
        hits += relevant[ranked[t]]
    return hits


@njit(parallel=True, cache=True)
def auc_kernel(relevant, order, query_offsets, no_relevant_value):
    """# OUT (n_queries,): ordered (relevant above irrelevant) pairs over all such pairs."""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        above, ordered = 0, 0.0
        for t in range(hi - lo):
            if relevant[order[lo + t]]:
                above += 1
            else:
                ordered += above
        pairs = float(above) * ((hi - lo) - float(above))
        out[q] = ordered / pairs if pairs > 0 else no_relevant_value
    return out


@njit(parallel=True, cache=True)
def pauc_kernel(relevant, order, query_offsets, p, no_relevant_value):
    """# OUT (n_queries,): McClish-standardised area of the ROC staircase over FPR in [0, p]."""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        n_pos = float(_count(relevant, order[lo:hi]))
        n_neg = (hi - lo) - n_pos
        pos, neg = max(n_pos, 1.0), max(n_neg, 1.0)
        above, area = 0, 0.0
        for t in range(hi - lo):
            if relevant[order[lo + t]]:
                above += 1
            else:
                m = t + 1 - above
                area += above / pos * max(min(m / neg, p) - (m - 1) / neg, 0.0)
        standardised = 0.5 * (1.0 + (area - p * p / 2.0) / (p - p * p / 2.0))
        out[q] = standardised if n_pos * n_neg > 0 else no_relevant_value
    return out


@njit(parallel=True, cache=True)
def squared_errors(y, scores):
    """# OUT (n_rows,) (scores - y)^2."""
    out = np.empty(len(y))
    for i in prange(len(y)):
        out[i] = (scores[i] - y[i]) ** 2
    return out


@njit(parallel=True, cache=True)
def rmse_per_query_kernel(y, scores, query_offsets):
    """# OUT (n_queries,) root mean squared error of each query, 0 for an empty query."""
    out = np.empty(len(query_offsets) - 1)
    for q in prange(len(out)):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        total = 0.0
        for i in range(lo, hi):
            total += (scores[i] - y[i]) ** 2
        out[q] = math.sqrt(total / max(hi - lo, 1))
    return out

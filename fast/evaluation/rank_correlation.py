r"""Numba-parallel twin of `twinrank.reference.evaluation.rank_correlation`: the same coefficients, bit for bit.

One ``nogil`` kernel per coefficient loops over a range of queries; ``_threads.over_chunks``
runs one range per thread (the convention of ``_graded_kernels``: the same parallelism
over queries as a ``prange``, without its seconds of compilation). Each query is computed
by one call, from the same integer counts as the reference (Kendall's pairs in a double
loop, $O(n^2)$; the centred average ranks by a sort and two binary searches,
$O(n \log n)$), ending in the same division and square root, so the bits never depend
on the threads. The input checks are the reference's.

    # IN  a, b (n_rows,) float64: the two rankers' scores
    #     query_offsets (n_queries + 1,) int64
    #     first, last: the range of queries to fill
    # OUT out (n_queries,) float64, one value per query
"""
from __future__ import annotations

import math

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.evaluation.rank_correlation import _rankings

__all__ = ["kendall_tau", "spearman_rho", "footrule"]


@njit(cache=True)
def _clip(value):
    return min(1.0, max(-1.0, value))


@njit(cache=True)
def _kendall(a, b):
    """tau-b of one query from S and the untied pairs of each ranking, counted over the pairs i < j."""
    s, untied_a, untied_b = 0, 0, 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            sign_a = (a[i] > a[j]) - (a[i] < a[j])
            sign_b = (b[i] > b[j]) - (b[i] < b[j])
            s += sign_a * sign_b
            untied_a += sign_a != 0
            untied_b += sign_b != 0
    if untied_a > 0 and untied_b > 0:
        return _clip(float(s) / math.sqrt(float(untied_a) * float(untied_b)))
    return math.nan


@njit(cache=True)
def _centred_ranks(values):
    """#{j: v_j < v_i} - #{j: v_j > v_i}, int64 (n,): twice the average rank minus n + 1."""
    ordered = np.sort(values)
    below = np.searchsorted(ordered, values, side="left")
    above = np.searchsorted(ordered, values, side="right")
    out = np.empty(len(values), dtype=np.int64)
    for i in range(len(values)):
        out[i] = below[i] - (len(values) - above[i])
    return out


@njit(cache=True)
def _spearman(a, b):
    c, d = _centred_ranks(a), _centred_ranks(b)
    cd, cc, dd = 0, 0, 0
    for i in range(len(c)):
        cd += c[i] * d[i]
        cc += c[i] * c[i]
        dd += d[i] * d[i]
    if cc > 0 and dd > 0:
        return _clip(float(cd) / math.sqrt(float(cc) * float(dd)))
    return math.nan


@njit(cache=True)
def _footrule(a, b):
    n = len(a)
    if n < 2:
        return math.nan
    c, d = _centred_ranks(a), _centred_ranks(b)
    displacement = 0  # twice the footrule F
    for i in range(n):
        displacement += abs(c[i] - d[i])
    return float(displacement) / float(2 * (n * n // 2))


@njit(cache=True, nogil=True)
def _kendall_queries(first, last, a, b, query_offsets, out):
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _kendall(a[lo:hi], b[lo:hi])


@njit(cache=True, nogil=True)
def _spearman_queries(first, last, a, b, query_offsets, out):
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _spearman(a[lo:hi], b[lo:hi])


@njit(cache=True, nogil=True)
def _footrule_queries(first, last, a, b, query_offsets, out):
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        out[q] = _footrule(a[lo:hi], b[lo:hi])


def _per_query(kernel, scores_a, scores_b, query_offsets) -> np.ndarray:
    """The (n_queries,) values ``kernel`` writes, over all threads."""
    a, b, offsets = _rankings(scores_a, scores_b, query_offsets)
    out = np.empty(len(offsets) - 1)
    over_chunks(kernel, len(offsets) - 1, a, b, offsets, out)
    return out


def kendall_tau(scores_a, scores_b, query_offsets) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.rank_correlation.kendall_tau` (O(1) memory per query)."""
    return _per_query(_kendall_queries, scores_a, scores_b, query_offsets)


def spearman_rho(scores_a, scores_b, query_offsets) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.rank_correlation.spearman_rho`."""
    return _per_query(_spearman_queries, scores_a, scores_b, query_offsets)


def footrule(scores_a, scores_b, query_offsets) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.rank_correlation.footrule`."""
    return _per_query(_footrule_queries, scores_a, scores_b, query_offsets)

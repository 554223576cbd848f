"""Per-query ranking kernels: a stable descending argsort into caller buffers.

``argsort_descending`` (and ``argsort_descending_from``, which starts from an earlier
order) sorts one query; ``rank_queries`` ranks a range of queries (metrics, with
optional tie keys, and ``objectives.rank_order``); ``top_k`` is how many ranked
slots a metric's cutoff keeps.

Query-parallel kernels (``rank_queries``, LambdaRank's) take a range of queries;
``_threads.over_chunks`` cuts the queries into one contiguous range per thread, and
each range gets its own scratch buffers, so a query is always handled by exactly
one thread::

    queries  | q0 q1 ... q99 | q100 ... q199 | ... |
    threads  |    thread 0   |    thread 1    | ... |   one buffer set per thread
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit

INSERTION_RUN = 16


@njit(cache=True)
def top_k(k, n):
    """Ranked slots inside the cutoff ``k`` of a query of ``n`` rows (``k = -1``: all of them)."""
    return n if k < 0 else min(k, n)


@njit(cache=True)
def argsort_descending(values, order, scratch):
    """Stable argsort of ``values`` by descending value into ``order``.

    Insertion sort of runs of ``INSERTION_RUN``, then bottom-up merges of runs.

    # IN  values (n,); scratch (n,) int64, overwritten
    # OUT order (n,) int64: equal values keep their input order, as
    #     ``numpy.argsort(-values, kind="stable")``. O(n log n), no allocation.
    """
    n = len(values)
    for lo in range(0, n, INSERTION_RUN):
        insertion_sort_descending(values, order, lo, min(lo + INSERTION_RUN, n))
    src, dst = order, scratch
    in_order = True  # does src alias order?
    width = INSERTION_RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for out in range(lo, hi):
                # take from the right run only when strictly larger: stability
                if j < hi and (i >= mid or values[src[j]] > values[src[i]]):
                    dst[out] = src[j]
                    j += 1
                else:
                    dst[out] = src[i]
                    i += 1
        src, dst = dst, src
        in_order = not in_order
        width *= 2
    if not in_order:
        for t in range(n):  # a loop, not ``order[:] = src``: no shape-error text to compile
            order[t] = src[t]


@njit(cache=True)
def argsort_descending_from(values, order, scratch, hint, first, keys):
    """``argsort_descending`` started from ``hint``, an earlier order of the same rows.

    If ``hint`` (n,) holds the row ids ``first .. first + n - 1`` in some order, an
    insertion sort from that order (O(n + swaps); scores move little between boosting
    rounds) gives the same result as sorting afresh (descending value, ties by row id,
    a total order); after ``8 n`` swaps, or if ``hint`` is no such permutation, the
    rows are sorted afresh.

    # IN values (n,); hint (n,) int32 or int64 global row ids; OUT order (n,); BUF scratch (n,) int64,
    #    keys (n,) float64
    """
    n = len(values)
    if _load_hint(hint, first, order, scratch) and _insertion_sort_from(values, order, keys, 8 * n):
        return
    argsort_descending(values, order, scratch)


@njit(cache=True)
def _load_hint(hint, first, order, seen):
    """order = hint - first if that is a permutation of 0 .. n-1 (False otherwise)."""
    n = len(hint)
    seen[:n] = 0
    for t in range(n):
        r = hint[t] - first
        if r < 0 or r >= n or seen[r]:
            return False
        seen[r] = 1
        order[t] = r
    return True


@njit(cache=True)
def _insertion_sort_from(values, order, keys, max_swaps):
    """Insertion sort of ``order`` by (descending value, ascending id); False after ``max_swaps``.
    The values are gathered once into ``keys`` (n,), which moves along with ``order``."""
    n = len(order)
    for t in range(n):
        keys[t] = values[order[t]]
    swaps = 0
    for i in range(1, n):
        item, value = order[i], keys[i]
        j = i - 1
        while j >= 0 and (keys[j] < value or (keys[j] == value and order[j] > item)):
            order[j + 1], keys[j + 1] = order[j], keys[j]
            j -= 1
        swaps += i - 1 - j
        order[j + 1], keys[j + 1] = item, value
        if swaps > max_swaps:
            return False
    return True


@njit(cache=True)
def insertion_sort_descending(values, order, lo, hi):
    """order[lo:hi] = lo..hi-1 sorted by descending value, stable."""
    for i in range(lo, hi):
        item, value = i, values[i]
        j = i - 1
        while j >= lo and values[order[j]] < value:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = item


@njit(cache=True, nogil=True)
def rank_queries(first, last, scores, tie_keys, query_offsets, max_size, order):
    """Row ids of queries ``first .. last - 1`` by descending score; ties by descending
    ``tie_keys``, or with ``tie_keys`` None by input order. One thread's share (``_threads.over_chunks``).
    None is a type of its own: compiled without the keys' pass (numba prunes the branch), for the
    metrics' usual conventions and the ideal rankings; with keys, compiled apart.

    # IN  scores (n_rows,) float64; tie_keys (n_rows,) float64 (integers) or None;
    #     max_size: the largest query's size
    # OUT order (n_rows,) int64 global row ids, the rows of these queries
    """
    local = np.empty(max_size, np.int64)
    scratch = np.empty(max_size, np.int64)
    if tie_keys is None:
        for q in range(first, last):
            lo, hi = query_offsets[q], query_offsets[q + 1]
            n = hi - lo
            argsort_descending(scores[lo:hi], local[:n], scratch[:n])
            for t in range(n):
                order[lo + t] = lo + local[t]
    else:
        by_key = np.empty(max_size, np.int64)
        keyed_scores = np.empty(max_size)
        for q in range(first, last):
            lo, hi = query_offsets[q], query_offsets[q + 1]
            n = hi - lo
            argsort_descending(tie_keys[lo:hi], by_key[:n], scratch[:n])
            for t in range(n):
                keyed_scores[t] = scores[lo + by_key[t]]
            argsort_descending(keyed_scores[:n], local[:n], scratch[:n])
            for t in range(n):
                order[lo + t] = lo + by_key[local[t]]

"""Numba kernels of the bag's combination rules (``twinrank.reference.combination.bag_rules``), per range of queries.

Serial ``nogil`` loops over queries ``[first, last)``, run on threads by
``_threads.over_chunks``; each query is written by one call, with the reference's
arithmetic in the reference's order, so the bits never depend on the threads.

    # IN  scores (B, n) float64: member x document scores
    #     query_offsets (n_queries + 1,) int64
    # OUT out (B, n) float64: normalised scores or Borda points
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit


@njit(cache=True, nogil=True)
def minmax_queries(first, last, scores, query_offsets, out):
    for q in range(first, last):
        start, stop = query_offsets[q], query_offsets[q + 1]
        for m in range(scores.shape[0]):
            low = scores[m, start]
            high = scores[m, start]
            for i in range(start + 1, stop):
                low = min(low, scores[m, i])
                high = max(high, scores[m, i])
            span = high - low
            for i in range(start, stop):
                out[m, i] = (scores[m, i] - low) / span if span > 0 else 0.5


@njit(cache=True, nogil=True)
def borda_queries(first, last, scores, query_offsets, out):
    for q in range(first, last):
        start, stop = query_offsets[q], query_offsets[q + 1]
        for m in range(scores.shape[0]):
            row = scores[m, start:stop]
            ordered = np.sort(row)
            below = np.searchsorted(ordered, row, side="left")
            above = np.searchsorted(ordered, row, side="right")
            for i in range(stop - start):
                out[m, start + i] = below[i] + 0.5 * (above[i] - below[i] - 1)


@njit(cache=True, nogil=True)
def member_mean(scores, out):
    for m in range(scores.shape[0]):
        for i in range(scores.shape[1]):
            out[i] += scores[m, i]
    for i in range(scores.shape[1]):
        out[i] /= scores.shape[0]

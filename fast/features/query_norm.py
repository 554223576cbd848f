"""Numba-parallel twin of `twinrank.reference.features.query_norm`: LETOR's QueryLevelNorm, bit for bit.

A ``nogil`` kernel scales a range of queries; ``_threads.over_chunks`` runs one range per
thread. Per query it reads the rows once for the minimum and maximum of every feature
(a NaN compares false, so it is skipped) and once to write, row by row as ``X`` is laid
out; the minimum and maximum are exact and the subtraction and division are the
reference's, so the values are the reference's. The input checks are the reference's.

    # IN  X (n_rows, n_features) float64, C-contiguous; query_offsets (n_queries + 1,) int64
    # OUT out (n_rows, n_features) float64
"""
from __future__ import annotations

import math

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.features.query_norm import _features

__all__ = ["query_level_normalize"]


@njit(cache=True, nogil=True)
def _normalize_queries(first, last, X, query_offsets, out):
    n_features = X.shape[1]
    low, high = np.empty(n_features), np.empty(n_features)  # (n_features,) of the query at hand
    for q in range(first, last):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        low[:] = np.inf
        high[:] = -np.inf
        for i in range(lo, hi):
            for f in range(n_features):
                low[f] = X[i, f] if X[i, f] < low[f] else low[f]
                high[f] = X[i, f] if X[i, f] > high[f] else high[f]
        for i in range(lo, hi):
            for f in range(n_features):
                span = high[f] - low[f]  # -inf where the feature is missing throughout the query
                if math.isnan(X[i, f]):
                    out[i, f] = math.nan
                elif span > 0:
                    out[i, f] = (X[i, f] - low[f]) / span
                else:
                    out[i, f] = 0.0


def query_level_normalize(X, query_offsets) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.features.query_norm.query_level_normalize`."""
    X, offsets = _features(X, query_offsets)
    out = np.empty_like(X)
    over_chunks(_normalize_queries, len(offsets) - 1, X, offsets, out)
    return out

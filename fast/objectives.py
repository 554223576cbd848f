r"""Numba-parallel twin of ``twinrank.reference.objectives``: same names, signatures, results.

Arguments are validated by the reference's checker, so both twins reject the same
input with the same message. Sums run in a different order than the reference's
matrix reductions, so results agree to rounding (the agreement tests' tolerance),
never depending on the thread count: each query is computed by one thread.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from twinrank.reference.objectives import (
    _check_lambdarank, _check_logistic, _check_offsets, _check_pointwise)

from ._lambdarank import ERR, MAP, NDCG, lambdarank_kernel
from ._ranking import rank_order_kernel

_METRIC_CODES = {"ndcg": NDCG, "map": MAP, "err": ERR}


def squared_error(y, scores):
    """Numba-parallel twin of `twinrank.reference.objectives.squared_error`."""
    y, scores = _check_pointwise(y, scores)
    g, h = np.empty_like(scores), np.empty_like(scores)
    _squared_error_kernel(y, scores, g, h)
    return g, h


def logistic(y, scores):
    """Numba-parallel twin of `twinrank.reference.objectives.logistic`."""
    y, scores = _check_logistic(y, scores)
    g, h = np.empty_like(scores), np.empty_like(scores)
    _logistic_kernel(y, scores, g, h)
    return g, h


def rank_order(scores, query_offsets):
    """Numba-parallel twin of `twinrank.reference.objectives.rank_order` (a merge sort per query)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    query_offsets = _check_offsets(query_offsets, len(scores))
    order = np.empty(len(scores), np.int64)
    rank_order_kernel(scores, query_offsets, order)
    return order


def lambdarank(y, scores, query_offsets, *, metric="ndcg", k=None, sigma=1.0, truncation=None,
               gain="exp2", normalize=False, queries=None, ranking=None):
    """Numba-parallel twin of `twinrank.reference.objectives.lambdarank`.

    Queries run in parallel, in fixed blocks of 64 (one thread per query, so the
    result does not depend on the thread count). Pairs are visited one at a time:
    no (n, n) temporary, O(n) scratch per block, O(n * min(n, truncation, k)) time
    per query. With ``ranking`` from an earlier call, each query is sorted by
    insertion from its earlier order (O(n + swaps) instead of O(n log n)).
    """
    y, scores, query_offsets, queries = _check_lambdarank(
        y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries, ranking)
    whole_list = max(len(y), 1)  # no query is longer: a cutoff of "none"
    every_query = len(queries) == len(query_offsets) - 1  # queries are unique: all of them
    new = np.empty_like if every_query else np.zeros_like  # the kernel zeroes its queries' rows
    g, h = new(scores), new(scores)
    lambdarank_kernel(
        y, scores, query_offsets, queries, _METRIC_CODES[metric],
        whole_list if k is None else k, gain == "linear", y.max(initial=0.0), float(sigma),
        whole_list if truncation is None else truncation, bool(normalize), g, h,
        np.empty(0, np.int64) if ranking is None else ranking)
    return g, h


@njit(parallel=True, cache=True)
def _squared_error_kernel(y, scores, g, h):
    for i in prange(len(y)):
        g[i] = scores[i] - y[i]
        h[i] = 1.0


@njit(parallel=True, cache=True)
def _logistic_kernel(y, scores, g, h):
    for i in prange(len(y)):
        e = math.exp(-abs(scores[i]))
        big, small = 1.0 / (1.0 + e), e / (1.0 + e)
        p, one_minus_p = (big, small) if scores[i] >= 0 else (small, big)
        g[i] = (1.0 - y[i]) * p - y[i] * one_minus_p
        h[i] = p * one_minus_p

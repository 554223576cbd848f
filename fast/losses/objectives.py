r"""Numba-parallel twin of ``twinrank.reference.losses.objectives``: same names, signatures, results.

Arguments are validated by the reference's checker, so both twins reject the same
input with the same message. Sums run in a different order than the reference's
matrix reductions, so results agree to rounding (the agreement tests' tolerance),
never depending on the thread count: each query is computed by one thread.
"""
from __future__ import annotations

import math

import numpy as np

from twinrank.fast.evaluation._ranking import rank_queries
from twinrank.fast.losses._lambdarank import ERR, KERNELS, MAP, NDCG
from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.losses import objectives as _reference
from twinrank.reference.losses._objective_checks import (
    _check_lambdarank,
    _check_logistic,
    _check_offsets,
    _check_pointwise,
)
from twinrank.reference.losses.objectives import Loss

__all__ = ["squared_error", "logistic", "rank_order", "lambdarank", "Loss", "SquaredError",
           "Logistic", "LambdaRank", "QUADRATIC_PAIRS"]

_METRIC_CODES = {"ndcg": NDCG, "map": MAP, "err": ERR}
QUADRATIC_PAIRS = 10**9  # a query with more pair terms per tree warns (QuadraticQueryWarning): seconds per tree


def squared_error(y, scores):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.squared_error`."""
    y, scores = _check_pointwise(y, scores)
    g, h = np.empty_like(scores), np.empty_like(scores)
    _squared_error_kernel(y, scores, g, h)
    return g, h


def logistic(y, scores):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.logistic`."""
    y, scores = _check_logistic(y, scores)
    g, h = np.empty_like(scores), np.empty_like(scores)
    _logistic_kernel(y, scores, g, h)
    return g, h


def rank_order(scores, query_offsets):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.rank_order` (a merge sort per query)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    query_offsets = _check_offsets(query_offsets, len(scores))
    order = np.empty(len(scores), np.int64)
    max_size = int(np.diff(query_offsets).max(initial=0))
    over_chunks(rank_queries, len(query_offsets) - 1, scores, None, query_offsets, max_size, order)
    return order


def lambdarank(y, scores, query_offsets, *, metric="ndcg", k=None, sigma=1.0, truncation=None,
               gain="exp2", normalize=False, queries=None):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.lambdarank`.

    Queries run in parallel, one contiguous range of queries per thread (each query
    on one thread, so the result does not depend on the thread count). Pairs are
    visited one at a time: no (n, n) temporary, O(n) scratch per thread, O(n * min(n, truncation, k)) time
    per query. (The boosting loss :class:`LambdaRank` also sorts each query by insertion from
    the previous round's order.)
    """
    y, scores, query_offsets, queries = _check_lambdarank(
        y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries)
    g, h = np.empty_like(scores), np.empty_like(scores)
    _lambdarank_into(y, scores, query_offsets, queries, (metric, k, sigma, truncation, gain, normalize, False),
                     g, h, np.empty(0, np.int64))
    return g, h


def _lambdarank_into(y, scores, query_offsets, queries, options, g, h, ranking):
    """:func:`lambdarank` on checked arguments, writing ``g``, ``h`` (and ``ranking`` if not empty);
    with the option ``on_grid``, of the scores on the tie grid (``reference.losses.objectives.on_grid``)."""
    metric, k, sigma, truncation, gain, normalize, on_grid = options
    whole_list = max(len(y), 1)  # no query is longer: a cutoff of "none"
    if len(queries) != len(query_offsets) - 1:  # queries are unique: not all of them
        g.fill(0.0)  # the kernel writes only its queries' rows
        h.fill(0.0)
    pair_options = (whole_list if k is None else int(k), gain == "linear",
                    float(y.max(initial=0.0)), float(sigma),
                    whole_list if truncation is None else int(truncation), bool(normalize))
    over_chunks(KERNELS[_METRIC_CODES[metric]], len(queries), y, scores, query_offsets, queries, pair_options,
                bool(on_grid), g, h, ranking)


class SquaredError(_reference.SquaredError):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.SquaredError`."""

    def gradients(self, scores, queries, g, h) -> None:
        _squared_error_kernel(self.y, scores, g, h)
        self.weighted(g, h)

    def weighted(self, g, h) -> None:
        _weighted(self.weight, g, h)


class Logistic(_reference.Logistic):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.Logistic`."""

    def gradients(self, scores, queries, g, h) -> None:
        _logistic_kernel(self.y, scores, g, h)
        self.weighted(g, h)

    def weighted(self, g, h) -> None:
        _weighted(self.weight, g, h)


class LambdaRank(_reference.LambdaRank):
    """Numba-parallel twin of `twinrank.reference.losses.objectives.LambdaRank`.

    Ranks the scores on the tie grid as the reference's loss does (read onto it by the
    kernel, no pass of its own). Keeps each round's ranked order (``self.ranking``, each query's
    rows in ranked order) as the next round's starting point: scores move little between
    rounds, so each query is sorted by insertion from there (O(n + swaps) instead of
    O(n log n)). The gradients never depend on it.

    Large queries: the kernel's work per query is its position pairs within the top
    (:meth:`pair_terms`), about 200 million a second on one thread (one query is one thread's);
    linear in the query's size with a cutoff or truncation, quadratic without. It warns
    (``QuadraticQueryWarning``) above ``QUADRATIC_PAIRS`` ($10^9$, seconds per tree).
    """

    quadratic_pairs = QUADRATIC_PAIRS
    remedy = "a metric cutoff (ndcg@k, the default's ndcg@30 target) or a truncation makes them linear in its size"

    def __init__(self, y, query_offsets, **options):
        super().__init__(y, query_offsets, **options)
        row_id = np.int32 if len(self.y) < 2**31 else np.int64  # half the memory of int64 when the ids fit
        self.ranking = np.empty(len(self.y), dtype=row_id)  # (n_rows,) last round's order
        self.every = np.arange(len(self.query_offsets) - 1, dtype=np.int64)
        o = self.options
        self.kernel_options = (o["metric"], o["k"], o["sigma"], o["truncation"], o["gain"], o["normalize"], True)

    def pair_terms(self) -> np.ndarray:
        """The pair terms each query computes at every tree, (n_queries,): the kernel's row of each
        position ``a < top`` pairs it with every position below, ``top`` = min(n - 1, truncation, k)."""
        n = np.diff(self.query_offsets)  # (n_queries,)
        cut = min(self.options["truncation"] or np.inf, self.options["k"] or np.inf)
        top = np.minimum(n - 1, cut).clip(0).astype(np.int64)  # (n_queries,)
        return top * (n - 1) - top * (top - 1) // 2

    def gradients(self, scores, queries, g, h) -> None:
        _lambdarank_into(self.y, scores, self.query_offsets, self.every if queries is None else queries,
                         self.kernel_options, g, h, self.ranking)
        self.weighted(g, h)

    def weighted(self, g, h) -> None:
        _weighted(self.weight, g, h)


def _weighted(weight, g, h) -> None:
    """The reference's ``Loss.weighted``: ``g``, ``h`` times ``weight`` in place (None: unchanged)."""
    if weight is not None:
        over_chunks(_weighted_rows, len(weight), weight, g, h)


@njit(cache=True, nogil=True)
def _weighted_rows(first, last, weight, g, h):
    for i in range(first, last):
        g[i] *= weight[i]
        h[i] *= weight[i]


def _squared_error_kernel(y, scores, g, h):
    over_chunks(_squared_error_rows, len(y), y, scores, g, h)


def _logistic_kernel(y, scores, g, h):
    over_chunks(_logistic_rows, len(y), y, scores, g, h)


@njit(cache=True, nogil=True)
def _squared_error_rows(first, last, y, scores, g, h):
    for i in range(first, last):
        g[i] = scores[i] - y[i]
        h[i] = 1.0


@njit(cache=True, nogil=True)
def _logistic_rows(first, last, y, scores, g, h):
    for i in range(first, last):
        e = math.exp(-abs(scores[i]))
        big, small = 1.0 / (1.0 + e), e / (1.0 + e)
        p, one_minus_p = (big, small) if scores[i] >= 0 else (small, big)
        g[i] = (1.0 - y[i]) * p - y[i] * one_minus_p
        h[i] = p * one_minus_p

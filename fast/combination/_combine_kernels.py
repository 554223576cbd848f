r"""Numba kernels of the exact line search: crossings per query in parallel, window by window.

The reference (``twinrank.reference.combination.combine``) pools every crossing of every query
and walks them in one sorted list. Here each query walks its own crossings on its
own thread (a query's re-ranking never looks at another query), and the alpha range
is cut into windows of at most ``CROSSINGS_PER_CHUNK`` crossings, so memory is
bounded however many crossings there are::

    pass 0  | per query: first crossing; histogram of crossings over HISTOGRAM_BINS alpha bins
    plan    | consecutive bins -> windows of <= CROSSINGS_PER_CHUNK crossings
    window  | count (per query) -> fill + sort + sweep (per query, prange) -> events
            | the query's order and ranks carry over to the next window

A crossing belongs to the bin ``alpha_bin`` computes, the same in every pass, so a
window owns exactly the crossings its bins count. Equal alphas share a bin, so a
group of lines through one point is never split, unless rounding spreads its
crossings across a bin edge (bins are (hi - lo) / 4096 wide, their edges off the simple
fractions): then the two windows re-rank it in two steps and the twins may differ there. Groups are re-ranked with
insertion sorts in per-block scratch buffers: no allocation per crossing.

Shared arguments:

    # IN a, b (n_rows,) float64 scores; gains (n_rows,) float64
    #    query_offsets (n_queries + 1,) int64; active (n_queries,) bool
    #    lo, hi: the open alpha range; boosting: the form
    # IO order (n_rows,) int64 ranked row ids per query; position_of (n_rows,) int64 its inverse
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from twinrank.fast.evaluation._ranking import argsort_descending
from twinrank.fast.runtime._kernel_cache import njit
from twinrank.reference.combination._combine_setup import ALPHA_TOLERANCE

QUERIES_PER_BLOCK = 64  # fixed blocks of queries, one scratch set each: never a function of the threads


@njit(cache=True)
def n_blocks(n_queries):
    return (n_queries + QUERIES_PER_BLOCK - 1) // QUERIES_PER_BLOCK


@njit(cache=True)
def crossing(da, db, boosting):
    """Twin of ``twinrank.reference.combination._combine_setup.crossing``: NaN for parallel lines."""
    denominator = db if boosting else da - db
    if denominator == 0.0:
        return math.nan
    return -da / denominator if boosting else da / denominator


@njit(cache=True)
def score_at(a, b, alpha, boosting):
    return a + alpha * b if boosting else (1.0 - alpha) * a + alpha * b


@njit(cache=True)
def close(previous, alpha):
    """Twin of ``twinrank.reference.combination._combine_setup.close_alphas``."""
    return alpha - previous <= ALPHA_TOLERANCE * max(1.0, abs(previous))


BIN_OFFSET = 0.3819660112501051  # 2 - golden ratio: bin edges fall on no simple fraction of the range


@njit(cache=True)
def alpha_bin(alpha, lo, hi, n_bins):
    """The histogram bin of a crossing. The edges are shifted by ``BIN_OFFSET`` of a bin, so that
    lines through a simple point such as alpha = 1/2, whose crossings rounding spreads over
    a few ulps, do not straddle an edge."""
    return min(int((alpha - lo) / (hi - lo) * n_bins + BIN_OFFSET), n_bins - 1)


@njit(cache=True)
def _block_size(query_offsets):
    largest = 0
    for q in range(len(query_offsets) - 1):
        largest = max(largest, query_offsets[q + 1] - query_offsets[q])
    return largest


@njit(parallel=True, cache=True)
def first_crossings(a, b, query_offsets, active, lo, hi, boosting, n_bins):
    """# OUT first (n_queries,) each query's smallest crossing in (lo, hi), or hi; histogram (n_bins,) int64."""
    n_queries = len(query_offsets) - 1
    first = np.full(n_queries, hi)
    histograms = np.zeros((n_blocks(n_queries), n_bins), np.int64)
    for block in prange(n_blocks(n_queries)):
        for q in range(block * QUERIES_PER_BLOCK, min(n_queries, (block + 1) * QUERIES_PER_BLOCK)):
            if not active[q]:
                continue
            for i in range(query_offsets[q], query_offsets[q + 1]):
                for j in range(i + 1, query_offsets[q + 1]):
                    alpha = crossing(a[i] - a[j], b[i] - b[j], boosting)
                    if alpha > lo and alpha < hi:
                        first[q] = min(first[q], alpha)
                        histograms[block, alpha_bin(alpha, lo, hi, n_bins)] += 1
    return first, histograms.sum(axis=0)


@njit(parallel=True, cache=True)
def initial_order(a, b, query_offsets, lo, first, boosting):
    """# OUT order (n_rows,): each query ranked at the midpoint of (lo, its first crossing), ties by row id."""
    order = np.empty(len(a), np.int64)
    n_queries = len(query_offsets) - 1
    largest = _block_size(query_offsets)
    for block in prange(n_blocks(n_queries)):
        s = np.empty(largest)
        local = np.empty(largest, np.int64)
        scratch = np.empty(largest, np.int64)
        for q in range(block * QUERIES_PER_BLOCK, min(n_queries, (block + 1) * QUERIES_PER_BLOCK)):
            lo_row, n = query_offsets[q], query_offsets[q + 1] - query_offsets[q]
            mid = 0.5 * (lo + first[q])
            for t in range(n):
                s[t] = score_at(a[lo_row + t], b[lo_row + t], mid, boosting)
            argsort_descending(s[:n], local[:n], scratch[:n])
            for t in range(n):
                order[lo_row + t] = lo_row + local[t]
    return order


@njit(parallel=True, cache=True)
def query_dcg(gains, order, query_offsets, discounts):
    """# OUT (n_queries,) DCG of each query's ranked order (discounts cut at k)."""
    out = np.zeros(len(query_offsets) - 1)
    for q in prange(len(out)):
        total = 0.0
        for t in range(query_offsets[q + 1] - query_offsets[q]):
            total += gains[order[query_offsets[q] + t]] * discounts[t]
        out[q] = total
    return out


@njit(parallel=True, cache=True)
def count_window(a, b, query_offsets, active, lo, hi, boosting, n_bins, bin_lo, bin_hi):
    """# OUT counts (n_queries,) crossings in bins [bin_lo, bin_hi); after (n_queries,) the smallest
    crossing in a later bin, or hi."""
    n_queries = len(query_offsets) - 1
    counts = np.zeros(n_queries, np.int64)
    after = np.full(n_queries, hi)
    for q in prange(n_queries):
        if not active[q]:
            continue
        for i in range(query_offsets[q], query_offsets[q + 1]):
            for j in range(i + 1, query_offsets[q + 1]):
                alpha = crossing(a[i] - a[j], b[i] - b[j], boosting)
                if alpha > lo and alpha < hi:
                    k = alpha_bin(alpha, lo, hi, n_bins)
                    if k >= bin_hi:
                        after[q] = min(after[q], alpha)
                    elif k >= bin_lo:
                        counts[q] += 1
    return counts, after


@njit(parallel=True, cache=True)
def window_events(lines, query_offsets, active, scale, window, slots_of_query, after, ranking):
    """Fill, sort and sweep every query's crossings of one window; one event per (alpha, query) group.

    # IN  lines ``(a, b, gains, discounts, boosting, expected)``: the two rankers' scores, the gains
    #     and discounts, the form and the tie rule; window ``(lo, hi, n_bins, bin_lo, bin_hi)``
    # IN/OUT ranking ``(order, position_of)``: each query's ranking at the window's start, then after it
    # IN  slots_of_query (n_queries + 1,) int64: offsets of each query's crossings in the window
    #     after (n_queries,): each query's first crossing beyond the window (or hi)
    # OUT at, delta, point_delta (n_window,) float64; keep (n_window,) bool: event t of a query's
    #     slice is its t-th group (later slots unused); keep marks groups that change the metric
    """
    a, b, _, _, boosting, _ = lines
    lo, hi, n_bins, bin_lo, bin_hi = window
    n_queries = len(query_offsets) - 1
    total = slots_of_query[-1]
    alphas = np.empty(total)
    rows = np.empty((total, 2), np.int64)
    at, delta, point_delta = np.empty(total), np.empty(total), np.empty(total)
    keep = np.zeros(total, np.bool_)
    largest = _block_size(query_offsets)
    for block in prange(n_blocks(n_queries)):
        buf = _scratch(largest)
        for q in range(block * QUERIES_PER_BLOCK, min(n_queries, (block + 1) * QUERIES_PER_BLOCK)):
            s0, s1 = slots_of_query[q], slots_of_query[q + 1]
            if not active[q] or s1 == s0:
                continue
            _fill(a, b, query_offsets[q], query_offsets[q + 1], lo, hi, boosting, n_bins, bin_lo, bin_hi,
                  alphas[s0:s1], rows[s0:s1])
            by_alpha = np.argsort(alphas[s0:s1], kind="mergesort")
            _sweep_query(q, lines, query_offsets, scale[q], after[q], alphas[s0:s1], rows[s0:s1], by_alpha,
                         ranking, buf, (at[s0:s1], delta[s0:s1], point_delta[s0:s1], keep[s0:s1]))
    return at, delta, point_delta, keep


@njit(cache=True)
def _scratch(largest):
    """Per-block buffers of one query's group: (rows, slots, old, new, score, block, sorted rows, stamp)."""
    return (np.empty(largest, np.int64), np.empty(largest, np.int64), np.empty(largest, np.int64),
            np.empty(largest, np.int64), np.empty(largest), np.empty(largest, np.int64),
            np.empty(largest, np.int64), np.full(largest, -1, np.int64))


@njit(cache=True)
def _fill(a, b, row_lo, row_hi, lo, hi, boosting, n_bins, bin_lo, bin_hi, alphas, rows):
    """The query's crossings of the window's bins, pairs (i < j) in row order."""
    t = 0
    for i in range(row_lo, row_hi):
        for j in range(i + 1, row_hi):
            alpha = crossing(a[i] - a[j], b[i] - b[j], boosting)
            if alpha > lo and alpha < hi:
                k = alpha_bin(alpha, lo, hi, n_bins)
                if bin_lo <= k < bin_hi:
                    alphas[t] = alpha
                    rows[t, 0], rows[t, 1] = i, j
                    t += 1


@njit(cache=True)
def _sweep_query(q, lines, query_offsets, scale, after, alphas, rows, by_alpha, ranking, buf, events):
    """Twin of the reference's ``sweep_crossings`` for one query: re-rank each group of equal alpha,
    record its event in ``events`` ``(at, delta, point_delta, keep)``."""
    at, delta, point_delta, keep = events
    group_rows, slots, old, new, score, block, sorted_rows, stamp = buf
    row_lo = query_offsets[q]
    n_events, s = 0, 0
    while s < len(by_alpha):
        alpha = alphas[by_alpha[s]]
        e, m = s, 0
        while e < len(by_alpha) and (e == s or close(alphas[by_alpha[e - 1]], alphas[by_alpha[e]])):
            for side in range(2):
                r = rows[by_alpha[e], side]
                if stamp[r - row_lo] != s:  # first sight of r in the group starting at s
                    stamp[r - row_lo] = s
                    group_rows[m] = r
                    m += 1
            e += 1
        following = alphas[by_alpha[e]] if e < len(by_alpha) else after
        group = (group_rows[:m], slots[:m], old[:m], new[:m], score[:m], block[:m], sorted_rows[:m])
        mid = 0.5 * (alphas[by_alpha[e - 1]] + following)
        change, at_point, changed = _regroup(group, lines, row_lo, mid, ranking)
        at[n_events], delta[n_events], point_delta[n_events] = alpha, change * scale, at_point * scale
        keep[n_events] = changed
        n_events += 1
        s = e
    for t in range(len(by_alpha)):  # clean stamps for the next query of the block
        stamp[rows[t, 0] - row_lo] = -1
        stamp[rows[t, 1] - row_lo] = -1


@njit(cache=True)
def _regroup(group, lines, row_lo, mid, ranking):
    """Re-rank one group among the slots it holds, by score at ``mid`` (ties by row id).

    ``group``: the group's buffers ``(rows, slots, old, new, score, block, sorted_rows)``.

    Returns the DCG change on the next interval, the change from the interval before
    to the crossing point itself (tied blocks as in the reference's ``point_gains``),
    and whether any term of either is non-zero. Updates ``order`` and ``position_of``.
    """
    group_rows, slots, old, new, score, block, sorted_rows = group
    a, b, gains, discounts, boosting, expected = lines
    order, position_of = ranking
    m = len(group_rows)
    for t in range(m):
        slots[t] = position_of[group_rows[t]]
    _sort_ints(slots)
    for t in range(m):
        old[t] = order[slots[t]]
        new[t] = old[t]
    _sort_ints(new)
    for t in range(m):
        score[t] = score_at(a[new[t]], b[new[t]], mid, boosting)
    _sort_by_descending_score(new, score)
    change, changed = 0.0, False
    top, n_blocks_here = -1, 0
    for t in range(m):
        term = (gains[new[t]] - gains[old[t]]) * discounts[slots[t] - row_lo]
        change += term
        changed |= term != 0.0
        top = max(top, np.searchsorted(slots, position_of[new[t]]))  # old slot index of new[t]
        block[t] = n_blocks_here
        if top == t:
            n_blocks_here += 1
    at_point, start = 0.0, 0
    for t in range(m + 1):
        if t < m and block[t] == block[start]:
            continue
        mean = 0.0
        if expected:
            for u in range(start, t):
                mean += gains[old[u]]
            mean /= t - start
        else:
            sorted_rows[start:t] = old[start:t]
            _sort_ints(sorted_rows[start:t])
        for u in range(start, t):
            g = mean if expected else gains[sorted_rows[u]]
            term = (g - gains[old[u]]) * discounts[slots[u] - row_lo]
            at_point += term
            changed |= term != 0.0
        start = t
    for t in range(m):
        order[slots[t]] = new[t]
        position_of[new[t]] = slots[t]
    return change, at_point, changed


@njit(cache=True)
def _sort_ints(values):
    """Ascending insertion sort in place (groups are small)."""
    for i in range(1, len(values)):
        item, j = values[i], i - 1
        while j >= 0 and values[j] > item:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = item


@njit(cache=True)
def _sort_by_descending_score(rows, score):
    """Stable insertion sort of ``rows`` (and ``score``) by descending score."""
    for i in range(1, len(rows)):
        item, value, j = rows[i], score[i], i - 1
        while j >= 0 and score[j] < value:
            rows[j + 1], score[j + 1] = rows[j], score[j]
            j -= 1
        rows[j + 1], score[j + 1] = item, value

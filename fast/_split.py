r"""Split-finding kernels of the fast tree grower.

The calling thread scans each allowed feature's histogram left to right (a running
sum over value bins, O(n_bins)), keeping its best gain; then applies the tie rule
of `twinrank.reference.tree` (its **Ties**)::

    scan features    serial       gains[f] = best gain of feature f            O(d * n_bins)
    G* = max gains   serial       exact: a max does not depend on the order    O(d)
    floor            G* - rtol * (|G*| + parent score)  (reference.tree.tie_floor)
    f = first feature with gains[f] >= floor                                    O(d)
    rescan f         serial       first (bin, side) of gain >= floor             O(n_bins)

The choice is the reference's first tied candidate in the order (feature, bin,
side), whatever the thread count; the twins' gains may differ in the last bits,
far less than the tolerance. Side 0: missing rows right, 1: missing rows left,
2: missing rows in a third child (``missing_split="separate"``).

The scan is serial: O(d * 256) per node is microseconds, less than waking the
thread pool, while a ``prange`` here cost about a second of compilation
(``benchmarks/cold_start.py``); the histograms, O(n_node * d), are where threads pay.

Gains follow Chen & Guestrin 2016, Eq. 7 (without 1/2), minus the cost penalty;
the arithmetic is written in the reference's order and never uses fastmath.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from twinrank.reference.binning import MISSING_BIN

@njit(cache=True, inline='always')
def score(g, h, l2):
    r"""$G^2 / (H + \lambda_2)$, 0 if the denominator is not positive."""
    denominator = h + l2
    return g * g / denominator if denominator > 0 else 0.0


@njit(cache=True, inline='always')
def _gain(g_left, h_left, c_left, g, h, c, parent_score, penalty, min_rows, min_hessian, l2):
    """The candidate's gain, or -inf if a child is below ``min_rows`` or ``min_hessian``."""
    g_right, h_right, c_right = g - g_left, h - h_left, c - c_left
    if c_left < min_rows or c_right < min_rows or h_left < min_hessian or h_right < min_hessian:
        return -np.inf
    return score(g_left, h_left, l2) + score(g_right, h_right, l2) - parent_score - penalty


@njit(cache=True)
def scan_feature(slots, n_bins, g, h, c, parent_score, penalty, min_rows, min_hessian, l2,
                 three_way, floor):
    """The first candidate ``(gain, bin, side)`` of one feature whose gain is ``>= floor``, else its
    first best; ``floor=np.inf``: the first best. O(n_bins).

    With ``three_way`` and missing rows that can make a child (``min_rows``,
    ``min_hessian``): the three-way candidates of bins ``0 .. n_bins - 2`` (side 2).
    Otherwise bins ``0 .. n_bins - 2``: missing rows right, then (if any) left. The
    last value bin only with missing rows (all values left, missing right).
    """
    # IN slots (>= 256, >= 3) the feature's histogram: g, h, count first (the grower's has padding slots and lane)
    g_miss, h_miss, c_miss = slots[MISSING_BIN, 0], slots[MISSING_BIN, 1], slots[MISSING_BIN, 2]
    if three_way and c_miss > 0 and c_miss >= min_rows and h_miss >= min_hessian:
        return _scan_three_way(slots, n_bins, g, h, c, parent_score, penalty, min_rows,
                               min_hessian, l2, floor)
    best, best_bin, best_side = -np.inf, -1, 0
    g_left = h_left = c_left = 0.0
    for b in range(n_bins):
        g_left += slots[b, 0]
        h_left += slots[b, 1]
        c_left += slots[b, 2]
        last = b == n_bins - 1
        if not last or c_miss > 0:
            gain = _gain(g_left, h_left, c_left, g, h, c, parent_score, penalty, min_rows,
                         min_hessian, l2)
            if gain > best:
                best, best_bin, best_side = gain, b, 0
                if best >= floor:
                    break
        if not last and c_miss > 0:
            gain = _gain(g_left + g_miss, h_left + h_miss, c_left + c_miss, g, h, c, parent_score,
                         penalty, min_rows, min_hessian, l2)
            if gain > best:
                best, best_bin, best_side = gain, b, 1
                if best >= floor:
                    break
    return best, best_bin, best_side


@njit(cache=True)
def _scan_three_way(slots, n_bins, g, h, c, parent_score, penalty, min_rows, min_hessian, l2,
                    floor):
    """``scan_feature`` over the three-way candidates ``b = 0 .. n_bins - 2`` (side 2): the
    non-missing rows right of ``b`` are the parent's minus the left's minus the missing ones."""
    g_miss, h_miss, c_miss = slots[MISSING_BIN, 0], slots[MISSING_BIN, 1], slots[MISSING_BIN, 2]
    best, best_bin = -np.inf, -1
    g_left = h_left = c_left = 0.0
    for b in range(n_bins - 1):
        g_left += slots[b, 0]
        h_left += slots[b, 1]
        c_left += slots[b, 2]
        g_right, h_right, c_right = g - g_left - g_miss, h - h_left - h_miss, c - c_left - c_miss
        if (c_left < min_rows or c_right < min_rows or h_left < min_hessian
                or h_right < min_hessian):
            continue
        gain = (score(g_left, h_left, l2) + score(g_right, h_right, l2) + score(g_miss, h_miss, l2)
                - parent_score - penalty)
        if gain > best:
            best, best_bin = gain, b
            if best >= floor:
                break
    return best, best_bin, 2


@njit(cache=True)
def best_split(hist, g, h, c, n_bins, allowed, penalty, min_rows, min_hessian, l2, three_way,
               min_gain, rtol, gradient_noise, gains, bins, sides):
    """The feature of the node's best split, -1 if no valid candidate's gain beats ``min_gain``
    plus the tie tolerance and ``score(gradient_noise, h, l2)`` (the reference's ``rounding_gain``);
    its gain, bin, side: in the buffers at that feature.

    Scans the features one after the other on the calling thread, then applies the
    tie rule (module docstring).

    # IN  hist (d, >= 256, >= 3): g, h, count first; n_bins (d,); allowed (d,) bool; penalty (d,);
    #     three_way: separate mode's three-way candidates where a feature's missing rows can
    #     make a child;
    #     rtol: twinrank.reference.tree.GAIN_TIE_RTOL; gradient_noise: rtol * sum |g| of the tree
    # BUF gains (d,) float64, bins (d,) int64, sides (d,) int64: per-feature bests
    """
    parent_score = score(g, h, l2)
    n_features = len(allowed)
    for f in range(n_features):
        _scan_allowed(np.int64(f), hist, g, h, c, parent_score, n_bins, allowed, penalty, min_rows,
                      min_hessian, l2, three_way, gains, bins, sides)
    best = -np.inf
    for f in range(n_features):
        best = max(best, gains[f])
    scale = abs(best) + parent_score
    if best == -np.inf or not best > min_gain + rtol * scale + score(gradient_noise, h, l2):
        return -1
    floor = best - rtol * scale  # reference.tree.tie_floor
    for f in range(n_features):
        if gains[f] >= floor:  # the first feature with a tied candidate: its first one
            gains[f], bins[f], sides[f] = scan_feature(
                hist[f], n_bins[f], g, h, c, parent_score, penalty[f], min_rows, min_hessian, l2,
                three_way, floor)
            return f
    return -1


@njit(cache=True, inline='always')
def _scan_allowed(f, hist, g, h, c, parent_score, n_bins, allowed, penalty, min_rows, min_hessian,
                  l2, three_way, gains, bins, sides):
    gains[f], bins[f], sides[f] = -np.inf, -1, 0
    if allowed[f]:
        gains[f], bins[f], sides[f] = scan_feature(hist[f], n_bins[f], g, h, c, parent_score,
                                                   penalty[f], min_rows, min_hessian, l2, three_way,
                                                   np.inf)


@njit(cache=True, inline='always')
def left_stats(slots, b, missing_left):
    """``(G, H, count)`` of the left child ``bin <= b`` (plus the missing slot), summed as the scan
    sums them."""
    g_left = h_left = c_left = 0.0
    for k in range(b + 1):
        g_left += slots[k, 0]
        h_left += slots[k, 1]
        c_left += slots[k, 2]
    if missing_left:
        g_left += slots[MISSING_BIN, 0]
        h_left += slots[MISSING_BIN, 1]
        c_left += slots[MISSING_BIN, 2]
    return g_left, h_left, c_left

r"""Split-finding kernels of the fast tree grower.

The calling thread scans each allowed feature's histogram left to right (a running
sum over value bins, O(n_bins)), keeping its best gain; then applies the tie rule
of `twinrank.reference.trees.tree` (its **Ties**)::

    scan features    serial       gains[f] = best gain of feature f            O(d * n_bins)
    G* = max gains   serial       exact: a max does not depend on the order    O(d)
    floor            G* - rtol * (|G*| + parent score)  (reference.tree.tie_floor)
    f = first feature with gains[f] >= floor                                    O(d)
    rescan f         serial       first (bin, side) of gain >= floor             O(n_bins)

The choice is the reference's first tied candidate in the order (feature, bin,
side), whatever the thread count; the twins' gains may differ in the last bits,
far less than the tolerance. Side 0: missing rows right, 1: missing rows left,
2: missing rows in a third child (``missing_split="separate"``).

**Counts.** The grower's histograms sum $(g, h)$ only; a feature's rows per bin are
counted when a candidate needs them (``_counts``). A feature not counted yet is
scanned as if each candidate kept ``min_rows`` rows on both sides: its gain is an
upper bound of its best. Two steps take a candidate, and each first checks it
(``_counts.enough_rows``); a candidate that fails gets its feature counted and
rescanned, and the step is taken again::

    the maximum G*   the first feature of largest gain: its candidate checked, so that
                     G* (and the tie floor) is the exact one
    the choice       the first feature with a gain >= floor: its first candidate >= floor
                     checked (earlier ones are below the floor even as upper bounds)

A feature missing in some row of the data (``has_missing``) has its node's missing rows
proven present or counted before its scan (they decide which candidates it has). The
result is the split that counts of every feature would give. A histogram with
its counts (``tree.find_best_split``) has every feature counted: no check, no row
read.

The scan is serial: O(d * 256) per node is microseconds, less than waking the
thread pool, while a ``prange`` here cost about a second of compilation
(``benchmarks/cold_start.py``); the histograms, O(n_node * d), are where threads pay.

Gains follow Chen & Guestrin 2016, Eq. 7 (without 1/2), minus the cost penalty;
the arithmetic is written in the reference's order and never uses fastmath.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.trees._counts import enough_rows, missing_rows
from twinrank.reference.trees.binning import MISSING_BIN

# What a node's split search obeys: the leaf minimums, L2, whether three-way candidates exist,
# the gain to beat and the tie tolerance (:func:`best_split`).
SplitRules = namedtuple("SplitRules", ["min_rows", "min_hessian", "l2", "three_way", "min_gain", "rtol"])


@njit(cache=True)
def score(g, h, l2):
    r"""$G^2 / (H + \lambda_2)$, 0 if the denominator is not positive."""
    denominator = h + l2
    return g * g / denominator if denominator > 0 else 0.0


@njit(cache=True)
def _gain(g_left, h_left, c_left, g, h, c, counted, parent_score, penalty, min_rows, min_hessian, l2):
    """The candidate's gain, or -inf if a child is below ``min_hessian`` or (``counted``) below
    ``min_rows``."""
    g_right, h_right, c_right = g - g_left, h - h_left, c - c_left
    if h_left < min_hessian or h_right < min_hessian:
        return -np.inf
    if counted and (c_left < min_rows or c_right < min_rows):
        return -np.inf
    return score(g_left, h_left, l2) + score(g_right, h_right, l2) - parent_score - penalty


@njit(cache=True)
def scan_feature(slots, counts, counted, n_bins, g, h, c, c_miss, parent_score, penalty, min_rows,
                 min_hessian, l2, three_way, floor):
    """The first candidate ``(gain, bin, side)`` of one feature whose gain is ``>= floor``, else its
    first best; ``floor=np.inf``: the first best. O(n_bins).

    With ``three_way`` and missing rows that can make a child (``min_rows``,
    ``min_hessian``): the three-way candidates of bins ``0 .. n_bins - 2`` (side 2).
    Otherwise bins ``0 .. n_bins - 2``: missing rows right, then (if any) left. The
    last value bin only with missing rows (all values left, missing right).

    # IN slots (>= 256, >= 2) the feature's histogram: g, h first; counts (>= 256,) its rows per
    #    bin, read only if ``counted`` (else ``min_rows`` is taken as met: an upper bound);
    #    c_miss: its missing rows in the node (exact if counted; else a stand-in with the same
    #    answers to "> 0" and, three-way, ">= min_rows": ``_counts.missing_rows``)
    """
    g_miss, h_miss = slots[MISSING_BIN, 0], slots[MISSING_BIN, 1]
    if three_way and c_miss > 0 and c_miss >= min_rows and h_miss >= min_hessian:
        return _scan_three_way(slots, counts, counted, n_bins, g, h, c, c_miss, parent_score, penalty,
                               min_rows, min_hessian, l2, floor)
    best, best_bin, best_side = -np.inf, -1, 0
    g_left = h_left = c_left = 0.0
    for b in range(n_bins):
        g_left += slots[b, 0]
        h_left += slots[b, 1]
        if counted:
            c_left += counts[b]
        last = b == n_bins - 1
        if not last or c_miss > 0:
            gain = _gain(g_left, h_left, c_left, g, h, c, counted, parent_score, penalty, min_rows,
                         min_hessian, l2)
            if gain > best:
                best, best_bin, best_side = gain, b, 0
                if best >= floor:
                    break
        if not last and c_miss > 0:
            gain = _gain(g_left + g_miss, h_left + h_miss, c_left + c_miss, g, h, c, counted, parent_score,
                         penalty, min_rows, min_hessian, l2)
            if gain > best:
                best, best_bin, best_side = gain, b, 1
                if best >= floor:
                    break
    return best, best_bin, best_side


@njit(cache=True)
def _scan_three_way(slots, counts, counted, n_bins, g, h, c, c_miss, parent_score, penalty, min_rows,
                    min_hessian, l2, floor):
    """``scan_feature`` over the three-way candidates ``b = 0 .. n_bins - 2`` (side 2): the
    non-missing rows right of ``b`` are the parent's minus the left's minus the missing ones."""
    g_miss, h_miss = slots[MISSING_BIN, 0], slots[MISSING_BIN, 1]
    best, best_bin = -np.inf, -1
    g_left = h_left = c_left = 0.0
    for b in range(n_bins - 1):
        g_left += slots[b, 0]
        h_left += slots[b, 1]
        if counted:
            c_left += counts[b]
        g_right, h_right, c_right = g - g_left - g_miss, h - h_left - h_miss, c - c_left - c_miss
        if h_left < min_hessian or h_right < min_hessian:
            continue
        if counted and (c_left < min_rows or c_right < min_rows):
            continue
        gain = (score(g_left, h_left, l2) + score(g_right, h_right, l2) + score(g_miss, h_miss, l2)
                - parent_score - penalty)
        if gain > best:
            best, best_bin = gain, b
            if best >= floor:
                break
    return best, best_bin, 2


@njit(cache=True)
def best_split(hist, node_sums, n_bins, allowed, penalty, rules, gradient_noise, scans, counts, counted,
               has_missing, node):
    """The feature of the node's best split, -1 if the best candidate's gain before its cost penalty
    does not beat ``min_gain``
    plus the tie tolerance and ``score(gradient_noise, h, l2)`` (the reference's ``rounding_gain``);
    its gain, bin, side: in the ``scans`` buffers at that feature.

    Scans the features one after the other on the calling thread, then takes the maximum
    and the tied choice, each checked for its rows (module docstring).

    # IN  hist (d, >= 256, >= 2): g, h first; node_sums: the node's (G, H, n); n_bins (d,);
    #     allowed (d,) bool; penalty (d,); rules (:data:`SplitRules`): min_rows, min_hessian, l2,
    #     three_way (separate mode's three-way candidates where a feature's missing rows can make a
    #     child), min_gain, rtol (twinrank.reference.trees.tree.GAIN_TIE_RTOL);
    #     gradient_noise: rtol * sum |g| of the tree
    # BUF scans: ``(gains (d,) float64, bins (d,) int64, sides (d,) int64, exact (d,) bool)``, the
    #     per-feature bests (exact: not an upper bound)
    # IN/OUT counts (d, >= 256) float64, counted (d,) bool: each feature's rows per bin, where known;
    #     features counted on demand are added
    # IN  has_missing (d,) bool: features missing in some row of the data; node: the node's rows,
    #     ``(bin_columns, n_rows, order, start, stop, h_max, slack, more, more_start, more_stop,
    #     missing_free)``
    #     (``_counts.missing_rows``)
    """
    g, h, c = node_sums
    min_rows, min_hessian, l2, three_way, min_gain, rtol = rules
    gains, bins, sides, exact = scans
    parent_score = score(g, h, l2)
    n_features = len(allowed)
    if n_features == 0:
        return -1
    for f in range(n_features):
        gains[f], bins[f], sides[f] = -np.inf, -1, 0
        if allowed[f]:
            gains[f], bins[f], sides[f] = _scan(f, hist, node_sums, n_bins, parent_score, penalty, rules,
                                                np.inf, counts, counted, has_missing, node)
        exact[f] = counted[f]
    while True:  # the maximum, exact
        top = np.int64(0)  # not a literal: it would compile _scan and its callees once more
        for f in range(1, n_features):
            if gains[f] > gains[top]:
                top = f
        if gains[top] == -np.inf or exact[top]:
            break
        if not _checked(top, bins[top], sides[top], hist, h, c, min_rows, counts, counted, node):
            gains[top], bins[top], sides[top] = _scan(top, hist, node_sums, n_bins, parent_score, penalty,
                                                      rules, np.inf, counts, counted, has_missing, node)
        exact[top] = True
    best = gains[top]
    scale = abs(best) + parent_score
    if best == -np.inf or not best + penalty[top] > min_gain + rtol * scale + score(gradient_noise, h, l2):
        return -1  # the best candidate's own gain: its cost penalty chooses, it does not stop growth
    floor = best - rtol * scale  # reference.tree.tie_floor
    f = np.int64(0)
    while f < n_features:
        if gains[f] >= floor:  # the first feature with a tied candidate: its first one
            gain, b, side = _scan(f, hist, node_sums, n_bins, parent_score, penalty, rules, floor, counts,
                                  counted, has_missing, node)
            if counted[f] or _checked(f, b, side, hist, h, c, min_rows, counts, counted, node):
                gains[f], bins[f], sides[f] = gain, b, side
                return f
            gains[f], bins[f], sides[f] = _scan(f, hist, node_sums, n_bins, parent_score, penalty, rules,
                                                np.inf, counts, counted, has_missing,
                                                node)  # counted now: maybe below the floor
        else:
            f += 1
    return -1


@njit(cache=True)
def _scan(f, hist, node_sums, n_bins, parent_score, penalty, rules, floor, counts, counted, has_missing,
          node):
    """``scan_feature`` of feature ``f`` with what is known of its rows (counted, or its missing
    rows proven or counted: ``_counts.missing_rows``)."""
    g, h, c = node_sums
    min_rows, min_hessian, l2, three_way, _, _ = rules
    c_miss, counted[f] = missing_rows(f, hist[f], has_missing[f], three_way, min_rows, counts[f], counted[f],
                                      node)
    return scan_feature(hist[f], counts[f], counted[f], n_bins[f], g, h, c, c_miss, parent_score,
                        penalty[f], min_rows, min_hessian, l2, three_way, floor)


@njit(cache=True)
def _checked(f, b, side, hist, h, c, min_rows, counts, counted, node):
    """Whether feature ``f``'s candidate ``(b, side)`` keeps ``min_rows`` rows on each side
    (``_counts.enough_rows``); marks ``f`` counted if its rows were counted."""
    valid, now_counted = enough_rows(f, hist[f], b, side, h, c, min_rows, counts[f], node)
    counted[f] = counted[f] or now_counted
    return valid


@njit(cache=True)
def left_stats(slots, b, missing_left):
    """``(G, H)`` of the left child ``bin <= b`` (plus the missing slot), summed as the scan sums them."""
    g_left = h_left = 0.0
    for k in range(b + 1):
        g_left += slots[k, 0]
        h_left += slots[k, 1]
    if missing_left:
        g_left += slots[MISSING_BIN, 0]
        h_left += slots[MISSING_BIN, 1]
    return g_left, h_left

"""The best-first loop of the fast tree grower, compiled whole (no Python between nodes).

State per node id (creation order, as in the reference): its segment of the row
buffers, its statistics, and for a leaf its best split. Histograms live in a
pool of ``max_leaves`` slots; a leaf keeps a slot only while it may still be
split. Splitting a leaf (sibling subtraction, Ke et al. 2017, Sec. 3)::

    partition its rows          -> left segment | right segment   O(n_node)
    build the smaller child     O(n_small * d)
    parent slot -= smaller      O(d * 256): the larger child, no pass over its rows
    scan both children          O(d * 256)

Children that cannot be split (depth limit, fewer than ``2 * min_rows`` rows, or
the last split of the tree) get no histogram at all.

Calls pass ``np.int64(0)`` / ``np.bool_(...)`` rather than literals: numba would
compile one version of the callee per literal value.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from twinrank.reference.binning import MISSING_BIN

from ._histogram import N_SLOTS, build_into, constant_hessian
from ._partition import PARTITION_BLOCK, partition
from ._split import best_split, left_stats

NO_SPLIT = -1


@njit(cache=True)
def grow(bin_columns, bin_rows, gradients, hessians, rows, n_bins, feature_mask, penalty,
         max_leaves, max_depth, min_rows, min_hessian, l2, min_gain, n_threads,
         feature, bin_threshold, left, right, missing, value, gain, count, hessian_sum):
    """Grow one tree into the node arrays; return the number of nodes.

    # IN  bin_columns, bin_rows (n_rows * d,) uint8: the bins column-major and row-major;
    #     gradients, hessians (n_rows,); rows (m,) int32 row ids; n_bins (d,);
    #     feature_mask (2 * max_leaves - 1, d) bool; penalty (d,) cost_lambda * feature_cost;
    #     n_threads: numba's thread count (how work is cut, never the result)
    # OUT node arrays (2 * max_leaves - 1,), preset to leaves (-1 / 0)
    """
    n_nodes_max, n_features, m = 2 * max_leaves - 1, len(n_bins), len(rows)
    n_rows = len(gradients)
    orders = (rows.copy(), np.empty_like(rows))  # the two row buffers
    gh = np.empty((m, 2))  # (m, 2) gathered gradients and hessians of a node
    goes_left = np.empty(m, dtype=np.uint8)
    block_lefts = np.empty(m // PARTITION_BLOCK + 2, dtype=np.int64)
    hist = np.empty((max_leaves, n_features, N_SLOTS, 3))  # (slots, d, 256, 3) histogram pool
    free_slots = list(range(max_leaves - 1, -1, -1))
    scans = (np.empty(n_features), np.empty(n_features, dtype=np.int64),
             np.empty(n_features, dtype=np.int64))  # per-feature best gain, bin, side of a scan
    start = np.zeros(n_nodes_max, dtype=np.int64)  # a node's rows: orders[buf][start:stop]
    stop = np.zeros(n_nodes_max, dtype=np.int64)
    buf = np.zeros(n_nodes_max, dtype=np.int64)
    depth = np.zeros(n_nodes_max, dtype=np.int64)
    g_sum = np.zeros(n_nodes_max)
    slot = np.full(n_nodes_max, -1, dtype=np.int64)  # histogram slot, -1 if none
    best_gain = np.full(n_nodes_max, -np.inf)  # a leaf's best split: gain, feature, bin, side
    best_feature = np.full(n_nodes_max, NO_SPLIT, dtype=np.int64)
    best_bin = np.zeros(n_nodes_max, dtype=np.int64)
    best_side = np.zeros(n_nodes_max, dtype=np.int64)
    is_const, h0 = constant_hessian(hessians, rows)

    root = np.int64(0)
    g_root = h_root = 0.0
    for i in range(m):
        g_root += gradients[rows[i]]
        h_root += hessians[rows[i]]
    stop[root] = m
    _set_stats(root, g_root, h_root, np.float64(m), l2, g_sum, hessian_sum, count, value)
    n_nodes, n_leaves = 1, 1
    if _may_split(root, depth, count, max_depth, min_rows):
        slot[root] = free_slots.pop()
        build_into(hist[slot[root]], bin_columns, bin_rows, gradients, hessians, orders[0], root, m,
                   gh, is_const, h0, n_threads, hist[slot[root]], np.bool_(False))
        _evaluate(root, hist, slot, free_slots, g_sum, hessian_sum, count, n_bins, feature_mask,
                  penalty, min_rows, min_hessian, l2, min_gain, scans, best_gain, best_feature,
                  best_bin, best_side)

    while n_leaves < max_leaves:
        k = _best_leaf(n_nodes, best_feature, best_gain)
        if k < 0:
            break
        f, b = best_feature[k], best_bin[k]
        slots = hist[slot[k], f]  # (256, 3) the split feature's histogram
        g_left, h_left, c_left = left_stats(slots, b, best_side[k] == 1)
        if slots[MISSING_BIN, 2] > 0:
            missing_left = best_side[k] == 1
        else:
            missing_left = c_left >= count[k] - c_left
        src, mid = buf[k], start[k] + np.int64(c_left)
        partition(orders[src], orders[1 - src], start[k], stop[k],
                  bin_columns[f * n_rows:(f + 1) * n_rows], b, missing_left, np.int64(c_left),
                  goes_left, block_lefts)
        kl, kr = n_nodes, n_nodes + 1
        feature[k], bin_threshold[k], gain[k] = f, b, best_gain[k]
        left[k], right[k], missing[k] = kl, kr, kl if missing_left else kr
        best_feature[k] = NO_SPLIT
        start[kl], stop[kl], start[kr], stop[kr] = start[k], mid, mid, stop[k]
        buf[kl] = buf[kr] = 1 - src
        depth[kl] = depth[kr] = depth[k] + 1
        _set_stats(kl, g_left, h_left, c_left, l2, g_sum, hessian_sum, count, value)
        _set_stats(kr, g_sum[k] - g_left, hessian_sum[k] - h_left, count[k] - c_left, l2,
                   g_sum, hessian_sum, count, value)
        n_nodes += 2
        n_leaves += 1
        parent_slot, slot[k] = slot[k], -1
        if n_leaves == max_leaves:
            break
        small, large = (kl, kr) if count[kl] <= count[kr] else (kr, kl)
        split_small = _may_split(small, depth, count, max_depth, min_rows)
        split_large = _may_split(large, depth, count, max_depth, min_rows)
        if not (split_small or split_large):
            free_slots.append(parent_slot)
            continue
        # The smaller child is built into a fresh slot when the larger one needs the
        # parent's slot (by subtraction), else into the parent's slot directly.
        target = free_slots.pop() if split_large else parent_slot
        build_into(hist[target], bin_columns, bin_rows, gradients, hessians, orders[1 - src],
                   start[small], stop[small], gh, is_const, h0, n_threads, hist[parent_slot],
                   np.bool_(split_large))
        if split_large:
            slot[large] = parent_slot
        if split_small:
            slot[small] = target
        elif target != parent_slot:
            free_slots.append(target)
        for child in (kl, kr):
            if slot[child] >= 0:
                _evaluate(child, hist, slot, free_slots, g_sum, hessian_sum, count, n_bins,
                          feature_mask, penalty, min_rows, min_hessian, l2, min_gain, scans,
                          best_gain, best_feature, best_bin, best_side)
    return n_nodes


@njit(cache=True)
def _set_stats(k, g, h, c, l2, g_sum, hessian_sum, count, value):
    g_sum[k], hessian_sum[k], count[k] = g, h, np.int64(c)
    value[k] = -g / (h + l2) if h + l2 > 0 else 0.0


@njit(cache=True)
def _may_split(k, depth, count, max_depth, min_rows):
    """Whether node ``k`` could have a valid split at all: depth and row count allow one."""
    return depth[k] < max_depth and count[k] >= 2 * min_rows


@njit(cache=True)
def _best_leaf(n_nodes, best_feature, best_gain):
    """The leaf of largest best gain (ties: lowest id), -1 if no leaf can be split."""
    k, top = -1, -np.inf
    for node in range(n_nodes):
        if best_feature[node] != NO_SPLIT and best_gain[node] > top:
            k, top = node, best_gain[node]
    return k


@njit(cache=True)
def _evaluate(k, hist, slot, free_slots, g_sum, hessian_sum, count, n_bins, feature_mask, penalty,
              min_rows, min_hessian, l2, min_gain, scans, best_gain, best_feature, best_bin,
              best_side):
    """Record leaf ``k``'s best split if its gain beats ``min_gain``; else free its histogram."""
    gains, bins, sides = scans
    f = best_split(hist[slot[k]], g_sum[k], hessian_sum[k], np.float64(count[k]), n_bins,
                   feature_mask[k], penalty, min_rows, min_hessian, l2, gains, bins, sides)
    if f >= 0 and gains[f] > min_gain:
        best_gain[k], best_feature[k], best_bin[k], best_side[k] = gains[f], f, bins[f], sides[f]
    else:
        free_slots.append(slot[k])
        slot[k] = -1

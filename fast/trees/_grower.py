"""The best-first loop of the fast tree grower, compiled whole (no Python between nodes).

State per node id (creation order, as in the reference): its segment of the row
buffers, its statistics, and for a leaf its best split. Histograms live in a
pool of ``max_leaves`` slots; a leaf keeps a slot only while it may still be
split. Splitting a leaf (sibling subtraction, Ke et al. 2017, Sec. 3)::

    partition its rows          -> left segment | right segment   O(n_node)
    build the smaller child     O(n_small * d)
    parent slot -= smaller      O(d * 256): the larger child, no pass over its rows
    scan both children          O(d * 256), at once: one task per child (``_evaluate_nodes``;
                                one after the other without big nodes: :func:`big_nodes`)

Histograms sum $(g, h)$; a split's rows per bin are counted where it needs them
(``_counts``, ``_split``), and a child's row count is what the partition counted.
The partition counts the split feature's missing rows as it moves them.

**Active rows (quantized training).** Rounded stochastically to a few bits, most rows'
integers are $(\tilde g, \tilde h) = (0, 0)$: at 4 bits, 82% of the benchmark's rows on
LambdaRank's normalised lambdas and 95% without the normalisation, since a few large
lambdas set the scale and the rest round down. Such a row adds nothing to an integer
histogram, so the histograms sum only the *active* rows. A node's rows are then two
disjoint segments: the inactive ones in the row buffers above, the active ones in two
more buffers (``actives``, split from the tree's rows by :func:`split_rows`), each
segment partitioned at a split as described (:func:`_partition_active`), every row once.
The histograms read the active segment; the children's sizes, the rows counted for
``min_rows`` (``_counts.count_node``) and each row's leaf read both. The sums, hence the
tree, are the same bit for bit. Of the children the one with fewer active rows is built.
With fewer than ``MIN_INACTIVE_SHARE`` of the rows inactive the second list costs about
what it saves, and every row stays in the first (the threshold was measured with
``benchmarks/speed.py``; with many inactive rows, as LambdaMART's lambdas have, the lists
halve a tree's time).

A three-way split (``missing_split="separate"``) partitions twice (left |
right + missing, then right | missing), builds its two smaller children and
gets the largest by subtracting both from the parent's slot. A leaf records
two best splits, row 0 of the mode and row 1 two-way only; the last split of
the tree reads row 1 (one leaf left in the budget). Children that cannot be
split (depth limit, fewer than ``2 * min_rows`` rows, or the last split of the
tree) get no histogram at all.

Calls pass ``np.int64(0)`` / ``np.bool_(...)`` rather than literals, and counters start as
``np.int64(1)``: numba compiles one version of a callee per literal argument type it
sees, even a literal that type inference later widens to ``int64`` (the literal
``n_nodes = 1`` alone compiled ``_child_histograms`` and its callees twice).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange, typeof, types

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.trees._counts import proof_of
from twinrank.fast.trees._histogram import PARALLEL_WORK, SPARSE_RATIO, build_into, zero_features
from twinrank.fast.trees._packed_histogram import PACKED_SKIP_RATIO, build_packed_into, packed_chunk
from twinrank.fast.trees._partition import PARALLEL_ROWS, partition
from twinrank.fast.trees._skipped_bins import (
    SKIP_RATIO,
    build_packed_skipping,
    build_packed_skipping_serial,
    build_skipping,
    build_skipping_serial,
)
from twinrank.fast.trees._split import SplitRules, best_split, left_stats, score
from twinrank.reference.constants import N_SLOTS
from twinrank.reference.trees.binning import MISSING_BIN

GrowerData = namedtuple("GrowerData", ["bin_columns", "bin_rows", "gradients", "hessians", "rows", "n_bins",
                                       "feature_mask", "penalty", "skipping", "has_missing"])
GrowerRules = namedtuple("GrowerRules", ["max_leaves", "max_depth", "min_rows", "min_hessian", "l2",
                                         "min_gain", "gain_rtol", "separate", "n_threads", "big"])
NodeArrays = namedtuple("NodeArrays", ["feature", "bin_threshold", "left", "right", "missing", "value",
                                       "gain", "count", "hessian_sum", "leaf_of_row"])
Workspace = namedtuple("Workspace", ["order1", "gh", "goes_left", "block_lefts", "hist"])
Packing = namedtuple("Packing", ["g_int", "h_int", "g_levels", "h_levels", "max_chunk", "ihist", "pk",
                                 "active0", "active1"])
NO_SPLIT = -1
MIN_INACTIVE_SHARE = 0.1  # quantized: active rows listed apart when at least this share of the rows is inactive


# nogil: a random forest grows several trees at once from Python threads (forest.trees_at_once)
@njit(cache=True, nogil=True)
def grow(data, rules, out, work, packing):
    """Grow one tree into the node arrays; return the number of nodes.

    Five arguments, each a named tuple (numba compiles one grower per kind of ``packing``):

    # IN  data (:data:`GrowerData`): the rows and what the split search reads of them;
    #     rules (:data:`GrowerRules`): the tree's parameters and the thread count
    # OUT out (:data:`NodeArrays`): the node arrays, and the leaf of each row
    # BUF work (:data:`Workspace`): the scratch buffers
    # IN  packing: None, or :data:`Packing` (quantized training)

    Their fields:

    # IN  bin_columns, bin_rows (n_rows * d,) uint8: the bins column-major and row-major;
    #     gradients, hessians (n_rows,) float64 (with ``packing``: its int8 / uint8 integers, read
    #     only for the root's sums); rows (m,) row ids (int32 while they fit), IN/BUF: the first row
    #     buffer, overwritten (``tree._first_buffer``: no copy of a round's every row); n_bins (d,);
    #     feature_mask (2 * max_leaves - 1, d) bool; penalty (d,) cost_lambda * feature_cost;
    #     gain_rtol: twinrank.reference.trees.tree.GAIN_TIE_RTOL (gains that close are ties);
    #     separate: missing_split == "separate"; n_threads: numba's thread count (how work
    #     is cut, never the result); big: None when no node can be partitioned in parallel or
    #     summed in halves (:func:`big_nodes`: numba then compiles neither, nor the parallel loops
    #     of the split search and of the rows' leaves, done on the calling thread), else True
    # OUT node arrays (2 * max_leaves - 1,), preset to leaves (-1 / 0); leaf_of_row (n_rows,)
    #     int32 or (0,): the leaf of each row of the tree (quantized training's refit), if not empty
    # IN  skipping: ``_skipped_bins.sparse_rows`` of the bins (or ``all_dense``): dense nodes are
    #     summed without the sparse features' most frequent bins (``build``); has_missing (d,)
    #     bool: the features with a missing value in some row (``_counts.missing_columns``)
    # BUF work: ``(order1, gh, goes_left, block_lefts, hist)``, from ``tree._work``: the second
    #     row buffer (m,) like ``rows``, gh (m, 2) float64 (with ``packing`` unread: (0, 2)),
    #     goes_left (m,) uint8, block_lefts (2 * (m // PARTITION_BLOCK + 2),) int64 and the
    #     histogram pool (max_leaves + 1, d, FEATURE_SLOTS, LANES) float64 (g, h); any content
    # IN  packing: None, or quantized training's ``Packing(g_int (n_rows,) int8, h_int (n_rows,) uint8,
    #     g_levels, h_levels, max_chunk, ihist (n_threads, d, FEATURE_SLOTS) int64, pk (m,) int64,
    #     active0, active1 (m,) like ``rows``)``: then every histogram is summed packed
    #     (``_packed_histogram``), at most max_chunk rows at a time, over the node's active rows
    #     only (kept in the buffers ``active0``, ``active1``: module docstring). numba compiles
    #     one grower per kind (None or the tuple) and prunes the other's histogram code, so the
    #     exact grower (``twinrank demo``'s helper process) compiles faster (``build``).
    """
    bin_columns, bin_rows, gradients, hessians, rows, n_bins, feature_mask, penalty, skipping, has_missing = (
        data)
    max_leaves, max_depth, min_rows, min_hessian, l2, min_gain, gain_rtol, separate, n_threads, big = rules
    feature, bin_threshold, left, right, missing, value, gain, count, hessian_sum, leaf_of_row = out
    n_nodes_max, n_features, m = 2 * max_leaves - 1, len(n_bins), len(rows)
    n_rows = len(gradients)
    order1, gh, goes_left, block_lefts, hist = work  # gh: a node's gathered (g, h)
    order0 = rows  # the first row buffer is the rows themselves (overwritten)
    orders = (order0, order1)  # the two row buffers
    spare = hist[max_leaves]  # (d, 258, LANES) the second half of a sparse node (``build_into``)
    # one set per sibling (a three-way split's three children are evaluated at once):
    scans = (np.empty((3, n_features)), np.empty((3, n_features), dtype=np.int64),
             np.empty((3, n_features), dtype=np.int64),
             np.empty((3, n_features), dtype=np.bool_))  # per-feature best gain, bin, side, exact of a scan
    counts = np.empty((3, n_features, N_SLOTS))  # a node's rows per bin of the features counted (``_split``)
    # the arrays below are allocated as few kinds of np.empty / np.zeros call as will do, then filled:
    # numba compiles each kind of call apart (np.full, np.zeros of each shape and dtype: ~0.05 s each)
    counted = np.empty((3, n_features), dtype=np.bool_)
    counted[:] = False
    per_node = np.zeros((9, n_nodes_max), dtype=np.int64)
    start, stop, buf = per_node[0], per_node[1], per_node[2]  # a node's rows: orders[buf][start:stop]
    astart, astop, abuf = per_node[3], per_node[4], per_node[5]  # and its active rows: actives[abuf][astart:astop]
    depth, slot = per_node[6], per_node[7]
    free_slots, n_free = per_node[8], np.int64(max_leaves)  # a stack of the free histogram slots, 0 on top
    for i in range(max_leaves):  # (an array, not a list: numba's list code compiled into grow's)
        free_slots[i] = max_leaves - 1 - i
    by_active = False  # whether the active rows are listed apart (then histograms sum them only)
    if packing is None:
        actives = orders  # (no second list: every node's is empty)
        g_root, h_root, g_abs, h_max, h_min = root_sums(gradients, hessians, rows)
    else:
        actives = (packing.active0, packing.active1)
        n_active, g_root, h_root, g_abs, h_max, h_min = split_rows(packing.g_int, packing.h_int, rows, actives[0],
                                                                   order1)
        by_active = n_active <= m * (1.0 - MIN_INACTIVE_SHARE)
        astop[0] = n_active if by_active else 0
        buf[0] = 1 if by_active else 0  # the root's inactive rows are in order1; else all in rows
    summed = (orders, buf, start, stop, actives, abuf, astart, astop, by_active)  # a node's two segments
    missing_free = np.empty((n_nodes_max, n_features), dtype=np.bool_)  # features counted without a missing row
    missing_free[:] = False
    g_sum = np.zeros(n_nodes_max)
    slot[:] = -1  # histogram slot, -1 if none
    # a leaf's best splits (row 0: of the mode, row 1: two-way only): gain, feature, bin, side
    best_gain = np.empty((2, n_nodes_max))  # (2, n_nodes_max)
    best_gain[:] = -np.inf
    best_feature = np.zeros((2, n_nodes_max), dtype=np.int64)
    best_feature[:] = NO_SPLIT
    best_bin = np.zeros((2, n_nodes_max), dtype=np.int64)
    best_side = np.zeros((2, n_nodes_max), dtype=np.int64)
    best = (best_gain, best_feature, best_bin, best_side)

    root = np.int64(0)
    gradient_noise = gain_rtol * g_abs  # reference._split.gradient_noise: see rounding_gain
    proof = proof_of(h_max, h_min, h_root, m)  # (h_max, slack) of the hessian proof (``_counts``)
    stop[root] = m - astop[root]
    _set_stats(root, g_root, h_root, m, l2, g_sum, hessian_sum, count, value)
    n_nodes, n_leaves = np.int64(1), np.int64(1)
    if _may_split(root, depth, count, max_depth, min_rows):
        n_free -= 1
        slot[root] = free_slots[n_free]
        build(packing, hist[slot[root]], bin_columns, bin_rows, gradients, hessians,
              _summed(packing, root, summed), gh, n_threads, hist[slot[root]], np.bool_(False), spare,
              skipping, _totals(root, g_sum, hessian_sum), big)
        _evaluate_nodes(root, np.int64(1), hist, slot, (g_sum, hessian_sum, count), data, rules, gradient_noise,
                        scans, best, counts, counted, summed, proof, missing_free, big)
        n_free = _free_unsplit(root, np.int64(1), slot, free_slots, n_free, best_feature)

    while n_leaves < max_leaves:
        row = 1 if n_leaves == max_leaves - 1 else 0  # the last split adds one leaf: two-way
        k = _best_leaf(n_nodes, best_feature[row], best_gain[row], g_sum, hessian_sum, l2,
                       gain_rtol)
        if k < 0:
            break
        f, b, side = best_feature[row, k], best_bin[row, k], best_side[row, k]
        slots = hist[slot[k], f]  # (256, LANES) the split feature's histogram
        g_left, h_left = left_stats(slots, b, side == 1)
        g_miss, h_miss = slots[MISSING_BIN, 0], slots[MISSING_BIN, 1]
        src = buf[k]
        column = bin_columns[f * n_rows:(f + 1) * n_rows]
        missing_left = side == 1  # without missing rows in the node, set below by the children's sizes
        n_left, n_miss = partition(orders[src], orders[1 - src], start[k], stop[k], column, b, missing_left,
                                   goes_left, block_lefts)
        a_left = a_miss = a_right = np.int64(0)
        if packing is not None and by_active:  # the node's active rows, alike (pruned when packing is None)
            a_left, a_miss, a_right = _partition_active(k, side == 2, column, b, missing_left, goes_left,
                                                        block_lefts, actives, abuf, astart, astop, n_nodes)
        c_left, c_miss = n_left + a_left, n_miss + a_miss
        if side != 2 and c_miss == 0:
            missing_left = c_left >= count[k] - c_left
        mid = start[k] + n_left
        kl, kr, km = n_nodes, n_nodes + 1, n_nodes + 2
        feature[k], bin_threshold[k], gain[k] = f, b, best_gain[row, k]
        left[k], right[k], missing[k] = kl, kr, kl if missing_left else kr
        best_feature[0, k] = best_feature[1, k] = NO_SPLIT
        start[kl], stop[kl], start[kr], stop[kr] = start[k], mid, mid, stop[k]
        buf[kl] = buf[kr] = 1 - src
        n_children = 2
        if side == 2:  # right | missing, moved back into the parent's buffer
            n_children = 3
            n_right = partition(orders[1 - src], orders[src], mid, stop[k], column,
                                np.int64(MISSING_BIN - 1), np.bool_(False), goes_left, block_lefts)[0]
            c_right = n_right + a_right
            missing[k] = km
            stop[kr] = start[km] = mid + np.int64(n_right)
            stop[km] = stop[k]
            buf[kr] = buf[km] = src
            _set_stats(kr, g_sum[k] - g_left - g_miss, hessian_sum[k] - h_left - h_miss, c_right,
                       l2, g_sum, hessian_sum, count, value)
            _set_stats(km, g_miss, h_miss, c_miss, l2, g_sum, hessian_sum, count, value)
        else:
            _set_stats(kr, g_sum[k] - g_left, hessian_sum[k] - h_left, count[k] - c_left, l2,
                       g_sum, hessian_sum, count, value)
        _set_stats(kl, g_left, h_left, c_left, l2, g_sum, hessian_sum, count, value)
        for child in range(kl, kl + n_children):
            depth[child] = depth[k] + 1
            for j in range(n_features):  # a child's rows are some of its parent's (no row = row: numba
                missing_free[child, j] = missing_free[k, j]  # compiles its shape error's formatting, 1.6 s)
        n_nodes += n_children
        n_leaves += n_children - 1
        parent_slot, slot[k] = slot[k], -1
        if n_leaves == max_leaves:
            break
        n_free = _child_histograms(kl, n_children, parent_slot, hist, slot, free_slots, n_free, data, rules,
                                   summed, depth, count, gh, packing, spare, (g_sum, hessian_sum))
        _evaluate_nodes(kl, np.int64(n_children), hist, slot, (g_sum, hessian_sum, count), data, rules,
                        gradient_noise, scans, best, counts, counted, summed, proof, missing_free, big)
        n_free = _free_unsplit(kl, np.int64(n_children), slot, free_slots, n_free, best_feature)
    if len(leaf_of_row) > 0:
        label_rows(big, leaf_of_row, orders[0], orders[1], buf, start, stop, left, n_nodes)
        if packing is not None and by_active:
            label_rows(big, leaf_of_row, actives[0], actives[1], abuf, astart, astop, left, n_nodes)
    return n_nodes


@njit(cache=True, nogil=True)
def label_rows(big, leaf_of_row, order0, order1, buf, start, stop, left, n_nodes):
    """leaf_of_row[r] = k for the rows r of every leaf k: # IN a leaf's rows are
    (order0, order1)[buf[k]][start[k]:stop[k]]; the leaves' rows are disjoint. One leaf per task
    (:func:`_label_leaves`) with ``big`` nodes, else on the calling thread: a tree of so few rows
    (:func:`big_nodes`) is labelled in microseconds, and the parallel loop is not compiled."""
    if big is None:
        for k in range(n_nodes):
            _label_leaf(k, leaf_of_row, order0, order1, buf, start, stop, left)
    else:
        _label_leaves(leaf_of_row, order0, order1, buf, start, stop, left, n_nodes)


@njit(parallel=True, cache=True, nogil=True)
def _label_leaves(leaf_of_row, order0, order1, buf, start, stop, left, n_nodes):
    """:func:`_label_leaf` of every node, one task per node."""
    for node in prange(n_nodes):  # (the index is uint64 in numba's parallel body, int64 where it types
        _label_leaf(np.int64(node), leaf_of_row, order0, order1, buf, start, stop, left)  # the kernel)


@njit(cache=True)
def _label_leaf(k, leaf_of_row, order0, order1, buf, start, stop, left):
    """leaf_of_row[r] = k for the rows r of node ``k`` if it is a leaf."""
    if left[k] == NO_SPLIT:
        order = order0 if buf[k] == 0 else order1
        for i in range(start[k], stop[k]):
            leaf_of_row[order[i]] = k


@njit(cache=True)
def _child_histograms(first, n_children, parent_slot, hist, slot, free_slots, n_free, data, rules, summed,
                      depth, count, gh, packing, spare, sums):
    """Histograms of the children ``first .. first + n_children - 1`` that may be split; return how many
    slots are free (``free_slots[:n_free]``, the stack's top last).

    The child with the most rows to sum (``_summed``; ties: the last) takes the parent's slot
    minus its siblings' histograms, if it may be split; every other child that may be split is
    built (into the parent's slot when the largest does not need it).
    """
    bin_columns, bin_rows, gradients, hessians, skipping = (data.bin_columns, data.bin_rows, data.gradients,
                                                             data.hessians, data.skipping)
    max_depth, min_rows, n_threads = rules.max_depth, rules.min_rows, rules.n_threads
    g_sum, hessian_sum = sums  # the nodes' (G, H)
    large = first
    for child in range(first + 1, first + n_children):
        if _n_summed(packing, child, summed) >= _n_summed(packing, large, summed):
            large = child
    split_large = _may_split(large, depth, count, max_depth, min_rows)
    parent_free = not split_large
    for child in range(first, first + n_children):
        if child == large:
            continue
        split_child = _may_split(child, depth, count, max_depth, min_rows)
        if not (split_child or split_large):
            continue
        if parent_free:
            target, parent_free = parent_slot, False
        else:
            n_free -= 1
            target = free_slots[n_free]
        build(packing, hist[target], bin_columns, bin_rows, gradients, hessians,
              _summed(packing, child, summed), gh, n_threads, hist[parent_slot], np.bool_(split_large),
              spare, skipping, _totals(child, g_sum, hessian_sum), rules.big)
        if split_child:
            slot[child] = target
        else:
            free_slots[n_free] = target
            n_free += 1
    if split_large:
        slot[large] = parent_slot
    elif parent_free:
        free_slots[n_free] = parent_slot
        n_free += 1
    return n_free


@njit(cache=True, nogil=True)
def build(packing, hist, bin_columns, bin_rows, gradients, hessians, segment, gh, n_threads, parent, subtract,
          spare, skipping, totals, big):
    """A dense node big enough for threads: ``build_skipping`` (``packing`` None), or with
    quantized integers ``build_packed_skipping`` when there are sparse features (``skipping``
    other than ``_skipped_bins.all_dense``); other nodes: ``build_into`` or ``build_packed_into``.
    Dense: at least ``1 / SKIP_RATIO`` of the rows with sparse features (packed: ``1 / PACKED_SKIP_RATIO``),
    else ``1 / SPARSE_RATIO``.
    Not inlined: compiled once per kind of ``packing``, with the branch of the other kind pruned (and
    ``build_into``'s halves with ``big`` None: :func:`big_nodes`). The node's rows: ``segment``,
    ``(order, start, stop)``."""
    order, start, stop = segment
    n_features, m = hist.shape[0], stop - start
    sparse_ratio = SKIP_RATIO if len(skipping[1]) < n_features else SPARSE_RATIO  # the row pass below it
    if packing is not None and len(skipping[1]) < n_features:
        sparse_ratio = PACKED_SKIP_RATIO
    skip = m * n_features >= PARALLEL_WORK and m * sparse_ratio * n_features >= bin_columns.size
    if packing is not None:
        g_int, h_int, g_levels, h_levels, max_chunk, ihist, pk, _, _ = packing
        if m == 0:  # no active row: every sum is 0 (and the parent keeps its own)
            zero_features(hist, np.int64(0), n_features)
            return
        chunk, k = packed_chunk(m, g_levels, h_levels, max_chunk)
        packed = (g_int, h_int, chunk, k)
        if skip and len(skipping[1]) < n_features:
            if big is None:  # a small data set: the same sums, no parallel loop compiled
                build_packed_skipping_serial(hist, ihist, bin_columns, packed, segment, pk, n_threads, totals,
                                             skipping, parent, subtract)
            else:
                build_packed_skipping(hist, ihist, bin_columns, packed, segment, pk, n_threads, totals, skipping,
                                      parent, subtract)
        else:
            build_packed_into(hist, ihist, bin_columns, bin_rows, packed, segment, pk, n_threads, parent,
                              subtract, sparse_ratio, big)
    elif skip:  # positions from 0: gh holds the node's (g, h) from its first row on (:func:`gathered_rows`)
        if big is None:  # a small data set: the same sums, no parallel loop compiled
            build_skipping_serial(hist, spare, bin_columns, gradients, hessians, order[start:stop], np.int64(0), m,
                                  gh, n_threads, totals, skipping, parent, subtract)
        else:
            build_skipping(hist, spare, bin_columns, gradients, hessians, order[start:stop], np.int64(0), m, gh,
                           n_threads, totals, skipping, parent, subtract)
    else:
        assert m <= len(gh), "only build_skipping gathers a node's (g, h) in halves"
        build_into(hist, bin_columns, bin_rows, gradients, hessians, order[start:stop], np.int64(0), m, gh,
                   n_threads, parent, subtract, spare, sparse_ratio, big)


def gathered_rows(m: int, n_rows: int, n_features: int, has_sparse: bool, one_layout: bool) -> int:
    """Rows of the gathered ``(g, h)`` buffer ``gh`` for a tree on ``m`` of the ``n_rows`` rows: ``m``,
    or with ``one_layout`` (``_layout.low_memory``) half of them and one where that suffices (8 bytes
    a row less). A node built is the root or a smaller child (at most half its parent's rows), and
    :func:`build` gives the kernels its rows from position 0: when the root is summed by
    ``build_skipping`` (:func:`build`'s rule), which gathers a node of more rows than ``gh`` holds one
    half at a time, half the rows and one suffice. That costs time on two threads: a half's entries
    are one task's, against the other's dense features (the benchmark's root 36-38 against 30-31.5
    ms, where the one pass sums each half's entries on a task of its own, beside half the dense features)."""
    ratio = SKIP_RATIO if has_sparse else SPARSE_RATIO
    root_skips = m * n_features >= PARALLEL_WORK and m * ratio >= n_rows
    return m // 2 + 1 if one_layout and root_skips else m


def big_nodes(n_rows: int, n_features: int) -> bool:
    """Whether a tree on ``n_rows`` x ``n_features`` bins can have a node partitioned in parallel (more
    than ``PARALLEL_ROWS`` rows) or summed in halves (``build_into``: big enough for threads, sparse
    under :func:`build`'s ratio with or without sparse features). If not, the grower is compiled
    without either (``big`` None: a small data set's cold start compiles less), and searches a
    split's children, labels the rows' leaves and sums its dense nodes on the calling thread
    (:func:`_evaluate_nodes`, :func:`label_rows`, the histograms' serial twins: microseconds on so
    few rows; their parallel loops cost 0.5 s of compilation in the fit's process and 1 s in the
    compile helper's): no parallel loop is compiled."""
    smallest = -(-PARALLEL_WORK // max(n_features, 1))  # rows of the smallest node big enough for threads
    return n_rows > PARALLEL_ROWS or smallest * min(SKIP_RATIO, SPARSE_RATIO) < n_rows


@njit(cache=True)
def _summed(packing, k, summed):
    """``(order, start, stop)``: the rows node ``k``'s histogram sums, ``order[start:stop]``: its
    active rows when they are listed apart (``by_active``, quantized training), else all its rows
    (module docstring)."""
    orders, buf, start, stop, actives, abuf, astart, astop, by_active = summed
    if packing is None or not by_active:
        return orders[buf[k]], start[k], stop[k]
    return actives[abuf[k]], astart[k], astop[k]


@njit(cache=True)
def _n_summed(packing, k, summed):
    """How many rows node ``k``'s histogram sums (:func:`_summed`)."""
    _, start, stop = _summed(packing, k, summed)
    return stop - start


@njit(cache=True)
def root_sums(gradients, hessians, rows):
    """``(G, H, sum |g|, max h, min h)`` over ``rows``: the root's statistics."""
    g_root = h_root = g_abs = 0.0
    h_max, h_min = -np.inf, np.inf
    for i in range(len(rows)):
        g, h = gradients[rows[i]], hessians[rows[i]]
        g_root += g
        h_root += h
        g_abs += abs(g)
        h_max, h_min = max(h_max, h), min(h_min, h)
    return g_root, h_root, g_abs, h_max, h_min


@njit(cache=True)
def split_rows(g_int, h_int, rows, active, inactive):
    """Write the rows of ``rows`` whose ``(g_int, h_int)`` is not ``(0, 0)`` to ``active``, the others
    to ``inactive``, both in order; return how many are active and :func:`root_sums` of the integers,
    summed in int64 in the same pass (exact, as float64 sums of them are; without a float add's
    latency in the chain). Branch-free: each row is written to both, and one of the two counts advanced."""
    n_active = n_inactive = 0
    g_root = h_root = g_abs = 0
    h_max, h_min = -1, 256  # float -1: no hessian proof, as -inf (no rows)
    for i in range(len(rows)):
        row = rows[i]
        g, h = np.int64(g_int[row]), np.int64(h_int[row])
        is_active = (g != 0) | (h != 0)
        active[n_active] = row
        inactive[n_inactive] = row
        n_active += is_active
        n_inactive += 1 - is_active
        g_root += g
        h_root += h
        g_abs += abs(g)
        h_max, h_min = max(h_max, h), min(h_min, h)
    return (n_active, np.float64(g_root), np.float64(h_root), np.float64(g_abs), np.float64(h_max),
            np.float64(h_min))


@njit(cache=True)
def _partition_active(k, three_way, column, b, missing_left, goes_left, block_lefts, actives, abuf, astart,
                      astop, first_child):
    """Split node ``k``'s active rows as its other rows are split, into the children ``first_child``,
    ``+ 1`` (and ``+ 2``, missing, if ``three_way``); return their counts ``(left, missing,
    right)`` (right: three-way only), as the partition counts them."""
    kl, kr, km = first_child, first_child + 1, first_child + 2
    src = abuf[k]
    n_left, n_miss = partition(actives[src], actives[1 - src], astart[k], astop[k], column, b, missing_left,
                               goes_left, block_lefts)
    mid = astart[k] + n_left
    astart[kl], astop[kl], astart[kr], astop[kr] = astart[k], mid, mid, astop[k]
    abuf[kl] = abuf[kr] = 1 - src
    n_right = np.int64(0)
    if three_way:  # right | missing, back into the parent's buffer
        n_right = partition(actives[1 - src], actives[src], mid, astop[k], column, np.int64(MISSING_BIN - 1),
                            np.bool_(False), goes_left, block_lefts)[0]
        astop[kr] = astart[km] = mid + n_right
        astop[km] = astop[k]
        abuf[kr] = abuf[km] = src
    return np.int64(n_left), np.int64(n_miss), n_right


@njit(cache=True)
def _totals(k, g_sum, hessian_sum):
    """Node ``k``'s ``(G, H)``: the sums its histogram's bins add up to."""
    return np.array([g_sum[k], hessian_sum[k]])


@njit(cache=True)
def _set_stats(k, g, h, c, l2, g_sum, hessian_sum, count, value):
    g_sum[k], hessian_sum[k], count[k] = g, h, np.int64(c)
    value[k] = -g / (h + l2) if h + l2 > 0 else 0.0


@njit(cache=True)
def _may_split(k, depth, count, max_depth, min_rows):
    """Whether node ``k`` could have a valid split at all: depth and row count allow one."""
    return depth[k] < max_depth and count[k] >= 2 * min_rows


@njit(cache=True)
def _best_leaf(n_nodes, best_feature, best_gain, g_sum, hessian_sum, l2, gain_rtol):
    """The leaf of largest best gain, -1 if no leaf can be split. Ties (the reference's rule):
    gains ``>= top - gain_rtol * scale`` go to the lowest id, ``scale`` the largest
    ``|gain| + score(G, H)`` of a leaf that can be split."""
    top, scale = -np.inf, 0.0
    for node in range(n_nodes):
        if best_feature[node] != NO_SPLIT:
            top = max(top, best_gain[node])
            scale = max(scale, abs(best_gain[node]) + score(g_sum[node], hessian_sum[node], l2))
    floor = top - gain_rtol * scale  # reference.tree.tie_floor
    for node in range(n_nodes):
        if best_feature[node] != NO_SPLIT and best_gain[node] >= floor:
            return node
    return -1


@njit(cache=True, nogil=True)
def _evaluate_nodes(first, n, hist, slot, stats, data, rules, gradient_noise, scans, best, counts, counted, summed,
                    proof, missing_free, big):
    """:func:`_evaluate` of the nodes ``first .. first + n - 1`` that hold a histogram (the siblings of
    a split; ``stats``: the nodes' ``(g_sum, hessian_sum, count)``), each with its own buffers (row
    ``i`` of ``scans``, ``counts``, ``counted``). A node's search reads only its own histogram and
    rows, so it does not depend on which thread runs it: one task per node with ``big`` nodes
    (:func:`_evaluate_in_parallel`), else one after the other on the calling thread (a node of a
    data set so small, :func:`big_nodes`, is searched in microseconds, and the parallel loop,
    about half a second of the split search's compilation, is not compiled).

    A node's rows as the split search counts them (``_split.best_split``'s ``node``): the bins, its
    two segments (its active rows' empty unless listed apart), the hessian proof ``(h_max, slack)``
    and the features known without a missing row in it (``_counts.missing_rows``)."""
    if big is not None:
        _evaluate_in_parallel(first, n, hist, slot, stats, data, rules, gradient_noise, scans, best, counts,
                              counted, summed, proof, missing_free)
        return
    g_sum, hessian_sum, count = stats
    n_rows = len(data.gradients)
    (order0, order1), buf, start, stop, (active0, active1), abuf, astart, astop, _ = summed
    h_max, slack = proof
    split_data = (data.n_bins, data.feature_mask, data.penalty, data.has_missing)
    split_rules = (rules.min_rows, rules.min_hessian, rules.l2, rules.min_gain, rules.gain_rtol, rules.separate)
    gains, bins, sides, exact = scans
    for i in range(n):
        k = first + i
        if slot[k] >= 0:
            node = (data.bin_columns, n_rows, order0 if buf[k] == 0 else order1, start[k], stop[k], h_max, slack,
                    active0 if abuf[k] == 0 else active1, astart[k], astop[k], missing_free[k])
            _evaluate(k, hist[slot[k]], g_sum, hessian_sum, count, split_data, split_rules, gradient_noise,
                      (gains[i], bins[i], sides[i], exact[i]), best, counts[i], counted[i], node)


@njit(parallel=True, cache=True, nogil=True)
def _evaluate_in_parallel(first, n, hist, slot, stats, data, rules, gradient_noise, scans, best, counts, counted,
                          summed, proof, missing_free):
    """:func:`_evaluate_nodes`, one task per node.

    The loop body passes arrays and scalars only (numba's parallel loop takes no tuple of arrays
    across), and calls ``_evaluate`` rather than inlining it: inlined into the loop, the search
    compiled to a different result (one split fewer in a tree of the speed benchmark's lambdas)."""
    g_sum, hessian_sum, count = stats
    bin_columns, n_rows = data.bin_columns, len(data.gradients)
    n_bins, feature_mask, penalty, has_missing = data.n_bins, data.feature_mask, data.penalty, data.has_missing
    _, _, min_rows, min_hessian, l2, min_gain, gain_rtol, separate, _, _ = rules
    (order0, order1), buf, start, stop, (active0, active1), abuf, astart, astop, _ = summed
    h_max, slack = proof
    gains, bins, sides, exact = scans
    best_gain, best_feature, best_bin, best_side = best
    for i in prange(n):
        k = first + i
        if slot[k] >= 0:
            node = (bin_columns, n_rows, order0 if buf[k] == 0 else order1, start[k], stop[k], h_max, slack,
                    active0 if abuf[k] == 0 else active1, astart[k], astop[k], missing_free[k])
            _evaluate(k, hist[slot[k]], g_sum, hessian_sum, count, (n_bins, feature_mask, penalty, has_missing),
                      (min_rows, min_hessian, l2, min_gain, gain_rtol, separate), gradient_noise,
                      (gains[i], bins[i], sides[i], exact[i]), (best_gain, best_feature, best_bin, best_side),
                      counts[i], counted[i], node)


def split_search_types(data, rules, out, work) -> tuple:
    """The types of the arguments ``grow(data, rules, out, work, None)`` (the exact grower) passes to
    :func:`_evaluate_nodes`: ``grow``'s own arrays, made small. A fit's process compiles the split
    search with them while the compile helper compiles the rest of the grower (``_warm``); a test
    keeps them the ones ``grow`` compiles."""
    n_features = len(data.n_bins)
    nodes, orders = np.zeros(1, dtype=np.int64), (data.rows, work.order1)  # grow's own first buffer: rows
    per_feature = tuple(np.empty((3, n_features), dtype) for dtype in (np.float64, np.int64, np.int64, np.bool_))
    per_node = tuple(np.empty((2, 1), dtype) for dtype in (np.float64, np.int64, np.int64, np.int64))
    arguments = (np.int64(0), np.int64(1), work.hist, nodes, (np.zeros(1), out.hessian_sum, out.count), data,
                 rules, 0.0, per_feature, per_node, np.empty((3, n_features, N_SLOTS)),
                 np.zeros((3, n_features), dtype=np.bool_),
                 (orders, nodes, nodes, nodes, orders, nodes, nodes, nodes), (0.0, 0.0),
                 np.zeros((1, n_features), dtype=np.bool_))
    found = [typeof(argument) for argument in arguments]
    found[12] = types.Tuple((*found[12].types, types.literal(False)))  # summed: by_active, False all along
    return (*found, typeof(rules.big))


@njit(cache=True)
def _free_unsplit(first, n, slot, free_slots, n_free, best_feature):
    """Free the histogram of each node ``first .. first + n - 1`` with no split to record; return how
    many slots are free (:func:`_child_histograms`)."""
    for k in range(first, first + n):
        if slot[k] >= 0 and best_feature[0, k] == NO_SPLIT and best_feature[1, k] == NO_SPLIT:
            free_slots[n_free] = slot[k]
            n_free += 1
            slot[k] = -1
    return n_free


@njit(cache=True, nogil=True)
def _evaluate(k, node_hist, g_sum, hessian_sum, count, data, rules, gradient_noise, scans, best, counts, counted,
              node):
    """Record leaf ``k``'s best splits (of the mode; two-way only) where their gain beats
    ``min_gain`` (``best_split`` on its histogram ``node_hist``, counting the node's rows, ``node``
    (:func:`_evaluate_nodes`), where a candidate needs it); ``data``: ``(n_bins, feature_mask, penalty,
    has_missing)``; ``rules``: ``(min_rows, min_hessian, l2, min_gain, gain_rtol, separate)``."""
    n_bins, feature_mask, penalty, has_missing = data
    min_rows, min_hessian, l2, min_gain, gain_rtol, separate = rules
    gains, bins, sides, _ = scans
    counted[:] = False
    best_gain, best_feature, best_bin, best_side = best
    for row in range(2 if separate else 1):  # learn mode: the two rows are the same split
        split_rules = SplitRules(min_rows, min_hessian, l2, separate and row == 0, min_gain, gain_rtol)
        f = best_split(node_hist, (g_sum[k], hessian_sum[k], np.float64(count[k])), n_bins,
                       feature_mask[k], penalty, split_rules, gradient_noise, scans, counts, counted,
                       has_missing, node)
        if f >= 0:
            best_gain[row, k], best_feature[row, k] = gains[f], f
            best_bin[row, k], best_side[row, k] = bins[f], sides[f]
    if not separate:
        best_gain[1, k], best_feature[1, k] = best_gain[0, k], best_feature[0, k]
        best_bin[1, k], best_side[1, k] = best_bin[0, k], best_side[0, k]

r"""Histogram kernels of the fast tree grower: per-feature sums of gradients, hessians and rows.

A node's rows are the contiguous segment ``order[start:stop]`` of the row
partition buffer (LightGBM's DataPartition). Building its histogram::

    gather      prange over rows       gh[i] = (g[order[i]], h[order[i]])        O(n_node)
    accumulate  prange over tasks      each task sums its own range of features   O(n_node * d)

Each feature's slots are summed by one task, in row order, so the result does
not depend on the thread count (sparse nodes: see **Halves** below). The
accumulation reads the bins in one of two layouts, whichever costs fewer cache
misses for the node:

* dense nodes (at least ``1 / SPARSE_RATIO`` of the rows; the root): the
  Fortran-ordered bins, four features per pass over a block of rows, the four
  histograms staying in L1 (and four independent update chains, so runs of equal
  bins do not stall the loop);
* sparse nodes (deep in the tree, rows scattered over the data set): the
  row-major copy. A column read would cost one cache miss per row and feature;
  here a block of rows is first gathered into a small buffer (independent loads,
  many in flight), then summed from it. Without the copy (``_layout.low_memory``: ``bin_rows``
  empty) the column pass sums them instead, each feature's slots in the same row order: the
  same sums bit for bit, at a cache miss per row and feature.

A slot is two float64 lanes ``(g, h)``; a row adds its ``(g, h)`` to it with one
vector instruction (``_simd.add_row``). Rows are not counted here: a split needs the
counts of one feature at most, and ``_counts`` finds them there.

**Row pass.** A gathered block of rows is summed ``ROW_FEATURES`` (16) features at a time:
sixteen independent update chains per row, where four left the loop waiting on the
store-to-load latency of equal bins in consecutive rows (faster than four at a time on the
speed benchmark's small nodes; the sums are the same bit for bit, each feature's still in row
order). The column pass keeps four: its features are four streams of column reads, and eight
gained nothing.

**Halves.** A sparse node big enough for threads (``m * d >= PARALLEL_WORK``) is
summed as two fixed halves of its rows, ``[start, mid)`` and ``[mid, stop)``, each
over every feature into a histogram of its own, then added: a row's bins are
gathered by one task, where a split by features had every task gather its part of
every row (faster on the speed benchmark). The halves are the same on any number of
threads, so the result still does not depend on it; the sums differ from the
reference's row order in the last bits only (exactly the same on representable
values, e.g. multiples of 2**-8).

A histogram array is (d, FEATURE_SLOTS, LANES): each feature's 256 slots are followed by
PAD_SLOTS unused ones (zero), so that features are 4 KB + 32 B apart, not 4 KB. A pass adds
into four features at once, likely into the same cache sets at power-of-two strides: unpadded
(with the four-lane slots of the time, 8 KB apart), a fit ran slower per tree on the speed
benchmark; the sums are the same bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import prange
from numba.core.cpu_options import ParallelOptions

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._simd import LANES, add_row, prefetch
from twinrank.reference.constants import N_SLOTS

PAD_SLOTS = 2  # unused slots after each feature's 256: a feature's histogram is not 8 KB apart from the next
FEATURE_SLOTS = N_SLOTS + PAD_SLOTS  # slots per feature in a histogram array (d, FEATURE_SLOTS, LANES)
SLOT_SIZE = LANES * FEATURE_SLOTS  # [g, h] per slot: one feature's histogram, flattened
ROW_BLOCK = 4096  # positions per block of the column pass
GATHER_ROWS = 256  # rows per gathered block of the row pass
SPARSE_RATIO = 16  # a node with fewer than n_rows / SPARSE_RATIO rows uses the row-major bins
PARALLEL_WORK = 1 << 16  # rows x features below which a histogram is built on the calling thread
PREFETCH_ROWS = 16  # how far ahead a scattered node's rows (and their entries, _skipped_bins) are prefetched
ROW_FEATURES = 16  # features per pass over a gathered block of the row pass (see **Row pass**)
# ``parallel=`` of a kernel of several parallel loops that cannot be fused (each depends on the one
# before it): numba's fusion pass (an array analysis of the whole kernel) found nothing to fuse and
# cost a quarter of a second of ``build_skipping``'s compilation
UNFUSED = ParallelOptions({"fusion": False})


@njit(cache=True)
def build_into(hist, bin_columns, bin_rows, gradients, hessians, order, start, stop, gh, n_threads,
               parent, subtract, spare, sparse_ratio, big):
    """Overwrite ``hist`` with the sums over the rows ``order[start:stop]``; if ``subtract``,
    also ``parent -= hist`` (the sibling's histogram, while each task's features are hot).

    Small nodes (under ``PARALLEL_WORK`` row-features) are built on the calling
    thread: waking the pool would cost more than the work. Larger ones must be sparse
    (under ``1 / sparse_ratio`` of the rows) and are summed in halves: larger dense
    nodes are ``_skipped_bins.build_skipping``'s (the column pass in parallel over
    features; the grower's ``build`` chooses).

    # IN  bin_columns (n_rows * d,) uint8, the bins in column-major order (feature f at
    #     f * n_rows); bin_rows (n_rows * d,) the same bins row-major; gradients, hessians
    #     (n_rows,); order (m,) row ids; n_threads: tasks to cut the features into
    # OUT hist (d, FEATURE_SLOTS, LANES) float64 C order (slots 256.. zero); parent the same if subtract
    # BUF gh (m, 2) float64, positions [start, stop) are overwritten; spare (d, FEATURE_SLOTS, LANES)
    #     float64, the second half of a sparse node
    # IN  sparse_ratio: a node under 1 / sparse_ratio of the rows takes the row pass
    #     (``SPARSE_RATIO``; the grower's when the dense nodes skip bins: ``_skipped_bins``); big:
    #     None when no node is both (``_grower.big_nodes``: numba then compiles no halves)
    """
    n_features = hist.shape[0]
    n_tasks = max(1, min(n_threads, n_features))
    sparse = (stop - start) * sparse_ratio * n_features < bin_columns.size
    if big is None or (stop - start) * n_features < PARALLEL_WORK:
        for i in range(start, stop):
            gh[i, 0], gh[i, 1] = gradients[order[i]], hessians[order[i]]
        _build_task(np.int64(0), np.int64(1), hist, bin_columns, bin_rows, sparse,
                    every_row_in_order(order, start, stop, len(gradients)), order, start, stop, gh, parent,
                    subtract)
    else:
        assert sparse, "a dense node this large is build_skipping's"
        _build_halves(hist, spare, bin_columns, bin_rows, gradients, hessians, order, start, stop, gh, n_tasks,
                      parent, subtract)


@njit(cache=True)
def every_row_in_order(order, start, stop, n_rows):
    """Whether ``order[start:stop]`` is ``0 .. n_rows - 1`` (the root without row sampling)."""
    if stop - start != n_rows:
        return False
    for i in range(n_rows):
        if order[start + i] != i:
            return False
    return True


@njit(parallel=UNFUSED, cache=True)
def _build_halves(hist, spare, bin_columns, bin_rows, gradients, hessians, order, start, stop, gh, n_tasks,
                  parent, subtract):
    """Sparse nodes: rows ``[start, mid)`` into ``hist`` and ``[mid, stop)`` into ``spare``; then
    ``hist += spare`` (and the parent's subtraction) per feature range. A task sums one half over
    one of ``n_tasks // 2`` feature ranges (every feature on two threads): each feature of each
    half is summed by one task in row order, whatever the thread count."""
    mid, n_features = (start + stop) // 2, hist.shape[0]
    features = np.arange(n_features)
    groups = max(1, n_tasks // 2)
    gh_flat = gh.reshape(gh.size)
    for i in prange(start, stop):
        gh[i, 0], gh[i, 1] = gradients[order[i]], hessians[order[i]]
    for task in prange(2 * groups):
        half, group = task // groups, task % groups
        lo, hi = (start, mid) if half == 0 else (mid, stop)
        first, last = group * n_features // groups, (group + 1) * n_features // groups
        target = hist if half == 0 else spare
        zero_features(target, first, last)
        if len(bin_rows) > 0:
            _sum_row_blocks(target.reshape(target.size), bin_rows, order, gh_flat, lo, hi, first, last)
        else:  # one layout (``_layout.low_memory``): the same sums from the columns
            sum_column_blocks(target.reshape(target.size), bin_columns, np.bool_(False), order, gh_flat, lo, hi,
                              features, first, last)
    for task in prange(n_tasks):
        first, last = task * n_features // n_tasks, (task + 1) * n_features // n_tasks
        add_features(hist, spare, first, last)
        if subtract:
            subtract_features(parent, hist, first, last)


@njit(cache=True)
def _build_task(task, n_tasks, hist, bin_columns, bin_rows, sparse, in_order, order, start, stop,
                gh, parent, subtract):
    """One task's features ``[first, last)`` (equal shares): zero, sum, subtract from the parent."""
    n_features = hist.shape[0]
    first, last = task * n_features // n_tasks, (task + 1) * n_features // n_tasks
    hist[first:last] = 0.0
    flat = hist.reshape(hist.size)  # (d * FEATURE_SLOTS * LANES,) feature f at f * SLOT_SIZE
    gh_flat = gh.reshape(gh.size)  # (2 m,) g and h interleaved
    if sparse and len(bin_rows) > 0:  # else one layout (``_layout.low_memory``): the same sums from the columns
        _sum_row_blocks(flat, bin_rows, order, gh_flat, start, stop, first, last)
    else:
        sum_column_blocks(flat, bin_columns, in_order, order, gh_flat, start, stop,
                          np.arange(n_features), first, last)
    if subtract:
        subtract_features(parent, hist, first, last)


@njit(cache=True)
def zero_features(hist, first, last):
    """``hist[first:last] = 0`` (every slot, padding included), written as a loop: an array
    expression in a ``prange`` body compiles into a parallel loop of its own, seconds longer."""
    flat = hist.reshape(hist.size)
    for at in range(first * SLOT_SIZE, last * SLOT_SIZE):
        flat[at] = 0.0


@njit(cache=True)
def add_features(hist, other, first, last):
    """``hist[first:last] += other[first:last]``: a node's second half added to its first."""
    flat, other_flat = hist.reshape(hist.size), other.reshape(other.size)
    for at in range(first * SLOT_SIZE, last * SLOT_SIZE):
        flat[at] += other_flat[at]


@njit(cache=True)
def subtract_features(parent, hist, first, last):
    """``parent[first:last] -= hist[first:last]``: the larger sibling's histogram."""
    flat, parent_flat = hist.reshape(hist.size), parent.reshape(parent.size)
    for at in range(first * SLOT_SIZE, last * SLOT_SIZE):
        parent_flat[at] -= flat[at]


# The inner loops index with unsigned integers: numba then emits no negative-index
# wraparound, which otherwise costs more than the additions themselves.
_1, _2, _3, _4 = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
_L = np.uint64(LANES)
_SLOT = np.uint64(SLOT_SIZE)
_LINE = np.uint64(64)  # bytes of a cache line
_ROW_FEATURES = np.uint64(ROW_FEATURES)


@njit(cache=True)
def sum_column_blocks(flat, bin_columns, in_order, order, gh_flat, start, stop, features, first, last):
    """Dense nodes: per block of rows, four of the features ``features[first:last]`` per pass over
    the block. ``in_order``: ``order[i] == i``, so the columns are read without the indirection."""
    for block_start in range(start, stop, ROW_BLOCK):
        block_stop = min(stop, block_start + ROW_BLOCK)
        j = first
        while j + 4 <= last:
            _sum_four_columns(flat, bin_columns, in_order, order, gh_flat, block_start, block_stop,
                              features[j], features[j + 1], features[j + 2], features[j + 3])
            j += 4
        for j in range(j, last):
            f = features[j]
            column = _column(bin_columns, f, len(flat) // SLOT_SIZE)
            base = np.uint64(f * SLOT_SIZE)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                row = i if in_order else np.uint64(order[i])
                add_row(flat, base + np.uint64(column[row]) * _L, gh_flat, i << _1)


@njit(cache=True)
def _column(bin_columns, f, n_features):
    """The bins (n_rows,) of feature ``f`` in the column-major buffer."""
    n_rows = len(bin_columns) // n_features
    return bin_columns[f * n_rows:(f + 1) * n_rows]


@njit(cache=True)
def _sum_four_columns(flat, bin_columns, in_order, order, gh_flat, start, stop, f0, f1, f2, f3):
    # IN the columns f0 .. f3 of bin_columns; OUT their histograms in flat
    d = len(flat) // SLOT_SIZE
    c0, c1 = _column(bin_columns, f0, d), _column(bin_columns, f1, d)
    c2, c3 = _column(bin_columns, f2, d), _column(bin_columns, f3, d)
    b0, b1 = np.uint64(f0 * SLOT_SIZE), np.uint64(f1 * SLOT_SIZE)  # where each histogram starts in flat
    b2, b3 = np.uint64(f2 * SLOT_SIZE), np.uint64(f3 * SLOT_SIZE)
    for i in range(np.uint64(start), np.uint64(stop)):
        row = i if in_order else np.uint64(order[i])
        at = i << _1
        add_row(flat, b0 + np.uint64(c0[row]) * _L, gh_flat, at)
        add_row(flat, b1 + np.uint64(c1[row]) * _L, gh_flat, at)
        add_row(flat, b2 + np.uint64(c2[row]) * _L, gh_flat, at)
        add_row(flat, b3 + np.uint64(c3[row]) * _L, gh_flat, at)


@njit(cache=True)
def gather_block(block, bin_rows, order, block_start, block_stop, n_features, first, width, stop):
    """Copy the bins ``[first, first + width)`` of rows ``order[block_start:block_stop]`` into ``block``,
    row after row (the sparse row pass of both histogram kinds reads this buffer); the row
    ``PREFETCH_ROWS`` positions ahead (before ``stop``) is prefetched: a node's rows are scattered,
    the hardware cannot guess them."""
    k = np.uint64(0)
    for i in range(block_start, block_stop):
        if i + PREFETCH_ROWS < stop:
            ahead = np.uint64(order[i + PREFETCH_ROWS]) * n_features + np.uint64(first)
            for line in range(np.uint64(0), width, _LINE):
                prefetch(bin_rows, ahead + line)
        row_start = np.uint64(order[i]) * n_features + np.uint64(first)
        for j in range(width):
            block[k + j] = bin_rows[row_start + j]
        k += width


@njit(cache=True)
def _sum_row_blocks(flat, bin_rows, order, gh_flat, start, stop, first, last):
    """Sparse nodes: copy a block of rows' bins ``[first, last)`` to a buffer, then sum from it."""
    width = np.uint64(last - first)
    n_features = np.uint64(len(flat) // SLOT_SIZE)
    block = np.empty(GATHER_ROWS * (last - first), dtype=np.uint8)  # (GATHER_ROWS, width)
    base = np.uint64(first * SLOT_SIZE)
    for block_start in range(start, stop, GATHER_ROWS):
        block_stop = min(stop, block_start + GATHER_ROWS)
        gather_block(block, bin_rows, order, block_start, block_stop, n_features, first, width, stop)
        j = np.uint64(0)
        while j + _ROW_FEATURES <= width:  # ROW_FEATURES features at a time over the block
            at = base + j * _SLOT
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                pair = i << _1
                for q in range(ROW_FEATURES):  # a constant trip count: unrolled
                    add_row(flat, at + np.uint64(q) * _SLOT + np.uint64(block[k + np.uint64(q)]) * _L, gh_flat,
                            pair)
                k += width
            j += _ROW_FEATURES
        while j + _4 <= width:  # the rest four at a time
            at = base + j * _SLOT
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                pair = i << _1
                add_row(flat, at + np.uint64(block[k]) * _L, gh_flat, pair)
                add_row(flat, at + _SLOT + np.uint64(block[k + _1]) * _L, gh_flat, pair)
                add_row(flat, at + _2 * _SLOT + np.uint64(block[k + _2]) * _L, gh_flat, pair)
                add_row(flat, at + _3 * _SLOT + np.uint64(block[k + _3]) * _L, gh_flat, pair)
                k += width
            j += _4
        for j in range(j, width):
            at = base + j * _SLOT
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                add_row(flat, at + np.uint64(block[k]) * _L, gh_flat, i << _1)
                k += width

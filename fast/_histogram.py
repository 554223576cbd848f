r"""Histogram kernels of the fast tree grower: per-feature sums of gradients, hessians and rows.

A node's rows are the contiguous segment ``order[start:stop]`` of the row
partition buffer (LightGBM's DataPartition). Building its histogram::

    gather      prange over rows       gh[i] = (g[order[i]], h[order[i]])        O(n_node)
    accumulate  prange over features   each task sums its own features            O(n_node * d)

Each feature's slots are summed by one task, in row order, so the result does
not depend on the thread count. The accumulation reads the bins in one of two
layouts, whichever costs fewer cache misses for the node:

* dense nodes (at least ``1 / SPARSE_RATIO`` of the rows; the root): the
  Fortran-ordered bins, four features per pass over a block of rows, the four
  histograms staying in L1 (and four independent update chains, so runs of equal
  bins do not stall the loop);
* sparse nodes (deep in the tree, rows scattered over the data set): the
  row-major copy. A column read would cost one cache miss per row and feature;
  here a block of rows is first gathered into a small buffer (independent loads,
  many in flight), then summed from it.

When every hessian of the tree equals one value :math:`h_0` (squared error: 1),
only gradients and counts are summed and the hessian slot is ``count * h0``
(LightGBM's constant-hessian histograms): the same numbers whenever the sums
are exact.

Accumulators are float64: the slot ``[..., 2]`` counts rows exactly up to 2**53.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

N_SLOTS = 256  # value bins 0..254 and MISSING_BIN
SLOT_SIZE = 3 * N_SLOTS  # [g, h, count] per slot: one feature's histogram, flattened
ROW_BLOCK = 4096  # positions per block of the column pass
GATHER_ROWS = 256  # rows per gathered block of the row pass
SPARSE_RATIO = 16  # a node with fewer than n_rows / SPARSE_RATIO rows uses the row-major bins
PARALLEL_WORK = 1 << 16  # rows x features below which a histogram is built on the calling thread


@njit(cache=True)
def constant_hessian(hessians, order):
    """``(True, h0)`` if every ``hessians[order[i]]`` equals ``h0``, else ``(False, 0.0)``. O(n)."""
    h0 = hessians[order[0]]
    for i in range(len(order)):
        if hessians[order[i]] != h0:
            return False, 0.0
    return True, h0


@njit(cache=True)
def build_into(hist, bin_columns, bin_rows, gradients, hessians, order, start, stop, features, gh,
               hessian_is_constant, h0, n_threads):
    """Overwrite ``hist[f]`` for ``f`` in ``features`` with the sums over ``order[start:stop]``.

    Small nodes (under ``PARALLEL_WORK`` row-features) are built on the calling
    thread: waking the pool would cost more than the work.

    # IN  bin_columns (n_rows, d) uint8 Fortran order; bin_rows the same bins in C order;
    #     gradients, hessians (n_rows,); order (m,) row ids; features (k,) sorted;
    #     n_threads: tasks to cut the features into
    # OUT hist (d, 256, 3) float64 C order (only the listed features are written)
    # BUF gh (m, 2) float64, positions [start, stop) are overwritten
    """
    n_tasks = max(1, min(n_threads, len(features)))
    sparse = (stop - start) * SPARSE_RATIO < bin_columns.shape[0]
    if n_tasks == 1 or (stop - start) * len(features) < PARALLEL_WORK:
        for i in range(start, stop):
            _gather(gh, i, order[i], gradients, hessians, hessian_is_constant)
        _build_task(0, 1, hist, bin_columns, bin_rows, sparse, order, start, stop, features, gh,
                    hessian_is_constant, h0)
    else:
        _build_parallel(hist, bin_columns, bin_rows, sparse, gradients, hessians, order, start, stop,
                        features, gh, hessian_is_constant, h0, n_tasks)


@njit(parallel=True, cache=True)
def _build_parallel(hist, bin_columns, bin_rows, sparse, gradients, hessians, order, start, stop,
                    features, gh, hessian_is_constant, h0, n_tasks):
    for i in prange(start, stop):
        _gather(gh, i, order[i], gradients, hessians, hessian_is_constant)
    for task in prange(n_tasks):
        _build_task(task, n_tasks, hist, bin_columns, bin_rows, sparse, order, start, stop, features,
                    gh, hessian_is_constant, h0)


@njit(cache=True, inline="always")
def _gather(gh, i, row, gradients, hessians, hessian_is_constant):
    gh[i, 0] = gradients[row]
    if not hessian_is_constant:
        gh[i, 1] = hessians[row]


@njit(cache=True)
def _build_task(task, n_tasks, hist, bin_columns, bin_rows, sparse, order, start, stop, features,
                gh, hessian_is_constant, h0):
    """One task's share of the features (equal contiguous shares): zero, sum, fill constant hessians."""
    first = task * len(features) // n_tasks
    last = (task + 1) * len(features) // n_tasks
    for j in range(first, last):
        hist[features[j]] = 0.0
    flat = hist.reshape(hist.size)  # (d * 768,) feature f at f * SLOT_SIZE
    gh_flat = gh.reshape(gh.size)  # (2 m,) g and h interleaved
    with_hessians = not hessian_is_constant
    if sparse:
        _sum_row_blocks(flat, bin_rows, order, gh_flat, start, stop, features, first, last,
                        with_hessians)
    else:
        _sum_column_blocks(flat, bin_columns, order, gh_flat, start, stop, features, first, last,
                           with_hessians)
    if hessian_is_constant:
        for j in range(first, last):
            f = features[j]
            for b in range(N_SLOTS):
                hist[f, b, 1] = hist[f, b, 2] * h0


# The inner loops index with unsigned integers: numba then emits no negative-index
# wraparound, which otherwise costs more than the additions themselves.
_1, _2, _3 = np.uint64(1), np.uint64(2), np.uint64(3)


@njit(cache=True, inline="always")
def _add(flat, base, b, g, h, with_hessians):
    """``hist[f, b] += (g, h, 1)`` with ``base = f * SLOT_SIZE``."""
    at = np.uint64(base) + np.uint64(b) * _3
    flat[at] += g
    if with_hessians:
        flat[at + _1] += h
    flat[at + _2] += 1.0


@njit(cache=True)
def _sum_column_blocks(flat, bin_columns, order, gh_flat, start, stop, features, first, last,
                       with_hessians):
    """Dense nodes: per block of rows, four features per pass over the block."""
    for block_start in range(start, stop, ROW_BLOCK):
        block_stop = min(stop, block_start + ROW_BLOCK)
        j = first
        while j + 4 <= last:
            _sum_four_columns(flat, bin_columns, order, gh_flat, block_start, block_stop,
                              features[j], features[j + 1], features[j + 2], features[j + 3],
                              with_hessians)
            j += 4
        for j in range(j, last):
            f = features[j]
            column = bin_columns[:, f]
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                _add(flat, f * SLOT_SIZE, column[np.uint64(order[i])], gh_flat[i << _1],
                     gh_flat[(i << _1) + _1], with_hessians)


@njit(cache=True)
def _sum_four_columns(flat, bin_columns, order, gh_flat, start, stop, f0, f1, f2, f3,
                      with_hessians):
    # IN bin_columns[:, f0..f3] (n_rows,) uint8; OUT their histograms in flat
    c0, c1, c2, c3 = bin_columns[:, f0], bin_columns[:, f1], bin_columns[:, f2], bin_columns[:, f3]
    for i in range(np.uint64(start), np.uint64(stop)):
        row = np.uint64(order[i])
        g, h = gh_flat[i << _1], gh_flat[(i << _1) + _1]
        _add(flat, f0 * SLOT_SIZE, c0[row], g, h, with_hessians)
        _add(flat, f1 * SLOT_SIZE, c1[row], g, h, with_hessians)
        _add(flat, f2 * SLOT_SIZE, c2[row], g, h, with_hessians)
        _add(flat, f3 * SLOT_SIZE, c3[row], g, h, with_hessians)


@njit(cache=True)
def _sum_row_blocks(flat, bin_rows, order, gh_flat, start, stop, features, first, last,
                    with_hessians):
    """Sparse nodes: gather a block of rows' bins (features[first:last]), then sum from the buffer."""
    width = last - first
    block = np.empty(GATHER_ROWS * width, dtype=np.uint8)  # (GATHER_ROWS, width) row-major
    for block_start in range(start, stop, GATHER_ROWS):
        block_stop = min(stop, block_start + GATHER_ROWS)
        k = 0
        for i in range(block_start, block_stop):
            row_bins = bin_rows[order[i]]  # (d,)
            for j in range(first, last):
                block[k] = row_bins[features[j]]
                k += 1
        k = np.uint64(0)
        for i in range(np.uint64(block_start), np.uint64(block_stop)):
            g, h = gh_flat[i << _1], gh_flat[(i << _1) + _1]
            for j in range(first, last):
                _add(flat, features[j] * SLOT_SIZE, block[k], g, h, with_hessians)
                k += _1


@njit(cache=True)
def subtract_into(parent, child, features):
    """``parent[f] -= child[f]`` for ``f`` in ``features``: the sibling's histogram. O(k * 256)."""
    for j in range(len(features)):
        f = features[j]
        for b in range(N_SLOTS):
            for s in range(3):
                parent[f, b, s] -= child[f, b, s]

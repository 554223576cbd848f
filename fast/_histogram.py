r"""Histogram kernels of the fast tree grower: per-feature sums of gradients, hessians and rows.

A node's rows are the contiguous segment ``order[start:stop]`` of the row
partition buffer (LightGBM's DataPartition). Building its histogram::

    gather      prange over rows       gh[i] = (g[order[i]], h[order[i]])      O(n_node)
    accumulate  prange over features   for each block of 4096 positions:       O(n_node * d)
                                         for each feature f of the thread:
                                           hist[f, bins[order[i], f]] += (gh[i], 1)

Each feature's slots are summed by one thread, in row order, so the result does
not depend on the thread count. Gathering the node's gradients once, and walking
the rows in blocks that stay in cache while every feature of the thread reads
them, is what makes the pass memory-friendly (``binned`` in Fortran order: each
feature's bins are one contiguous column).

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
ROW_BLOCK = 4096  # positions per block of the accumulation pass
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
def build_into(hist, binned, gradients, hessians, order, start, stop, features, gh,
               hessian_is_constant, h0, n_threads):
    """Overwrite ``hist[f]`` for ``f`` in ``features`` with the sums over ``order[start:stop]``.

    Small nodes (under ``PARALLEL_WORK`` row-features) are built on the calling
    thread: waking the pool would cost more than the work.

    # IN  binned (n_rows, d) uint8; gradients, hessians (n_rows,); order (m,) row ids;
    #     features (k,) int64 sorted; n_threads: tasks to cut the features into
    # OUT hist (d, 256, 3) float64 (only the listed features are written)
    # BUF gh (m, 2) float64, positions [start, stop) are overwritten
    """
    n_tasks = max(1, min(n_threads, len(features)))
    if n_tasks == 1 or (stop - start) * len(features) < PARALLEL_WORK:
        for i in range(start, stop):
            _gather(gh, i, order[i], gradients, hessians, hessian_is_constant)
        _build_task(0, 1, hist, binned, order, start, stop, features, gh, hessian_is_constant, h0)
    else:
        _build_parallel(hist, binned, gradients, hessians, order, start, stop, features, gh,
                        hessian_is_constant, h0, n_tasks)


@njit(parallel=True, cache=True)
def _build_parallel(hist, binned, gradients, hessians, order, start, stop, features, gh,
                    hessian_is_constant, h0, n_tasks):
    for i in prange(start, stop):
        _gather(gh, i, order[i], gradients, hessians, hessian_is_constant)
    for task in prange(n_tasks):
        _build_task(task, n_tasks, hist, binned, order, start, stop, features, gh,
                    hessian_is_constant, h0)


@njit(cache=True, inline="always")
def _gather(gh, i, row, gradients, hessians, hessian_is_constant):
    gh[i, 0] = gradients[row]
    if not hessian_is_constant:
        gh[i, 1] = hessians[row]


@njit(cache=True)
def _build_task(task, n_tasks, hist, binned, order, start, stop, features, gh, hessian_is_constant,
                h0):
    """One task's share of the features: zero, accumulate block by block, fill constant hessians."""
    first, last = _task_features(task, n_tasks, len(features))
    for j in range(first, last):
        hist[features[j]] = 0.0
    for block_start in range(start, stop, ROW_BLOCK):
        block_stop = min(stop, block_start + ROW_BLOCK)
        for j in range(first, last):
            f = features[j]
            if hessian_is_constant:
                _accumulate_gradients(hist[f], binned[:, f], order, gh, block_start, block_stop)
            else:
                _accumulate(hist[f], binned[:, f], order, gh, block_start, block_stop)
    if hessian_is_constant:
        for j in range(first, last):
            f = features[j]
            for b in range(N_SLOTS):
                hist[f, b, 1] = hist[f, b, 2] * h0


@njit(cache=True, inline="always")
def _task_features(task, n_tasks, n_features):
    """The range of feature list entries of one task: equal contiguous shares."""
    return task * n_features // n_tasks, (task + 1) * n_features // n_tasks


@njit(cache=True, inline="always")
def _accumulate(slots, column, order, gh, start, stop):
    # IN column (n_rows,) uint8 bins of one feature; OUT slots (256, 3) += sums
    for i in range(start, stop):
        b = column[order[i]]
        slots[b, 0] += gh[i, 0]
        slots[b, 1] += gh[i, 1]
        slots[b, 2] += 1.0


@njit(cache=True, inline="always")
def _accumulate_gradients(slots, column, order, gh, start, stop):
    # IN column (n_rows,) uint8 bins of one feature; OUT slots (256, 3) += gradient sums, counts
    for i in range(start, stop):
        b = column[order[i]]
        slots[b, 0] += gh[i, 0]
        slots[b, 2] += 1.0


@njit(cache=True)
def subtract_into(parent, child, features):
    """``parent[f] -= child[f]`` for ``f`` in ``features``: the sibling's histogram. O(k * 256)."""
    for j in range(len(features)):
        f = features[j]
        for b in range(N_SLOTS):
            for s in range(3):
                parent[f, b, s] -= child[f, b, s]

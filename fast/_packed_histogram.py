r"""Integer histograms of quantized training (``reference/_quantize.py``): one int64 add per row and feature.

With quantized gradients every row carries small integers $\tilde g \in [-(2^{b-1}-1), 2^{b-1}-1]$,
$\tilde h \in [0, 2^b - 1]$ and a count of 1. They are packed into one int64 (LightGBM packs
its int8 pairs into int16/int32 the same way)::

    p = g * 2**42 + h * 2**21 + 1        bits 42..63: G (signed), 21..41: H, 0..20: count

and a histogram slot is the plain int64 sum of its rows' ``p``: one add instead of three
float adds, 8 bytes per slot instead of 24. The sum is exact (two's complement) and splits
back into ``(G, H, count)`` as long as no field overflows: ``count < 2**21``,
``H < 2**21``, ``|G| < 2**21``, i.e. a node of at most :func:`max_packed_rows` rows; larger
nodes (a root of many rows) use the float64 kernels of ``_histogram`` on the same
integers, also exact. Either way the node's histogram is the exact integer sums, so the
tree does not depend on which kernel built it, nor on the thread count.

    gather      prange over rows       pk[i] = packed[order[i]]                  O(n_node)
    accumulate  prange over tasks      each task sums its own range of features   O(n_node * d)
    unpack      per task               (G, H, count) as float64 into hist         O(d * 256)
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from twinrank.reference.constants import N_SLOTS

from ._histogram import GATHER_ROWS, PARALLEL_WORK, ROW_BLOCK, SLOT_SIZE, SPARSE_RATIO

FIELD_BITS = 21
_FIELD = np.int64((1 << FIELD_BITS) - 1)
_H_SHIFT, _G_SHIFT = np.int64(FIELD_BITS), np.int64(2 * FIELD_BITS)


def pack(gradients: np.ndarray, hessians: np.ndarray) -> np.ndarray:
    """``g * 2**42 + h * 2**21 + 1`` per row (int64), from the integer gradients and hessians."""
    return ((gradients.astype(np.int64) << _G_SHIFT) + (hessians.astype(np.int64) << _H_SHIFT)
            + np.int64(1))


def max_packed_rows(bits: int) -> int:
    """The most rows whose packed sum cannot overflow a field: every ``|g| <= 2**(b-1) - 1``,
    ``h <= 2**b - 1``, so ``m * (2**b - 1) < 2**21`` keeps every field in range."""
    return ((1 << FIELD_BITS) - 1) // ((1 << bits) - 1)


@njit(cache=True)
def build_packed_into(hist, ihist, bin_columns, bin_rows, packed, order, start, stop, pk, n_threads,
                      parent, subtract):
    """Overwrite ``hist`` with the exact sums over ``order[start:stop]``, summed packed;
    if ``subtract``, also ``parent -= hist``.

    # IN  bin_columns, bin_rows (n_rows * d,) uint8 (as ``_histogram.build_into``);
    #     packed (n_rows,) int64 (:func:`pack`); order (m,) row ids, at most max_packed_rows
    # OUT hist (d, 256, 3) float64; parent (d, 256, 3) if subtract
    # BUF ihist (d, 256) int64; pk (m,) int64, positions [start, stop) overwritten
    """
    n_features = hist.shape[0]
    n_tasks = max(1, min(n_threads, n_features))
    sparse = (stop - start) * SPARSE_RATIO * n_features < bin_columns.size
    in_order = stop - start == len(packed)
    if in_order:
        for i in range(len(packed)):
            if order[start + i] != i:
                in_order = False
                break
    if n_tasks == 1 or (stop - start) * n_features < PARALLEL_WORK:
        for i in range(start, stop):
            pk[i] = packed[order[i]]
        _packed_task(np.int64(0), np.int64(1), hist, ihist, bin_columns, bin_rows, sparse, in_order,
                     order, start, stop, pk, parent, subtract)
    else:
        _packed_parallel(hist, ihist, bin_columns, bin_rows, sparse, in_order, packed, order, start,
                         stop, pk, n_tasks, parent, subtract)


@njit(parallel=True, cache=True)
def _packed_parallel(hist, ihist, bin_columns, bin_rows, sparse, in_order, packed, order, start, stop,
                     pk, n_tasks, parent, subtract):
    for i in prange(start, stop):
        pk[i] = packed[order[i]]
    for task in prange(n_tasks):
        _packed_task(np.int64(task), n_tasks, hist, ihist, bin_columns, bin_rows, sparse, in_order,
                     order, start, stop, pk, parent, subtract)


@njit(cache=True)
def _packed_task(task, n_tasks, hist, ihist, bin_columns, bin_rows, sparse, in_order, order, start,
                 stop, pk, parent, subtract):
    """One task's features ``[first, last)``: zero, sum packed, unpack, subtract from the parent."""
    n_features = hist.shape[0]
    first, last = task * n_features // n_tasks, (task + 1) * n_features // n_tasks
    ihist[first:last] = 0
    iflat = ihist.reshape(ihist.size)  # (d * 256,) feature f at f * 256
    if sparse:
        _rows_packed(iflat, bin_rows, order, pk, start, stop, first, last)
    else:
        _columns_packed(iflat, bin_columns, in_order, order, pk, start, stop, first, last)
    for f in range(first, last):
        for b in range(N_SLOTS):
            s = ihist[f, b]
            hist[f, b, 0] = np.float64(s >> _G_SHIFT)  # arithmetic shift: the signed G
            hist[f, b, 1] = np.float64((s >> _H_SHIFT) & _FIELD)
            hist[f, b, 2] = np.float64(s & _FIELD)
    if subtract:
        flat = hist.reshape(hist.size)
        parent_flat = parent.reshape(parent.size)
        for at in range(first * SLOT_SIZE, last * SLOT_SIZE):
            parent_flat[at] -= flat[at]


_1, _2, _3, _4 = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
_NS = np.uint64(N_SLOTS)


@njit(cache=True)
def _columns_packed(iflat, bin_columns, in_order, order, pk, start, stop, first, last):
    """Dense nodes: per block of rows, four features per pass over the block (as ``_histogram``)."""
    d = len(iflat) // N_SLOTS
    n_rows = len(bin_columns) // d
    for block_start in range(start, stop, ROW_BLOCK):
        block_stop = min(stop, block_start + ROW_BLOCK)
        f = first
        while f + 4 <= last:
            c0 = bin_columns[f * n_rows:(f + 1) * n_rows]
            c1 = bin_columns[(f + 1) * n_rows:(f + 2) * n_rows]
            c2 = bin_columns[(f + 2) * n_rows:(f + 3) * n_rows]
            c3 = bin_columns[(f + 3) * n_rows:(f + 4) * n_rows]
            b0 = np.uint64(f * N_SLOTS)
            b1, b2, b3 = b0 + _NS, b0 + _2 * _NS, b0 + _3 * _NS
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                row = i if in_order else np.uint64(order[i])
                p = pk[i]
                iflat[b0 + np.uint64(c0[row])] += p
                iflat[b1 + np.uint64(c1[row])] += p
                iflat[b2 + np.uint64(c2[row])] += p
                iflat[b3 + np.uint64(c3[row])] += p
            f += 4
        for f in range(f, last):
            column = bin_columns[f * n_rows:(f + 1) * n_rows]
            base = np.uint64(f * N_SLOTS)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                row = i if in_order else np.uint64(order[i])
                iflat[base + np.uint64(column[row])] += pk[i]


@njit(cache=True)
def _rows_packed(iflat, bin_rows, order, pk, start, stop, first, last):
    """Sparse nodes: gather a block of rows' bins ``[first, last)``, then sum from it."""
    width = np.uint64(last - first)
    n_features = np.uint64(len(iflat) // N_SLOTS)
    block = np.empty(GATHER_ROWS * (last - first), dtype=np.uint8)  # (GATHER_ROWS, width)
    base = np.uint64(first * N_SLOTS)
    for block_start in range(start, stop, GATHER_ROWS):
        block_stop = min(stop, block_start + GATHER_ROWS)
        k = np.uint64(0)
        for i in range(block_start, block_stop):
            row_start = np.uint64(order[i]) * n_features + np.uint64(first)
            for j in range(width):
                block[k + j] = bin_rows[row_start + j]
            k += width
        j = np.uint64(0)
        while j + _4 <= width:
            at = base + j * _NS
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                p = pk[i]
                iflat[at + np.uint64(block[k])] += p
                iflat[at + _NS + np.uint64(block[k + _1])] += p
                iflat[at + _2 * _NS + np.uint64(block[k + _2])] += p
                iflat[at + _3 * _NS + np.uint64(block[k + _3])] += p
                k += width
            j += _4
        for j in range(j, width):
            at = base + j * _NS
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                iflat[at + np.uint64(block[k])] += pk[i]
                k += width

r"""Integer histograms of quantized training (``reference/trees/_quantize.py``): one int64 add per row and feature.

With quantized gradients every row carries small integers $\tilde g \in [-(2^{b-1}-1), 2^{b-1}-1]$
and $\tilde h \in [0, 2^b - 1]$. For a node of $m$ rows they are packed into one int64 (LightGBM
packs its int8 pairs into int16/int32 words the same way)::

    p = g * 2**k + h      bits 0..k-1: H, k..63: G (signed)

with $k$ the bit length of $m (2^b - 1)$, so no sum of the node's rows overflows its field,
and a histogram slot is the plain int64 sum of its rows' ``p``: one scalar add of 8 bytes per
row and feature, where the float histogram adds a 16-byte vector (``_histogram``). The sum is
exact (two's complement) and splits back into ``(G, H)``; rows are counted where a split needs
it (``_counts``), not here. (A count field below H, packed until the third speed round and never
read, cut a node into chunks from about 65,000 rows at 7 bits; without it a node of up to
16 million rows fits at 8 bits, 33 million at 7: a round's root at 7 bits, 1M rows, in one
chunk where it took eight.) A node too large for the two fields in 64 bits
(:func:`packed_layout`) is summed in chunks of rows that fit (:func:`packed_chunk`), each
chunk's sums unpacked and added into the float64 histogram's lanes (exact: integers below
2**53). Either way the node's histogram is the exact integer sums, so the tree does not depend
on how it was cut, nor on the thread count.

    gather      prange over rows       pk[i] = packed (g, h) of row order[i]     O(n_node)
    accumulate  prange over tasks      each task sums its own range of features   O(n_node * d)
    unpack      per task               (G, H) as float64 into hist                O(d * 256)

Sparse nodes (the row-major pass) are cut by rows instead, since integer sums do not depend
on their order: each task packs and sums its own share of the node's rows over every
feature into a histogram of its own, then each task adds up its features' slots over the
tasks' histograms and unpacks them. A row's bins are then gathered by one task, not by
every task for its own features (faster than a cut by features on the speed benchmark).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from twinrank.fast.runtime._kernel_cache import njit, serial
from twinrank.fast.trees._histogram import (
    FEATURE_SLOTS,
    GATHER_ROWS,
    PARALLEL_WORK,
    ROW_BLOCK,
    ROW_FEATURES,
    gather_block,
    subtract_features,
)
from twinrank.reference.constants import N_SLOTS

# A quantized node of at least 1 / PACKED_SKIP_RATIO of the rows (its active rows) is summed by
# columns, skipping the sparse features' most frequent bins (``_skipped_bins``), a smaller one by
# rows. The row pass of packed integers costs less a row than the float one (8 bytes, no gathered
# (g, h)): on a round's active rows at 7 bits (1M rows, one thread) 8.7 against 12.4 ms at
# 100,000 rows, 13.5 against 15.1 at 160,000, level at 200,000, 21.0 against 19.8 at 273,083.
PACKED_SKIP_RATIO = 6


@njit(cache=True)
def _bit_length(x):
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n


@njit(cache=True)
def packed_layout(m, g_levels, h_levels):
    """``k``, the hessian field's width for a node of ``m`` rows, or -1 when G (``|G| <= m * g_levels``,
    signed) does not fit in the remaining ``64 - k`` bits."""
    k = _bit_length(m * h_levels)
    if 64 - k < _bit_length(m * g_levels) + 1:
        return -1
    return k


@njit(cache=True)
def packed_chunk(m, g_levels, h_levels, max_chunk):
    """``(chunk, k)``: the rows per chunk (at most ``max_chunk``, halving ``m`` until it fits)
    and its :func:`packed_layout`."""
    chunk = min(m, max_chunk)
    k = packed_layout(chunk, g_levels, h_levels)
    while k < 0:
        chunk = (chunk + 1) // 2
        k = packed_layout(chunk, g_levels, h_levels)
    return chunk, k


@njit(cache=True)
def build_packed_into(hist, ihist, bin_columns, bin_rows, packed, segment, pk, n_threads, parent, subtract,
                      sparse_ratio, big):
    """Overwrite ``hist`` with the exact sums over ``order[start:stop]``, summed packed in the
    layout ``k`` (:func:`packed_layout`), ``chunk`` rows at a time; if ``subtract``, also
    ``parent -= hist``. A node under ``1 / sparse_ratio`` of the rows takes the row pass. With
    ``big`` None (a small data set, ``_grower.big_nodes``) the tasks run one after the other on the
    calling thread (the kernels' serial twins: the same integers, no parallel loop compiled).

    # IN  bin_columns, bin_rows (n_rows * d,) uint8 (as ``_histogram.build_into``);
    #     packed ``(g_int (n_rows,) int8, h_int (n_rows,) uint8, chunk, k)``;
    #     segment ``(order (m,) row ids, start, stop)``
    # OUT hist (d, FEATURE_SLOTS, LANES) float64; parent the same if subtract
    # BUF ihist (n_threads, d, FEATURE_SLOTS) int64 (slots 256.. unused, as ``_histogram``'s padding);
    #     pk (m,) int64, positions [start, stop) overwritten
    """
    g_int, h_int, chunk, k = packed
    order, start, stop = segment
    n_features = hist.shape[0]
    n_tasks = max(1, min(n_threads, n_features))
    # the row pass, unless the row-major bins are empty (``_layout.low_memory``: the same integers by columns)
    sparse = (stop - start) * sparse_ratio * n_features < bin_columns.size and len(bin_rows) > 0
    if sparse and chunk >= stop - start and n_tasks > 1 and (stop - start) * n_features >= PARALLEL_WORK:
        if big is None:
            _packed_by_rows_serial(hist, ihist, bin_rows, g_int, h_int, np.int64(k), order, start, stop, pk,
                                   n_tasks, parent, subtract)
        else:
            _packed_by_rows(hist, ihist, bin_rows, g_int, h_int, np.int64(k), order, start, stop, pk, n_tasks,
                            parent, subtract)
        return
    in_order = stop - start == len(g_int)
    if in_order:
        for i in range(len(g_int)):
            if order[start + i] != i:
                in_order = False
                break
    k = np.int64(k)
    if n_tasks == 1 or (stop - start) * n_features < PARALLEL_WORK:
        for i in range(start, stop):
            pk[i] = pack(g_int, h_int, order[i], k)
        _packed_task(np.int64(0), np.int64(1), hist, ihist[0], bin_columns, bin_rows, sparse, in_order,
                     segment, pk, (np.int64(chunk), k), parent, subtract)
    elif big is None:
        _packed_parallel_serial(hist, ihist[0], bin_columns, bin_rows, sparse, in_order,
                                (g_int, h_int, np.int64(chunk), k), segment, pk, n_tasks, parent, subtract)
    else:
        _packed_parallel(hist, ihist[0], bin_columns, bin_rows, sparse, in_order,
                         (g_int, h_int, np.int64(chunk), k), segment, pk, n_tasks, parent, subtract)


@njit(cache=True, inline='always')
def pack(g_int, h_int, row, k):
    return (np.int64(g_int[row]) << k) + np.int64(h_int[row])


@njit(parallel=True, cache=True)
def _packed_by_rows(hist, ihist, bin_rows, g_int, h_int, k, order, start, stop, pk, n_tasks, parent, subtract):
    """Sparse nodes: task t sums rows ``[start + t m / T, start + (t + 1) m / T)`` into ``ihist[t]``;
    then each task adds its features' slots over the T histograms, unpacks and subtracts."""
    m, n_features = stop - start, hist.shape[0]
    for task in prange(n_tasks):
        lo, hi = start + task * m // n_tasks, start + (task + 1) * m // n_tasks
        for i in range(lo, hi):
            pk[i] = pack(g_int, h_int, order[i], k)
        mine = ihist[task].reshape(ihist[task].size)
        for at in range(len(mine)):  # loops, not array expressions: those would compile into
            mine[at] = 0             # parallel loops of their own, seconds longer
        _rows_packed(mine, bin_rows, order, pk, lo, hi, np.int64(0), n_features)  # (one type: compiled once)
    for task in prange(n_tasks):
        first, last = task * n_features // n_tasks, (task + 1) * n_features // n_tasks
        for f in range(first, last):
            add_tasks(ihist, n_tasks, f)
        unpack_into(hist, ihist[0], first, last, k, parent, subtract)


_packed_by_rows_serial = serial(_packed_by_rows)  # a small data set's (build_packed_into)


@njit(cache=True, inline='always')
def add_tasks(ihist, n_tasks, f):
    """``ihist[0, f] += ihist[t, f]`` for the tasks ``t = 1 .. n_tasks - 1`` (exact: integers)."""
    for t in range(1, n_tasks):
        for b in range(N_SLOTS):
            ihist[0, f, b] += ihist[t, f, b]


@njit(cache=True, inline='always')
def unpack_add(hist, ihist, first, last, k):
    """hist[f, b] += the (G, H) packed in ihist[f, b], features ``[first, last)``."""
    h_mask = (np.int64(1) << k) - 1
    for f in range(first, last):
        for b in range(N_SLOTS):
            s = ihist[f, b]
            hist[f, b, 0] += np.float64(s >> k)  # arithmetic shift: the signed G
            hist[f, b, 1] += np.float64(s & h_mask)


@njit(cache=True, inline='always')
def unpack_into(hist, ihist, first, last, k, parent, subtract):
    """hist[f, b] = the (G, H) packed in ihist[f, b] (padding slots 0), features ``[first, last)``; if
    ``subtract``, ``parent[f, b] -= hist[f, b]`` in the same pass: a node summed in one chunk writes its
    float histogram once (zeroing it, adding into it and subtracting it were three passes over
    561 KB at 136 features; the same values)."""
    h_mask = (np.int64(1) << k) - 1
    for f in range(first, last):
        for b in range(N_SLOTS):
            s = ihist[f, b]
            g, h = np.float64(s >> k), np.float64(s & h_mask)  # arithmetic shift: the signed G
            hist[f, b, 0], hist[f, b, 1] = g, h
            if subtract:
                parent[f, b, 0] -= g
                parent[f, b, 1] -= h
        for b in range(N_SLOTS, FEATURE_SLOTS):
            hist[f, b, 0] = hist[f, b, 1] = 0.0


@njit(parallel=True, cache=True)
def _packed_parallel(hist, ihist, bin_columns, bin_rows, sparse, in_order, packed, segment, pk, n_tasks,
                     parent, subtract):
    g_int, h_int, chunk, k = packed
    order, start, stop = segment
    for i in prange(start, stop):
        pk[i] = pack(g_int, h_int, order[i], k)
    for task in prange(n_tasks):
        _packed_task(np.int64(task), n_tasks, hist, ihist, bin_columns, bin_rows, sparse, in_order,
                     segment, pk, (chunk, k), parent, subtract)


_packed_parallel_serial = serial(_packed_parallel)  # a small data set's (build_packed_into)


@njit(cache=True)
def _packed_task(task, n_tasks, hist, ihist, bin_columns, bin_rows, sparse, in_order, segment, pk, chunking,
                 parent, subtract):
    """One task's features ``[first, last)``: per chunk of rows, zero, sum packed, unpack and add;
    then subtract from the parent (a node in one chunk: unpacked and subtracted in one pass,
    :func:`unpack_into`). ``segment``: ``(order, start, stop)``; ``chunking``: ``(chunk, k)``."""
    order, start, stop = segment
    chunk, k = chunking
    n_features = hist.shape[0]
    first, last = task * n_features // n_tasks, (task + 1) * n_features // n_tasks
    one_chunk = chunk >= stop - start
    if not one_chunk:
        hist[first:last] = 0.0
    iflat = ihist.reshape(ihist.size)  # (d * FEATURE_SLOTS,) feature f at f * FEATURE_SLOTS
    for chunk_start in range(start, stop, chunk):
        chunk_stop = min(stop, chunk_start + chunk)
        ihist[first:last] = 0
        if sparse:
            _rows_packed(iflat, bin_rows, order, pk, chunk_start, chunk_stop, first, last)
        else:
            columns_packed(iflat, bin_columns, in_order, order, pk, chunk_start, chunk_stop,
                           np.arange(n_features), first, last)
        if one_chunk:
            unpack_into(hist, ihist, first, last, k, parent, subtract)
        else:
            unpack_add(hist, ihist, first, last, k)
    if subtract and not one_chunk:
        subtract_features(parent, hist, first, last)


_1, _2, _3, _4 = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
_NS = np.uint64(FEATURE_SLOTS)
_ROW_FEATURES = np.uint64(ROW_FEATURES)


@njit(cache=True)
def columns_packed(iflat, bin_columns, in_order, order, pk, start, stop, features, first, last):
    """Dense nodes: per block of rows, four of the features ``features[first:last]`` per pass over
    the block (as ``_histogram``)."""
    d = len(iflat) // FEATURE_SLOTS
    n_rows = len(bin_columns) // d
    for block_start in range(start, stop, ROW_BLOCK):
        block_stop = min(stop, block_start + ROW_BLOCK)
        j = first
        while j + 4 <= last:
            f0, f1, f2, f3 = features[j], features[j + 1], features[j + 2], features[j + 3]
            c0 = bin_columns[f0 * n_rows:(f0 + 1) * n_rows]
            c1 = bin_columns[f1 * n_rows:(f1 + 1) * n_rows]
            c2 = bin_columns[f2 * n_rows:(f2 + 1) * n_rows]
            c3 = bin_columns[f3 * n_rows:(f3 + 1) * n_rows]
            b0, b1 = np.uint64(f0 * FEATURE_SLOTS), np.uint64(f1 * FEATURE_SLOTS)
            b2, b3 = np.uint64(f2 * FEATURE_SLOTS), np.uint64(f3 * FEATURE_SLOTS)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                row = i if in_order else np.uint64(order[i])
                p = pk[i]
                iflat[b0 + np.uint64(c0[row])] += p
                iflat[b1 + np.uint64(c1[row])] += p
                iflat[b2 + np.uint64(c2[row])] += p
                iflat[b3 + np.uint64(c3[row])] += p
            j += 4
        for j in range(j, last):
            f = features[j]
            column = bin_columns[f * n_rows:(f + 1) * n_rows]
            base = np.uint64(f * FEATURE_SLOTS)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                row = i if in_order else np.uint64(order[i])
                iflat[base + np.uint64(column[row])] += pk[i]


@njit(cache=True)
def _rows_packed(iflat, bin_rows, order, pk, start, stop, first, last):
    """Sparse nodes: gather a block of rows' bins ``[first, last)``, then sum from it."""
    width = np.uint64(last - first)
    n_features = np.uint64(len(iflat) // FEATURE_SLOTS)
    block = np.empty(GATHER_ROWS * (last - first), dtype=np.uint8)  # (GATHER_ROWS, width)
    base = np.uint64(first * FEATURE_SLOTS)
    for block_start in range(start, stop, GATHER_ROWS):
        block_stop = min(stop, block_start + GATHER_ROWS)
        gather_block(block, bin_rows, order, block_start, block_stop, n_features, first, width, stop)
        j = np.uint64(0)
        while j + _ROW_FEATURES <= width:  # ROW_FEATURES features at a time (``_histogram``'s row pass)
            at = base + j * _NS
            k = j
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                p = pk[i]
                for q in range(ROW_FEATURES):  # a constant trip count: unrolled
                    iflat[at + np.uint64(q) * _NS + np.uint64(block[k + np.uint64(q)])] += p
                k += width
            j += _ROW_FEATURES
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

"""The row partition of the fast tree grower (LightGBM's DataPartition).

Every leaf owns a contiguous segment of one of two row-id buffers. Splitting a
leaf moves its segment, stably, into the other buffer::

    src  [ r0 r1 r2 r3 r4 r5 r6 r7 ]           goes left?  1 0 0 1 1 0 1 0
    dst  [ r0 r3 r4 r6 | r1 r2 r5 r7 ]         left child | right child

so both children keep the rows in their original order (and the histogram
kernels walk memory forwards). Each row is moved to a selected position, with
no branch per row: a branch on "goes left?" is mispredicted about every other
row (one pass that branched ran at 5-6 ns a row on segments of 8,000-16,000 rows,
two passes without branches at about 2). Segments of more than ``PARALLEL_ROWS``
positions are cut into an even number of equal blocks of at most ``PARTITION_BLOCK``
(two threads get equal shares): one parallel pass counts each block's left rows, a
prefix sum gives every block its write offsets, a second parallel pass moves the rows.
Smaller segments are moved on the calling thread. The threshold was 131,072 positions
(a 60,000-row segment had measured 149 us on one thread and 176 on two, at a high load);
at 32,768, with equal blocks, the calling thread's share of a tree fell by about 5% (the
main thread's CPU time of one tree on the speed benchmark's lambdas, with the siblings'
split search on two threads: docs/benchmarks.md). A stable partition is unique, so
neither the blocks nor the thread count can change it.
"""
from __future__ import annotations

from numba import prange

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.reference.constants import MISSING_BIN

PARTITION_BLOCK = 16384
PARALLEL_ROWS = 1 << 15  # segments up to this many positions are partitioned on the calling thread


@njit(cache=True)
def _goes_left(b, bin_threshold, missing_left):
    return missing_left if b == MISSING_BIN else b <= bin_threshold


@njit(cache=True)
def partition(src, dst, start, stop, column, bin_threshold, missing_left, goes_left, block_lefts):
    """Stably move ``src[start:stop]`` to ``dst[start:stop]``, left rows first; return the left
    child's rows and the segment's rows missing the feature (the grower's histograms do not
    count rows).

    # IN  src (m,) row ids; column (n_rows,) uint8 bins of the split feature
    # OUT dst (m,) positions [start, stop)
    # BUF goes_left (m,) uint8, block_lefts (2 * (m // PARTITION_BLOCK + 2),) int64, or None when no
    #     segment has more than PARALLEL_ROWS positions (m at most): numba then compiles no parallel pass
    """
    if block_lefts is None or stop - start <= PARALLEL_ROWS:
        return _partition_serial(src, dst, start, stop, column, bin_threshold, missing_left, goes_left)
    return _partition_blocks(src, dst, start, stop, column, bin_threshold, missing_left, goes_left,
                             block_lefts)


@njit(cache=True)
def _partition_serial(src, dst, start, stop, column, bin_threshold, missing_left, goes_left):
    """Count the left rows, then move every row: with the left child's size known, both
    children are written in one pass."""
    n_left = n_missing = 0
    for i in range(start, stop):
        b = column[src[i]]
        goes_left[i] = _goes_left(b, bin_threshold, missing_left)
        n_left += goes_left[i]
        n_missing += b == MISSING_BIN
    _move(src, dst, start, stop, goes_left, start, start + n_left)
    return n_left, n_missing


@njit(cache=True)
def _move(src, dst, first, last, goes_left, left, right):
    """``src[first:last]`` to ``dst``: left rows from ``left`` on, the others from ``right`` on.
    One write per row at a selected position (no branch to mispredict)."""
    for i in range(first, last):
        to_left = goes_left[i]
        dst[left if to_left else right] = src[i]
        left += to_left
        right += 1 - to_left


@njit(parallel=True, cache=True)
def _partition_blocks(src, dst, start, stop, column, bin_threshold, missing_left, goes_left,
                      block_lefts):
    n_blocks = 2 * ((stop - start + 2 * PARTITION_BLOCK - 1) // (2 * PARTITION_BLOCK))  # even: two threads' shares
    size = (stop - start + n_blocks - 1) // n_blocks  # at most PARTITION_BLOCK
    block_missing = block_lefts[len(block_lefts) // 2:]
    for block in prange(n_blocks):
        first = start + block * size
        n_left = n_missing = 0
        for i in range(first, min(stop, first + size)):
            b = column[src[i]]
            goes_left[i] = _goes_left(b, bin_threshold, missing_left)
            n_left += goes_left[i]
            n_missing += b == MISSING_BIN
        block_lefts[block] = n_left
        block_missing[block] = n_missing
    total_left = total_missing = 0
    for block in range(n_blocks):  # exclusive prefix sum: left rows before each block
        block_lefts[block], total_left = total_left, total_left + block_lefts[block]
        total_missing += block_missing[block]
    for block in prange(n_blocks):
        first = start + block * size
        _move(src, dst, first, min(stop, first + size), goes_left,
              start + block_lefts[block], start + total_left + (first - start - block_lefts[block]))
    return total_left, total_missing

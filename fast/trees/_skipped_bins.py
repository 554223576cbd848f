r"""Dense nodes' histograms without each sparse feature's most frequent bin (LightGBM's ``FixHistogram``).

Many ranking features hold one value for most documents (a zero count, a missing
score): in the benchmark's MSLR-shaped data 43% of all row-feature entries fall
in their feature's most frequent bin. A feature's bins sum to the node's totals, so
those entries need not be added:

.. math::  \mathrm{hist}_f[b^*_f] = (G, H) - \sum_{b \ne b^*_f} \mathrm{hist}_f[b]

A feature is *sparse* when its most frequent bin ``skip[f]`` holds at least
``SKIP_SHARE`` of all rows. The layout (:func:`sparse_rows`, made once per binned
matrix by ``_layout``) lists each row's other entries of the sparse features, as
slot numbers ``f * FEATURE_SLOTS + b`` in uint16, rows in order (a CSR matrix; its row
starts in int32 while they fit, 4 bytes a row), and a bit per entry, set on each row's first
(``row_starts``, 64 to a uint64 word: 3.5 bytes a row on the benchmark's 28 entries a row). A row
without any entry gets one, into a padding slot (``PADDING``, zeroed after the sums). A node of at least ``1 / SKIP_RATIO`` of the rows (the root among them) and big enough
for threads is then summed as::

    gather     prange over rows     gh[i] = (g, h) of row order[i]            O(m)
    dense      one task per range   the column pass over the dense features   O(m * d_dense)
    sparse     two fixed halves     each row's entries into hist (first half)
               of the node's rows   or spare (second half)                    O(entries)
                                    (rows in order, the root: one stream)
    fix        prange over features hist += spare; slot skip[f] = totals - the rest;
                                    the sibling's parent -= hist

A node of more rows than ``gh`` holds (the grower's root under ``_layout.low_memory``:
``_grower.gathered_rows``, half the rows and one, 8 bytes a row less) is gathered and summed one
half at a time, its dense features' sums carried from the first half into the second (the same
additions in the same order), each half's entries by one task, which sums fewer dense features
(``ENTRY_COST``). The sums are the same bit for bit.

The totals are the node's ``(G, H)`` as the grower holds them (the root's sums,
a child's from its parent's histogram). A dense feature's slots are summed in row
order, as the reference does; a sparse feature's other slots in two halves, and its
skipped slot by the subtraction: both differ from the reference's sums in the last
bits only, and not at all where every value is exact (multiples of 2**-8). The halves
are the same on any thread count. The one rounding that would matter, a skipped slot
whose hessians are all zero left at ``-1e-17`` instead of 0 (which a
``min_hessian_in_leaf`` of 0 would reject), is rounded back: a remainder within
``HESSIAN_NOISE * H`` of zero is zero.

**The root's entries as one stream.** Summed row by row, a row's loop ends after a varying
number of entries (28 on average, 17 either way, on the benchmark's rows), which the branch
predictor misses at every row: that, not the histogram's size, set the entries' 0.86 ns an update
(28 a row read by a loop of fixed length: 0.54-0.60; feature blocks whose histograms fit L1/L2, each
a loop per row: 2.5-5x slower; ``benchmarks/entry_stream.py``). Rows in order (the root without row
sampling) have their entries contiguous, so :func:`_sum_entries_in_order` runs one loop over the
entries, a row's position advanced by its first entry's bit (0.64-0.69 ns an update against
0.85-0.89 row by row, one thread, load 6-7); each slot still sums in row order, the same bits.
Scattered rows keep the loop per row (gathering their entries into one stream first cost 1.3-1.6x).

The costs: reading a feature from its entries costs more per entry than the column pass
does per row, so a feature gains once about a third of its rows sit in its skipped bin.
The entries of scattered rows are read through ``order``, which the hardware cannot
foresee: they are prefetched ``PREFETCH_ROWS`` rows ahead, their starts twice as far
(``_simd.prefetch``; without it small nodes lost to the column pass). Against the row pass (``_histogram``'s two halves)
this wins down to about a tenth of the rows on the speed benchmark (``benchmarks/speed.py``);
hence ``SKIP_RATIO``: with sparse features, nodes under a tenth of the rows take the row pass (without them, under ``SPARSE_RATIO``'s
sixteenth). Quantized training sums the same way in packed integers
(:func:`build_packed_skipping`; exact, the reference's tree bit for bit; the float
kernel on its integers had been slower than the packed column pass, 142 against 136
ms). One tree, 2 threads, in docs/benchmarks.md. A slot number must fit 16 bits: with
more than ``MAX_FEATURES`` (254) features every node takes the column pass.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from twinrank.fast.runtime._kernel_cache import njit, serial
from twinrank.fast.runtime._simd import LANES, add_row, prefetch
from twinrank.fast.runtime._threads import over_chunks
from twinrank.fast.trees._histogram import (
    FEATURE_SLOTS,
    PREFETCH_ROWS,
    UNFUSED,
    add_features,
    every_row_in_order,
    subtract_features,
    sum_column_blocks,
    zero_features,
)
from twinrank.fast.trees._packed_histogram import add_tasks, columns_packed, pack, unpack_add
from twinrank.reference.constants import N_SLOTS

SKIP_SHARE = 0.3  # a feature is sparse when its most frequent bin holds this share of the rows
SKIP_RATIO = 10  # nodes of at least 1 / SKIP_RATIO of the rows are summed this way, smaller ones by rows
HESSIAN_NOISE = 2.0**-40  # a skipped slot's hessian within this times H of zero is zero
MAX_FEATURES = (2**16 - 1) // FEATURE_SLOTS  # slot numbers are uint16
ENTRY_COST = 3  # an entry's time in dense bins', for the halves' shares of work (measured on the 1M benchmark root)
ROW_CHUNK = 1 << 16  # rows per chunk of the layout's passes
PADDING = N_SLOTS  # the slot (a padding one) of a row's entry when it has none: every row has one


def sparse_rows(binned: np.ndarray, row_major: np.ndarray) -> tuple:
    """``(skip, dense, entry_start, entries, row_starts)`` of ``binned`` (n_rows, d) uint8, given also
    as its C-ordered copy ``row_major`` (or None: :func:`_by_rows`; module docstring); :func:`all_dense`
    when no feature is sparse or there are more than ``MAX_FEATURES`` features."""
    n_rows, n_features = binned.shape
    if n_features > MAX_FEATURES or n_rows == 0:
        return all_dense(n_features)
    counts = np.zeros((n_features, N_SLOTS), dtype=np.int64)
    over_chunks(_count_bins, n_features, binned.reshape(-1, order="F"), counts)
    top = counts.argmax(axis=1)  # (d,) the most frequent bin, the lowest of equals
    skip = np.where(counts.max(axis=1) >= SKIP_SHARE * n_rows, top, -1).astype(np.int64)
    if (skip < 0).all():
        return all_dense(n_features)
    entry_start = np.zeros(n_rows + 1, dtype=np.int64)
    _by_rows(_count_entries, binned, row_major, skip, entry_start)
    np.cumsum(entry_start, out=entry_start)
    entries = np.empty(entry_start[-1], dtype=np.uint16)
    _by_rows(_fill_entries, binned, row_major, skip, entry_start, entries)
    firsts = np.zeros(-(-len(entries) // 64) * 64, dtype=np.bool_)  # whole words of 64 entries
    firsts[entry_start[:-1]] = True
    row_starts = np.packbits(firsts, bitorder="little").view("<u8").astype(np.uint64)
    if entry_start[-1] < 2**31:  # int32 row starts (half the memory) whenever they fit
        entry_start = entry_start.astype(np.int32)
    return skip, np.flatnonzero(skip < 0).astype(np.int64), entry_start, entries, row_starts


def _by_rows(kernel, binned, row_major, skip, entry_start, *out):
    """``kernel(first, last, rows, n_features, skip, entry_start, *out)`` (:func:`_count_entries`,
    :func:`_fill_entries`) over the chunks of ``ROW_CHUNK`` rows, reading the C-ordered ``row_major``;
    when it is None (``_layout``'s one layout), each chunk's rows copied to C order in turn (a chunk's
    bins, not all rows')."""
    n_rows, n_features = binned.shape
    n_chunks = (n_rows + ROW_CHUNK - 1) // ROW_CHUNK
    if row_major is not None:
        over_chunks(kernel, n_chunks, row_major.reshape(-1), n_features, skip, entry_start, *out)
        return

    def chunks(first, last):
        for c in range(first, last):
            block = np.ascontiguousarray(binned[c * ROW_CHUNK:(c + 1) * ROW_CHUNK])
            kernel(0, 1, block.reshape(-1), n_features, skip, entry_start[c * ROW_CHUNK:], *out)

    over_chunks(chunks, n_chunks)


def all_dense(n_features: int) -> tuple:
    """The layout of ``n_features`` features none of which is sparse: :func:`build_skipping` is then
    the plain column pass, each feature summed by one task in row order (the reference's sums)."""
    return (np.full(n_features, -1, dtype=np.int64), np.arange(n_features, dtype=np.int64),
            np.zeros(1, dtype=np.int32), np.empty(0, dtype=np.uint16), np.empty(0, dtype=np.uint64))


@njit(cache=True, nogil=True)
def _count_bins(first, last, columns, counts):
    """counts[f, b] = rows of feature f in bin b, for the features ``[first, last)`` of the
    column-major bins."""
    n_rows = len(columns) // len(counts)
    for f in range(first, last):
        for r in range(f * n_rows, (f + 1) * n_rows):
            counts[f, columns[r]] += 1


@njit(cache=True, nogil=True)
def _count_entries(first, last, rows, n_features, skip, entry_start):
    """entry_start[r + 1] = row r's entries, for the rows of chunks ``[first, last)``."""
    n_rows = len(rows) // n_features
    for r in range(first * ROW_CHUNK, min(n_rows, last * ROW_CHUNK)):
        n = 0
        for f in range(n_features):
            n += skip[f] >= 0 and rows[r * n_features + f] != skip[f]
        entry_start[r + 1] = max(n, 1)  # a row without entries gets one into a padding slot


@njit(cache=True, nogil=True)
def _fill_entries(first, last, rows, n_features, skip, entry_start, entries):
    """Row r's entries (slot numbers, features ascending) at ``entries[entry_start[r]:]``, for the
    rows of chunks ``[first, last)``; a row without any, one into the first padding slot of the first
    sparse feature (``PADDING``), which no sum keeps."""
    n_rows = len(rows) // n_features
    padding = np.argmax(skip >= 0) * FEATURE_SLOTS + PADDING
    for r in range(first * ROW_CHUNK, min(n_rows, last * ROW_CHUNK)):
        at = entry_start[r]
        for f in range(n_features):
            b = rows[r * n_features + f]
            if skip[f] >= 0 and b != skip[f]:
                entries[at] = f * FEATURE_SLOTS + b
                at += 1
        if at == entry_start[r]:
            entries[at] = padding


@njit(parallel=UNFUSED, cache=True)
def build_skipping(hist, spare, bin_columns, gradients, hessians, order, start, stop, gh, n_threads,
                   totals, layout, parent, subtract):
    """Overwrite ``hist`` with the sums over ``order[start:stop]`` (module docstring); if
    ``subtract``, also ``parent -= hist``.

    # IN  bin_columns (n_rows * d,) uint8 column-major; gradients, hessians (n_rows,); order (m,)
    #     row ids; totals (G, H) of the node; layout: :func:`sparse_rows` or :func:`all_dense`
    # OUT hist (d, FEATURE_SLOTS, LANES) float64 (slots 256.. zero); parent the same if subtract
    # BUF gh (at least (m + 1) // 2, 2) float64, overwritten: the (g, h) of the node's rows from gh[0] on,
    #     or of one half of them at a time if they are more than gh holds (module docstring); spare like hist
    """
    skip, dense, entry_start, entries, row_starts = layout
    n_features, m = hist.shape[0], stop - start
    n_tasks = max(2, min(n_threads, len(dense)))
    in_order = every_row_in_order(order, start, stop, len(gradients))
    mid = (start + stop) // 2
    halves = 1 if m <= len(gh) else 2  # a node of more rows than gh holds (the root): one half at a time
    gh_flat = gh.reshape(gh.size)
    for half in range(halves):
        lo, hi = (start, stop) if halves == 1 else ((start, mid) if half == 0 else (mid, stop))
        rows, n = order[lo:hi], hi - lo  # this pass's rows, from position 0 (gh[0] their first)
        ordered = in_order and lo == start  # rows[i] == i
        for i in prange(n):
            gh[i, 0], gh[i, 1] = gradients[rows[i]], hessians[rows[i]]
        own = _entries_task_share(n, len(dense), ENTRY_COST * len(entries) * n // len(gradients), n_tasks)
        starts = entry_start[lo:] if in_order and halves == 2 else entry_start  # row lo + i at starts[i]
        for t in prange(n_tasks):  # each task zeroes what it sums (one parallel loop fewer to compile)
            task = np.int64(t)  # uint64 in numba's parallel body, int64 where it types the kernel: one type
            if halves == 1:
                first, last = task * len(dense) // n_tasks, (task + 1) * len(dense) // n_tasks
            else:  # task 0 sums the half's entries: fewer dense features
                first, last = _dense_share(task, n_tasks, len(dense), own)
            if half == 0:
                for j in range(first, last):
                    zero_features(hist, dense[j], dense[j] + 1)
            sum_column_blocks(hist.reshape(hist.size), bin_columns, ordered, rows, gh_flat, np.int64(0), n,
                              dense, first, last)
            if len(dense) < n_features and (task < 2 if halves == 1 else task == 0):  # each half's entries
                first_half = task == 0 if halves == 1 else half == 0
                e_lo, e_hi = (0, n) if halves == 2 else ((0, mid - start) if first_half else (mid - start, n))
                target = hist if first_half else spare
                for f in range(n_features):
                    if skip[f] >= 0:
                        zero_features(target, f, f + 1)
                if in_order:  # rows lo + e_lo .. of one run: the entries as one stream
                    _sum_entries_in_order(target.reshape(target.size), row_starts, entries, gh_flat, e_lo,
                                          starts[e_lo], starts[e_hi])
                else:
                    _sum_entries(target.reshape(target.size), starts, entries, in_order, rows, gh_flat, e_lo, e_hi)
    for feature in prange(n_features):
        f = np.int64(feature)  # (as ``task`` above: the callees compiled once, not for both types)
        if skip[f] >= 0:
            add_features(hist, spare, f, f + 1)
            _fix(hist, f, skip[f], totals)
        if subtract:
            subtract_features(parent, hist, f, f + 1)


build_skipping_serial = serial(build_skipping)  # a small data set's: no parallel loop compiled (_grower.big_nodes)


@njit(parallel=UNFUSED, cache=True)
def build_packed_skipping(hist, ihist, bin_columns, packed, segment, pk, n_threads, totals, layout, parent,
                          subtract):
    """Quantized training's twin of :func:`build_skipping`: rows packed into int64 as
    ``_packed_histogram.build_packed_into`` does, ``chunk`` rows at a time. Integer sums do not
    depend on their order, so the entries are cut into one share of rows per task (each into
    its own ``ihist[task]``), as the thread count has it; the skipped slot is exact.

    # IN  as ``build_packed_into`` (packed ``(g_int, h_int, chunk, k)``, segment ``(order, start, stop)``),
    #     plus totals (G, H) of the node and layout (:func:`sparse_rows`)
    # OUT hist (d, FEATURE_SLOTS, LANES) float64; parent the same if subtract
    # BUF ihist (n_threads, d, FEATURE_SLOTS) int64; pk (m,) int64, positions [start, stop) overwritten
    """
    g_int, h_int, chunk, k = packed
    order, start, stop = segment
    skip, dense, entry_start, entries, _ = layout
    n_features = hist.shape[0]
    n_tasks = max(1, min(n_threads, len(ihist)))
    in_order = every_row_in_order(order, start, stop, len(g_int))
    k = np.int64(k)
    for i in prange(start, stop):
        pk[i] = pack(g_int, h_int, order[i], k)
    zero_features(hist, np.int64(0), n_features)
    for chunk_start in range(start, stop, chunk):
        chunk_stop = min(stop, chunk_start + chunk)
        for task in prange(n_tasks):
            first, last = task * len(dense) // n_tasks, (task + 1) * len(dense) // n_tasks
            mine = ihist[task]
            for f in range(n_features):
                if skip[f] >= 0:
                    for b in range(FEATURE_SLOTS):
                        mine[f, b] = 0
            for j in range(first, last):
                for b in range(FEATURE_SLOTS):
                    ihist[0, dense[j], b] = 0
            columns_packed(ihist[0].reshape(ihist[0].size), bin_columns, in_order, order, pk, chunk_start,
                           chunk_stop, dense, first, last)
            m = chunk_stop - chunk_start
            lo, hi = chunk_start + task * m // n_tasks, chunk_start + (task + 1) * m // n_tasks
            _entries_packed(mine.reshape(mine.size), entry_start, entries, in_order, order, pk, lo, hi)
        for f in prange(n_features):
            if skip[f] >= 0:
                add_tasks(ihist, n_tasks, f)
            unpack_add(hist, ihist[0], f, f + 1, k)
    for feature in prange(n_features):
        f = np.int64(feature)  # (as in build_skipping)
        if skip[f] >= 0:
            _fix(hist, f, skip[f], totals)
        if subtract:
            subtract_features(parent, hist, f, f + 1)


build_packed_skipping_serial = serial(build_packed_skipping)  # a small data set's (_grower.big_nodes)


@njit(cache=True)
def _entries_task_share(n, n_dense, n_entries, n_tasks):
    """Dense features for the task that also sums the entries, ``n_entries`` dense bins' time, of ``n``
    rows x ``n_dense``: what evens the tasks' work, at least 0. On the benchmark's rows (28 entries
    and 56 dense bins a row) none: one task sums the entries, the other the dense features (the
    root's time as in one pass, 1M rows: 58.8-59.8 against 59.4-59.8 ms of CPU, where an entry
    costed as one dense bin left the halves 2-3 ms slower)."""
    share = ((n * n_dense + n_entries) // n_tasks - n_entries) // max(n, 1)
    return max(0, min(n_dense, share))


@njit(cache=True)
def _dense_share(task, n_tasks, n_dense, own):
    """Task ``task``'s dense features ``[first, last)``: ``own`` to task 0, the rest in equal shares."""
    if task == 0:
        return 0, own
    rest = n_dense - own
    return own + (task - 1) * rest // (n_tasks - 1), own + task * rest // (n_tasks - 1)


_1 = np.uint64(1)
_L = np.uint64(LANES)
_AHEAD = np.uint64(PREFETCH_ROWS)  # unsigned, as the positions it is added to
_AHEAD2 = np.uint64(2 * PREFETCH_ROWS)
_6, _63 = np.uint64(6), np.uint64(63)


# The prefetches are written out in both loops, not called: a helper given the arrays, even
# inlined, increments and decrements their reference counts (atomic operations) at every row,
# which cost a third of the time of a node's entries (half the rows, one thread).
@njit(cache=True)
def _sum_entries(flat, entry_start, entries, in_order, order, gh_flat, lo, hi):
    """Positions ``[lo, hi)``: each entry (a slot number) of row ``order[i]`` adds its ``(g, h)``.
    Scattered rows (not ``in_order``) are prefetched in two stages: the start of the row
    ``2 * PREFETCH_ROWS`` positions ahead, the entries of the row ``PREFETCH_ROWS`` ahead (whose
    start was asked for then; asked for at once, the entries' address waited on that miss)."""
    top = np.uint64(hi)
    for i in range(np.uint64(lo), top):
        if not in_order:
            if i + _AHEAD2 < top:
                prefetch(entry_start, np.uint64(order[i + _AHEAD2]))
            if i + _AHEAD < top:
                prefetch(entries, entry_start[np.uint64(order[i + _AHEAD])])
        pair = i << _1
        row = i if in_order else np.uint64(order[i])
        for e in range(np.uint64(entry_start[row]), np.uint64(entry_start[row + _1])):
            add_row(flat, np.uint64(entries[e]) * _L, gh_flat, pair)


@njit(cache=True)
def _sum_entries_in_order(flat, row_starts, entries, gh_flat, first, lo, hi):
    """The entries ``[lo, hi)`` of consecutive rows, ``lo`` the first entry of the row whose ``(g, h)``
    is at position ``first``: each adds the ``(g, h)`` of its row, whose position advances at every
    row's first entry (bit ``e`` of ``row_starts``; every row has one). One loop over the entries,
    64 at a time (a word of ``row_starts``), not one per row: a row's loop ends after a varying
    number of entries (28 on average, 17 either way, on the benchmark's rows), which the branch
    predictor misses at every row (module docstring)."""
    position = np.uint64(first) - _1
    e, top = np.uint64(lo), np.uint64(hi)
    while e < top:
        starts = row_starts[e >> _6] >> (e & _63)
        stop = min(top, (e | _63) + _1)
        for k in range(e, stop):
            position += starts & _1
            starts >>= _1
            add_row(flat, np.uint64(entries[k]) * _L, gh_flat, position << _1)
        e = stop


@njit(cache=True)
def _entries_packed(iflat, entry_start, entries, in_order, order, pk, lo, hi):
    """Positions ``[lo, hi)``: each entry (a slot number) of row ``order[i]`` adds its packed ``pk[i]``
    (prefetched as :func:`_sum_entries`)."""
    top = np.uint64(hi)
    for i in range(np.uint64(lo), top):
        if not in_order:
            if i + _AHEAD2 < top:
                prefetch(entry_start, np.uint64(order[i + _AHEAD2]))
            if i + _AHEAD < top:
                prefetch(entries, entry_start[np.uint64(order[i + _AHEAD])])
        row = i if in_order else np.uint64(order[i])
        p = pk[i]
        for e in range(np.uint64(entry_start[row]), np.uint64(entry_start[row + _1])):
            iflat[np.uint64(entries[e])] += p


@njit(cache=True)
def _fix(hist, f, skipped, totals):
    """Feature ``f``'s skipped slot: the totals minus its other slots."""
    for lane in range(LANES):
        rest = totals[lane]
        for b in range(N_SLOTS):
            if b != skipped:
                rest -= hist[f, b, lane]
        hist[f, skipped, lane] = rest
        hist[f, PADDING, lane] = 0.0  # the entries of rows without any (``_fill_entries``)
    if abs(hist[f, skipped, 1]) <= HESSIAN_NOISE * totals[1]:
        hist[f, skipped, 1] = 0.0

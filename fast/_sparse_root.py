r"""The root histogram without each sparse feature's most frequent bin (LightGBM's ``FixHistogram``).

Many ranking features hold one value for most documents (a zero count, a missing
score): in the benchmark's MSLR-shaped data 43% of all row-feature entries fall
in their feature's most frequent bin. At the root, where every row is summed,
those entries need not be added: a feature's bins sum to the node's totals, so

.. math::  \mathrm{hist}_f[b^*_f] = (G, H, n) - \sum_{b \ne b^*_f} \mathrm{hist}_f[b]

A feature is *sparse* when its most frequent bin ``skip[f]`` holds at least
``SKIP_SHARE`` of the rows. The layout (:func:`sparse_rows`, made once per binned
matrix by ``_layout``) lists each row's other entries of the sparse features, as
slot numbers ``f * FEATURE_SLOTS + b`` in uint16, rows in order (a CSR matrix)::

    gather     prange over rows     gh[i] = (g[i], h[i])                      O(n)
    dense      one task per range   the column pass (``_histogram``) over the
                                    dense features                            O(n * d_dense)
    sparse     two fixed halves     each row's entries into hist (first half)
               of the rows          or spare (second half)                    O(entries)
    fix        prange over sparse   hist += spare; slot skip[f] = totals - the rest
               features

A dense feature's slots are summed in row order, as the reference does; a sparse
feature's other slots in two halves, and its skipped slot by the subtraction: both
differ from the reference's sums in the last bits only, and not at all where every
value is exact (multiples of 2**-8, quantized training's integers). The halves are the
same on any thread count. The one rounding that would matter, a skipped slot whose
hessians are all zero left at ``-1e-17`` instead of 0 (which a ``min_hessian_in_leaf``
of 0 would reject), is rounded back: a remainder within ``HESSIAN_NOISE * H`` of zero is
zero.

The costs (1M x 136, one thread, the same gradients): the column pass over every
feature 86 ms; every feature from the entries 67 ms (0.86 ns per entry against the
column pass's 0.64, so a feature needs a share of at least about 0.3 in its skipped
bin to gain); dense features by columns and the others by entries: see
docs/benchmarks.md. A slot number must fit 16 bits: with more than
``65535 // FEATURE_SLOTS`` features (254) the root takes the column pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from twinrank.reference.constants import N_SLOTS

from ._histogram import FEATURE_SLOTS, SLOT_SIZE, sum_column_blocks, zero_features
from ._simd import LANES, add_row
from ._threads import over_chunks

SKIP_SHARE = 0.3  # a feature is sparse when its most frequent bin holds this share of the rows
HESSIAN_NOISE = 2.0**-40  # a skipped slot's hessian within this times H of zero is zero
MAX_FEATURES = (2**16 - 1) // FEATURE_SLOTS  # slot numbers are uint16
ROW_CHUNK = 1 << 16  # rows per chunk of the layout's passes


def sparse_rows(binned: np.ndarray, row_major: np.ndarray) -> tuple:
    """``(skip, dense, entry_start, entries)`` of ``binned`` (n_rows, d) uint8, given also as its
    C-ordered copy ``row_major`` (module docstring); all empty when no feature is sparse or there
    are more than ``MAX_FEATURES`` features."""
    n_rows, n_features = binned.shape
    none = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint16))
    if n_features > MAX_FEATURES or n_rows == 0:
        return none
    counts = np.zeros((n_features, N_SLOTS), dtype=np.int64)
    over_chunks(_count_bins, n_features, binned.reshape(-1, order="F"), counts)
    top = counts.argmax(axis=1)  # (d,) the most frequent bin, the lowest of equals
    skip = np.where(counts.max(axis=1) >= SKIP_SHARE * n_rows, top, -1).astype(np.int64)
    if (skip < 0).all():
        return none
    rows = row_major.reshape(-1)
    n_chunks = (n_rows + ROW_CHUNK - 1) // ROW_CHUNK
    entry_start = np.zeros(n_rows + 1, dtype=np.int64)
    over_chunks(_count_entries, n_chunks, rows, n_features, skip, entry_start)
    np.cumsum(entry_start, out=entry_start)
    entries = np.empty(entry_start[-1], dtype=np.uint16)
    over_chunks(_fill_entries, n_chunks, rows, n_features, skip, entry_start, entries)
    return skip, np.flatnonzero(skip < 0).astype(np.int64), entry_start, entries


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
        entry_start[r + 1] = n


@njit(cache=True, nogil=True)
def _fill_entries(first, last, rows, n_features, skip, entry_start, entries):
    n_rows = len(rows) // n_features
    for r in range(first * ROW_CHUNK, min(n_rows, last * ROW_CHUNK)):
        at = entry_start[r]
        for f in range(n_features):
            b = rows[r * n_features + f]
            if skip[f] >= 0 and b != skip[f]:
                entries[at] = f * FEATURE_SLOTS + b
                at += 1


@njit(parallel=True, cache=True)
def build_root(hist, spare, bin_columns, gradients, hessians, gh, n_threads, totals, layout):
    """Overwrite ``hist`` with the sums over every row, in order (module docstring).

    # IN  bin_columns (n_rows * d,) uint8 column-major; gradients, hessians (n_rows,); totals
    #     (G, H, n) of every row; layout: :func:`sparse_rows` (not empty)
    # OUT hist (d, FEATURE_SLOTS, LANES) float64 (slots 256.. zero)
    # BUF gh (n_rows, 2) float64; spare (d, FEATURE_SLOTS, LANES) float64
    """
    skip, dense, entry_start, entries = layout
    n_rows, n_features = len(gradients), hist.shape[0]
    n_tasks = max(2, min(n_threads, len(dense)))
    everyone = np.empty(0, dtype=np.int64)  # order: unused, every row in order
    for i in prange(n_rows):
        gh[i, 0], gh[i, 1] = gradients[i], hessians[i]
    for f in prange(n_features):
        zero_features(hist, f, f + 1)
        zero_features(spare, f, f + 1)
    gh_flat = gh.reshape(gh.size)
    for task in prange(n_tasks):
        first, last = task * len(dense) // n_tasks, (task + 1) * len(dense) // n_tasks
        sum_column_blocks(hist.reshape(hist.size), bin_columns, True, everyone, gh_flat, 0, n_rows,
                          dense, first, last)
        if task < 2:
            lo, hi = (0, n_rows // 2) if task == 0 else (n_rows // 2, n_rows)
            target = hist if task == 0 else spare
            _sum_entries(target.reshape(target.size), entry_start, entries, gh_flat, lo, hi)
    for f in prange(n_features):
        if skip[f] >= 0:
            _fix(hist, spare, f, skip[f], totals)


_1 = np.uint64(1)
_L = np.uint64(LANES)


@njit(cache=True)
def _sum_entries(flat, entry_start, entries, gh_flat, lo, hi):
    """Rows ``[lo, hi)``: each entry (a slot number) adds the row's ``(g, h, 1)``."""
    for i in range(np.uint64(lo), np.uint64(hi)):
        pair = i << _1
        for e in range(np.uint64(entry_start[i]), np.uint64(entry_start[i + 1])):
            add_row(flat, np.uint64(entries[e]) * _L, gh_flat, pair)


@njit(cache=True, inline='always')
def _fix(hist, spare, f, skipped, totals):
    """Feature ``f``: the halves added, then the skipped slot is the totals minus the other slots."""
    flat, other = hist.reshape(hist.size), spare.reshape(spare.size)
    for at in range(f * SLOT_SIZE, (f + 1) * SLOT_SIZE):
        flat[at] += other[at]
    for lane in range(3):
        rest = totals[lane]
        for b in range(N_SLOTS):
            if b != skipped:
                rest -= hist[f, b, lane]
        hist[f, skipped, lane] = rest
    if abs(hist[f, skipped, 1]) <= HESSIAN_NOISE * totals[1]:
        hist[f, skipped, 1] = 0.0

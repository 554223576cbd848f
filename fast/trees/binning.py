"""Numba-parallel twin of `twinrank.reference.trees.binning`: the same thresholds and bins, bit for bit.

Thresholds are computed one feature per thread (a sort of the column's present
values, of the rows of the reference's ``bin_sample``); bins one block of rows per thread.
``apply_bins`` returns the bins in Fortran order, so each feature's bins are contiguous for
the histogram kernels.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.constants import MISSING_BIN
from twinrank.reference.params import check_int
from twinrank.reference.trees.binning import _check_width, _checked_matrix, bin_sample, refuse_infinite

__all__ = ["MISSING_BIN", "bin_thresholds", "apply_bins"]

_FEATURE_GROUP = 16  # columns copied to contiguous memory at a time by bin_thresholds
_ROW_BLOCK = 512  # rows per task of apply_bins


def bin_thresholds(X, max_bins: int = 255, subsample_for_bin: int | None = None,
                   seed: int = 0) -> list[np.ndarray]:
    """Numba-parallel twin of `twinrank.reference.trees.binning.bin_thresholds`.

    One column per task on ``numba.get_num_threads()`` threads: NumPy's sort (SIMD,
    and it releases the GIL), then a compiled pass over the sorted values. The columns
    of the rows read (all, or ``bin_sample``'s) are first copied ``_FEATURE_GROUP`` at a time
    into contiguous memory by a compiled gather over blocks of rows (NumPy's
    ``asfortranarray(X[rows, j0:j1])`` took 5x longer).
    """
    check_int("max_bins", max_bins, low=2, high=255)
    X = _kernel_input(_checked_matrix(X))
    sample = bin_sample(X.shape[0], subsample_for_bin, seed)
    rows = np.arange(X.shape[0]) if sample is None else sample  # (n_read,)
    thresholds = []
    with ThreadPoolExecutor(max_workers=numba.get_num_threads()) as pool:
        for j0 in range(0, X.shape[1], _FEATURE_GROUP):
            group = np.empty((len(rows), min(_FEATURE_GROUP, X.shape[1] - j0)), dtype=X.dtype, order="F")
            over_chunks(_gather_columns, (len(rows) + _ROW_BLOCK - 1) // _ROW_BLOCK, X, rows, j0, group)
            thresholds += pool.map(lambda j, column: _thresholds_of(column, max_bins, j, sample),
                                   range(j0, j0 + group.shape[1]), group.T)
    return thresholds


def _kernel_input(X: np.ndarray) -> np.ndarray:
    """``X`` itself if float32 or float64; else in float64 (float16, long double), the reference's values."""
    return X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)


@njit(cache=True, nogil=True)
def _gather_columns(first_block, last_block, X, rows, j0, group):
    # IN X (n_rows, n_features), rows (n_read,) ascending; OUT group (n_read, g) = X[rows, j0:j0 + g],
    # the rows of blocks first_block .. last_block - 1
    n_read, g = group.shape
    for block in range(first_block, last_block):
        stop = min(n_read, (block + 1) * _ROW_BLOCK)
        for j in range(g):
            for i in range(block * _ROW_BLOCK, stop):
                group[i, j] = X[rows[i], j0 + j]


def _thresholds_of(column: np.ndarray, max_bins: int, j: int, rows) -> np.ndarray:
    present = np.sort(column[~np.isnan(column)])  # (n_present,)
    refuse_infinite(present, column, j, rows)
    out = np.empty(max_bins - 1)
    return out[:_column_thresholds(present, max_bins, out)].copy()


@njit(cache=True, nogil=True)
def _column_thresholds(present, max_bins, out):
    """Write the thresholds of one sorted column into ``out``; return how many."""
    n = len(present)
    if n == 0:
        return 0
    if _n_distinct_at_most(present, max_bins + 1) <= max_bins:
        k, previous = np.int64(0), np.float64(present[0])
        for i in range(1, n):
            value = np.float64(present[i])
            if value != previous:
                k = _append_new(out, k, 0.5 * previous + 0.5 * value)
                previous = value
        return k
    k = np.int64(0)
    for j in range(1, max_bins):
        p = (n - 1) * j
        lo, hi = p // max_bins, -(-p // max_bins)
        k = _append_new(out, k, 0.5 * np.float64(present[lo]) + 0.5 * np.float64(present[hi]))
    return k


@njit(cache=True, nogil=True)
def _n_distinct_at_most(sorted_values, cap):
    """The number of distinct values of a sorted array, counting stops at ``cap``."""
    count = 1
    for i in range(1, len(sorted_values)):
        if sorted_values[i] != sorted_values[i - 1]:
            count += 1
            if count >= cap:
                break
    return count


@njit(cache=True, nogil=True)
def _append_new(out, k, value):
    """Append ``value`` to the non-decreasing ``out[:k]`` unless it repeats the last entry."""
    if k > 0 and out[k - 1] == value:
        return k
    out[k] = value
    return k + 1


def apply_bins(X, thresholds: list) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.binning.apply_bins`.

    Returns the bins in Fortran order (each feature contiguous), read-only. Blocks of
    ``_ROW_BLOCK`` rows, one contiguous range of blocks per thread; in a block, one feature at a
    time, a binary search (binary lifting over the thresholds padded with ``+inf`` to 255 slots)
    run for all the block's values step by step, so the searches of different rows overlap in the
    pipeline instead of waiting on each other's loads. float32 features are compared with float32
    thresholds, each rounded down (:func:`_threshold_table`), without a float64 copy of ``X``.
    """
    X = _kernel_input(_checked_matrix(X))
    _check_width(X, thresholds)
    first_steps = np.array([1 << (len(t).bit_length() - 1) if len(t) else 0 for t in thresholds],
                           dtype=np.uint32)  # (n_features,) largest power of two <= len(t)
    binned = np.empty(X.shape, dtype=np.uint8, order="F")  # (n_rows, n_features)
    over_chunks(_apply_bins, (X.shape[0] + _ROW_BLOCK - 1) // _ROW_BLOCK, np.ascontiguousarray(X),
                _threshold_table(thresholds, X.dtype), first_steps, binned)
    binned.flags.writeable = False  # the tree grower caches a row-major copy (fast/trees/_layout.py)
    return binned


def _threshold_table(thresholds: list, dtype) -> np.ndarray:
    """(n_features, 255) thresholds padded with ``+inf``, in ``dtype``. For float32, each threshold
    ``t`` becomes ``t32``, the largest float32 ``<= t``: for a float32 ``x``, ``t < x`` iff
    ``t32 < x`` (if ``t32 < x``, then ``x`` is at least the next float32 above ``t32``, which is
    above ``t``), so the bins are the reference's float64 comparisons."""
    table = np.full((len(thresholds), MISSING_BIN), np.inf)
    for j, t in enumerate(thresholds):
        table[j, :len(t)] = t
    if dtype == np.float64:
        return table
    with np.errstate(over="ignore"):
        nearest = table.astype(np.float32)  # beyond float32's range: inf, rounded down below
    return np.where(nearest > table, np.nextafter(nearest, np.float32(-np.inf)), nearest)


@njit(cache=True, nogil=True)
def _apply_bins(first_block, last_block, X, table, first_steps, binned):
    # IN X (n_rows, n_features), table (n_features, 255) in X's dtype, first_steps (n_features,) uint32
    # OUT binned (n_rows, n_features), the rows of blocks first_block .. last_block - 1
    n_rows, n_features = X.shape
    values = np.empty(_ROW_BLOCK, dtype=X.dtype)  # one feature of the block's rows
    position = np.empty(_ROW_BLOCK, dtype=np.uint32)  # their thresholds below, so far
    for block in range(first_block, last_block):
        start = block * _ROW_BLOCK
        m = min(n_rows, start + _ROW_BLOCK) - start
        for j in range(n_features):
            t = table[j]
            for r in range(m):
                values[r] = X[start + r, j]
                position[r] = 0
            step = first_steps[j]
            while step > 0:  # binary lifting: steps first_step, ..., 2, 1; unsigned, so no wraparound checks
                for r in range(m):
                    p = position[r]
                    position[r] = p + step if t[np.uint64(p + step - np.uint32(1))] < values[r] else p
                step >>= np.uint32(1)
            for r in range(m):  # NaN compared below no threshold: its own bin
                binned[start + r, j] = MISSING_BIN if np.isnan(values[r]) else position[r]

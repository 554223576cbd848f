"""Numba-parallel twin of `twinrank.reference.trees.binning`: the same thresholds and bins, bit for bit.

Thresholds are computed one feature per thread (a sort of the column's present
values); bins one block of rows per thread. ``apply_bins`` returns the bins in
Fortran order, so each feature's bins are contiguous for the histogram kernels.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.constants import MISSING_BIN
from twinrank.reference.params import check_int
from twinrank.reference.trees.binning import _check_width, _checked_matrix, refuse_infinite

__all__ = ["MISSING_BIN", "bin_thresholds", "apply_bins"]

_FEATURE_GROUP = 16  # columns copied to contiguous memory at a time by bin_thresholds
_ROW_BLOCK = 1024  # rows per task of apply_bins


def bin_thresholds(X, max_bins: int = 255) -> list[np.ndarray]:
    """Numba-parallel twin of `twinrank.reference.trees.binning.bin_thresholds`.

    One column per task on ``numba.get_num_threads()`` threads: NumPy's sort (SIMD,
    and it releases the GIL), then a compiled pass over the sorted values. Columns
    are copied ``_FEATURE_GROUP`` at a time into contiguous memory first.
    """
    check_int("max_bins", max_bins, low=2, high=255)
    X = _checked_matrix(X)
    thresholds = []
    with ThreadPoolExecutor(max_workers=numba.get_num_threads()) as pool:
        for j0 in range(0, X.shape[1], _FEATURE_GROUP):
            group = np.asfortranarray(X[:, j0:j0 + _FEATURE_GROUP])  # (n_rows, <= 16)
            thresholds += pool.map(lambda j, column: _thresholds_of(column, max_bins, j),
                                   range(j0, j0 + group.shape[1]), group.T)
    return thresholds


def _thresholds_of(column: np.ndarray, max_bins: int, j: int) -> np.ndarray:
    present = np.sort(column[~np.isnan(column)])  # (n_present,)
    refuse_infinite(present, column, j)
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

    Returns the bins in Fortran order (each feature contiguous), read-only; blocks of
    ``_ROW_BLOCK`` rows, one contiguous range of blocks per thread, a binary search per value (log2 of the feature's
    threshold count steps) over the thresholds padded with ``+inf`` to 255 slots.
    """
    X = _checked_matrix(X)
    _check_width(X, thresholds)
    table = np.full((X.shape[1], MISSING_BIN), np.inf)  # (n_features, 255) thresholds, +inf padded
    for j, t in enumerate(thresholds):
        table[j, :len(t)] = t
    first_steps = np.array([1 << (len(t).bit_length() - 1) if len(t) else 0 for t in thresholds],
                           dtype=np.int64)  # (n_features,) largest power of two <= len(t)
    binned = np.empty(X.shape, dtype=np.uint8, order="F")  # (n_rows, n_features)
    over_chunks(_apply_bins, (X.shape[0] + _ROW_BLOCK - 1) // _ROW_BLOCK, np.ascontiguousarray(X), table,
                first_steps, binned)
    binned.flags.writeable = False  # the tree grower caches a row-major copy (fast/trees/_layout.py)
    return binned


@njit(cache=True, nogil=True)
def _apply_bins(first_block, last_block, X, table, first_steps, binned):
    # IN X (n_rows, n_features), table (n_features, 255), first_steps (n_features,)
    # OUT binned (n_rows, n_features), the rows of blocks first_block .. last_block - 1
    n_rows, n_features = X.shape
    for block in range(first_block, last_block):
        stop = min(n_rows, (block + 1) * _ROW_BLOCK)
        for j in range(n_features):
            t, first_step = table[j], first_steps[j]
            for i in range(block * _ROW_BLOCK, stop):
                binned[i, j] = _bin_of(t, first_step, X[i, j])


@njit(cache=True)
def _bin_of(t, first_step, x):
    """The number of thresholds below ``x``, by binary lifting: steps ``first_step, ..., 2, 1``
    over the sorted thresholds (padded with ``+inf``). NaN gets ``MISSING_BIN``."""
    if np.isnan(x):
        return MISSING_BIN
    x = np.float64(x)
    position = 0
    step = first_step
    while step > 0:
        if t[position + step - 1] < x:
            position += step
        step >>= 1
    return position

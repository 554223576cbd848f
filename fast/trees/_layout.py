"""The two memory layouts of a binned matrix that the fast tree grower reads.

Column-major (Fortran) bins make the histograms of big nodes fast (each feature
one contiguous stream); row-major bins make those of small nodes fast (a row's
bins are two or three cache lines instead of one line per feature). The grower
needs both. ``twinrank.fast.trees.binning.apply_bins`` returns read-only Fortran-ordered
bins; their row-major copy is made once, on first use, and kept until the binned
matrix itself is garbage collected. Read-only means the copy cannot go stale.
Any other array gets fresh copies on every call (correct, slower).

The dense nodes of every tree read a third layout, each row's entries outside its
sparse features' most frequent bins (``_skipped_bins``); it is made for the
read-only bins only, on first use, and kept with the row-major copy. Other arrays
have no sparse features (every dense node then takes the plain column pass).
The features with a missing value (``_counts``) are listed once the same way.
"""
from __future__ import annotations

import weakref

import numpy as np

from twinrank.fast.trees._counts import missing_columns
from twinrank.fast.trees._skipped_bins import all_dense, sparse_rows

_ROW_MAJOR: dict = {}  # id(binned) -> (weak reference, C-ordered copy, {"sparse": sparse_rows})


def bin_layouts(binned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(columns, rows)``: the bins in Fortran order and in C order."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return _read_only(np.asfortranarray(binned)), _read_only(np.ascontiguousarray(binned))
    return binned, _entry(binned)[1]


def _entry(binned: np.ndarray) -> tuple:
    key = id(binned)
    entry = _ROW_MAJOR.get(key)
    if entry is None or entry[0]() is not binned:
        forget = weakref.ref(binned, lambda _, key=key, cache=_ROW_MAJOR: cache.pop(key, None))
        entry = _ROW_MAJOR[key] = (forget, _read_only(np.ascontiguousarray(binned)), {})
    return entry


def sparse_layout(binned: np.ndarray) -> tuple:
    """``_skipped_bins.sparse_rows`` of the read-only Fortran-ordered bins (made once), else
    ``all_dense``."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return all_dense(binned.shape[1])
    _, row_major, kept = _entry(binned)
    if "sparse" not in kept:
        kept["sparse"] = sparse_rows(binned, row_major)
    return kept["sparse"]


def missing_mask(binned: np.ndarray) -> np.ndarray:
    """``_counts.missing_columns`` of the bins, made once for the read-only Fortran-ordered bins
    (kept with the row-major copy)."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return missing_columns(binned)
    _, _, kept = _entry(binned)
    if "missing" not in kept:
        kept["missing"] = missing_columns(binned)
    return kept["missing"]


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels see one array type (numba compiles once)."""
    view = array.view()
    view.flags.writeable = False
    return view

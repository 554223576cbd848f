"""The two memory layouts of a binned matrix that the fast tree grower reads.

Column-major (Fortran) bins make the histograms of big nodes fast (each feature
one contiguous stream); row-major bins make those of small nodes fast (a row's
bins are two or three cache lines instead of one line per feature). The grower
needs both. ``twinrank.fast.binning.apply_bins`` returns read-only Fortran-ordered
bins; their row-major copy is made once, on first use, and kept until the binned
matrix itself is garbage collected. Read-only means the copy cannot go stale.
Any other array gets fresh copies on every call (correct, slower).
"""
from __future__ import annotations

import weakref

import numpy as np

_ROW_MAJOR: dict = {}  # id(binned) -> (weak reference, C-ordered copy)


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
        entry = _ROW_MAJOR[key] = (forget, _read_only(np.ascontiguousarray(binned)))
    return entry


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels see one array type (numba compiles once)."""
    view = array.view()
    view.flags.writeable = False
    return view

"""The memory layouts of a binned matrix that the fast tree grower reads.

Column-major (Fortran) bins make the histograms of big nodes fast (each feature
one contiguous stream); row-major bins make those of small nodes fast (a row's
bins are two or three cache lines instead of one line per feature). The grower
reads both. ``twinrank.fast.trees.binning.apply_bins`` returns read-only Fortran-ordered
bins; their row-major copy is made once, on first use, and kept until the binned
matrix itself is garbage collected. Read-only means the copy cannot go stale.
Any other array gets fresh copies on every call (correct, slower).

**One layout** (``low_memory``, ``FitParams.low_memory``): inside :func:`low_memory` ``(True)`` no
row-major copy is made (``d`` bytes a row less, as many as the bins themselves): the grower is given
an empty one, and every node is summed by the column pass (``_histogram``: the same sums in the same
order, so the same trees bit for bit, at more time per tree for the small nodes, whose rows are
scattered over every column).

The dense nodes of every tree read a third layout, each row's entries outside its
sparse features' most frequent bins (``_skipped_bins``); it is made for the
read-only bins only, on first use, and kept with the row-major copy (from the copy
when there is one, else from the columns a block of rows at a time: the same entries).
Other arrays have no sparse features (every dense node then takes the plain column pass).
The features with a missing value (``_counts``) are listed once the same way.
"""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

from twinrank.fast.trees._counts import missing_columns
from twinrank.fast.trees._skipped_bins import all_dense, sparse_rows
from twinrank.reference._param_checks import check_bool

_ROW_MAJOR: dict = {}  # id(binned) -> (weak reference, {"rows": C-ordered copy, "sparse": sparse_rows, ...})
_ONE_LAYOUT = [False]  # inside low_memory(True): no row-major copy


@contextlib.contextmanager
def low_memory(on: bool):
    """Within the block, the grower reads the column-major bins alone (module docstring) if ``on``."""
    check_bool("low_memory", on)
    old, _ONE_LAYOUT[0] = _ONE_LAYOUT[0], bool(on)
    try:
        yield
    finally:
        _ONE_LAYOUT[0] = old


def bin_layouts(binned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(columns, rows)``: the bins in Fortran order and in C order (empty under :func:`low_memory`)."""
    if _ONE_LAYOUT[0]:
        return _columns(binned), _read_only(np.empty(0, dtype=np.uint8))
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return _columns(binned), _read_only(np.ascontiguousarray(binned))
    return binned, _row_major(binned)


def _columns(binned: np.ndarray) -> np.ndarray:
    """The bins in Fortran order: ``binned`` itself when read-only, else a read-only copy."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return _read_only(np.asfortranarray(binned))
    return binned


def _kept(binned: np.ndarray) -> dict:
    """What is kept for the read-only ``binned`` while it lives."""
    key = id(binned)
    entry = _ROW_MAJOR.get(key)
    if entry is None or entry[0]() is not binned:
        forget = weakref.ref(binned, lambda _, key=key, cache=_ROW_MAJOR: cache.pop(key, None))
        entry = _ROW_MAJOR[key] = (forget, {})
    return entry[1]


def _row_major(binned: np.ndarray) -> np.ndarray:
    """The C-ordered copy of the read-only Fortran-ordered ``binned``, made once."""
    kept = _kept(binned)
    if "rows" not in kept:
        kept["rows"] = _read_only(np.ascontiguousarray(binned))
    return kept["rows"]


def sparse_layout(binned: np.ndarray) -> tuple:
    """``_skipped_bins.sparse_rows`` of the read-only Fortran-ordered bins (made once), else
    ``all_dense``."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return all_dense(binned.shape[1])
    kept = _kept(binned)
    if "sparse" not in kept:
        row_major = kept.get("rows") if _ONE_LAYOUT[0] else _row_major(binned)
        kept["sparse"] = sparse_rows(binned, row_major)
    return kept["sparse"]


def missing_mask(binned: np.ndarray) -> np.ndarray:
    """``_counts.missing_columns`` of the bins, made once for the read-only Fortran-ordered bins
    (kept with the row-major copy)."""
    if not binned.flags.f_contiguous or binned.flags.writeable:
        return missing_columns(binned)
    kept = _kept(binned)
    if "missing" not in kept:
        kept["missing"] = missing_columns(binned)
    return kept["missing"]


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels see one array type (numba compiles once)."""
    view = array.view()
    view.flags.writeable = False
    return view

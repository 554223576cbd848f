"""Numba-parallel twin of `twinrank.reference.trees.tree`: the same trees, grown by compiled kernels.

The whole best-first loop runs compiled (``_grower.grow``): a row partition
buffer instead of per-node row arrays, the smaller child's histogram built in
parallel over features and the larger one by subtraction from the parent,
split scans over features in feature order. On
exactly representable gradients (e.g. multiples of 2**-8) the trees are
identical to the reference's, on any number of threads. Otherwise the sums are
taken in a different order and gains and leaf values differ in the last bits,
but the splits are the same: gains that close are ties (``GAIN_TIE_RTOL``), and
both twins resolve them by one rule (`twinrank.reference.trees.tree`, **Ties**).
"""
from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from twinrank.fast.runtime._simd import LANES
from twinrank.fast.runtime._threads import over_chunks, threads
from twinrank.fast.runtime._workspace import empty
from twinrank.fast.trees import _grower
from twinrank.fast.trees._counts import count_features
from twinrank.fast.trees._grower import GrowerData, GrowerRules, NodeArrays, Packing, Workspace, grow
from twinrank.fast.trees._histogram import FEATURE_SLOTS
from twinrank.fast.trees._layout import bin_layouts, missing_mask, sparse_layout
from twinrank.fast.trees._partition import PARTITION_BLOCK
from twinrank.fast.trees._quantize_kernels import quantize_gradients, refit
from twinrank.fast.trees._skipped_bins import all_dense
from twinrank.fast.trees._split import SplitRules, best_split
from twinrank.reference.constants import COUNT, LEAF, MISSING_BIN, N_SLOTS, G, H
from twinrank.reference.io.model import Tree
from twinrank.reference.params import TreeParams
from twinrank.reference.trees._checks import _checked_inputs, checked_leaf_of_row
from twinrank.reference.trees._quantize import QuantizedGradients, checked_quantized, integer_job
from twinrank.reference.trees._split import GAIN_TIE_RTOL, Split, tie_floor
from twinrank.reference.trees.tree import _split_threshold, least_squares_job

__all__ = ["grow_tree", "grow_trees", "trees_at_once", "build_histogram", "find_best_split",
           "tie_floor", "Split", "GAIN_TIE_RTOL", "N_SLOTS", "G", "H", "COUNT", "QuantizedGradients",
           "quantize_gradients"]

_NO_DEPTH_LIMIT = 2**62


def grow_tree(binned, gradients, hessians, thresholds, params: TreeParams, *, rows=None,
              feature_mask=None, feature_cost=None, quantized=None, leaf_of_row=None) -> Tree:
    """Numba-parallel twin of `twinrank.reference.trees.tree.grow_tree`.

    Reads the bins in two layouts (``_layout``; one under ``_layout.low_memory``): pass the read-only
    Fortran-ordered bins of ``twinrank.fast.trees.binning.apply_bins`` to have the row-major copy made once;
    any other array is copied on every call. With ``quantized`` the histograms are
    sums of small integers (exact in any order), so the tree is the reference's bit
    for bit, values included (refit from leaf sums taken in the reference's order,
    ``_quantize_kernels.refit``).
    """
    job = _checked_inputs(binned, gradients, hessians, thresholds, params, rows, feature_mask,
                          feature_cost)
    leaf_of_row = checked_leaf_of_row(leaf_of_row, len(job.gradients))
    if quantized is None and params.split_gain == "newton":
        no_leaves = np.empty(0, dtype=np.int32)
        return _grow(job, no_leaves if leaf_of_row is None else leaf_of_row, None, rows is None)
    if leaf_of_row is None:
        leaf_of_row = np.zeros(len(job.gradients), dtype=np.int32)  # (n_rows,) filled by the grower
    if quantized is None:  # least-squares splits (every hessian 1), Newton leaves refit as the reference's
        tree = _grow(least_squares_job(job), leaf_of_row, None, rows is None)
        return refit(tree, leaf_of_row, _rows_or_every(rows, job), job.gradients, job.hessians, params.lambda_l2,
                     1.0)
    quantized = checked_quantized(quantized, len(job.gradients))
    quantized = dataclasses.replace(quantized, gradients=quantized.gradients.astype(np.int8, copy=False),
                                    hessians=quantized.hessians.astype(np.uint8, copy=False))
    on_integers = integer_job(job, quantized, dtype=None)  # the grower reads the int8 / uint8 integers
    tree = _grow(on_integers, leaf_of_row, _packing(quantized, job), rows is None)
    return refit(tree, leaf_of_row, _rows_or_every(rows, job), job.gradients, job.hessians, params.lambda_l2,
                 on_integers.gain_factor)


def _rows_or_every(rows, job):
    """The refit's ``rows``: None (every row, in order) when ``grow_tree`` was given none, else the checked ones."""
    return None if rows is None else job.rows


PACKED_CHUNK_ROWS = 1 << 40  # rows per packed chunk at most (tests make it small to cut every node)


def _packing(quantized: QuantizedGradients, job) -> Packing:
    """The grower's ``packing`` for quantized training: the integers, their levels, the largest
    chunk and the buffers (``_grower.grow``)."""
    m, (n_rows, n_features) = len(job.rows), job.binned.shape
    return Packing(g_int=quantized.gradients, h_int=quantized.hessians,
                   g_levels=np.int64(2 ** (quantized.bits - 1) - 1),
                   h_levels=np.int64(2 ** quantized.bits - 1),
                   max_chunk=np.int64(PACKED_CHUNK_ROWS),
                   ihist=empty("ihist", (numba.get_num_threads(), n_features, FEATURE_SLOTS), np.int64),
                   pk=empty("pk", (m,), np.int64),  # (m,) a node's gathered packed integers
                   active0=empty("active0", (m,), _row_id_type(n_rows)),  # the active rows' two buffers
                   active1=empty("active1", (m,), _row_id_type(n_rows)))


def _grow(job, leaf_of_row, packing, every_row: bool) -> Tree:
    """The tree of ``job`` (``_checked_inputs``); fills ``leaf_of_row`` unless it is empty; sums
    the histograms packed (``_packed_histogram``) with ``packing`` (:func:`_packing`), else in
    float64. ``every_row``: ``job.rows`` is the check's own ``arange`` (``grow_tree`` got no rows),
    which the grower may overwrite; else they are copied first."""
    data, rules, out, work, packing = grower_arguments(job, leaf_of_row, packing, every_row)
    n_nodes = grow(data, rules, out, work, packing)
    assert n_nodes <= len(out.feature)  # node ids in creation order: 2 * leaves - 1 suffice
    nodes = {name: getattr(out, name)[:n_nodes] for name in NodeArrays._fields if name != "leaf_of_row"}
    threshold = [0.0 if f == LEAF else _split_threshold(job.thresholds[f], b)
                 for f, b in zip(nodes["feature"], nodes["bin_threshold"])]
    return Tree(threshold=threshold, **nodes)


def grower_arguments(job, leaf_of_row, packing, every_row: bool) -> tuple:
    """``_grower.grow``'s five arguments ``(data, rules, out, work, packing)`` for ``job`` (:func:`_grow`):
    the node arrays preset to leaves (room for the leaves the rows can fill, ``TreeParams.leaves_for``),
    the bins' two layouts, the buffers. Their types are the grower's signature (``_warm`` compiles
    with those of a tiny tree)."""
    params = job.params
    big = _grower.big_nodes(*job.binned.shape)  # else the grower is compiled without what big nodes take
    n_nodes_max = 2 * job.max_leaves - 1
    bin_columns, bin_rows = _flat_layouts(job.binned)
    data = GrowerData(bin_columns=bin_columns, bin_rows=bin_rows,
                      gradients=np.ascontiguousarray(job.gradients),
                      hessians=np.ascontiguousarray(job.hessians),
                      rows=_first_buffer(job.rows, len(job.gradients), every_row), n_bins=job.n_bins,
                      feature_mask=np.ascontiguousarray(job.feature_mask), penalty=job.penalty,
                      skipping=sparse_layout(job.binned), has_missing=missing_mask(job.binned))
    rules = GrowerRules(max_leaves=job.max_leaves,
                        max_depth=_NO_DEPTH_LIMIT if params.max_depth is None else params.max_depth,
                        min_rows=job.min_rows, min_hessian=float(params.min_hessian_in_leaf),
                        l2=float(params.lambda_l2), min_gain=float(params.min_gain_to_split),
                        gain_rtol=GAIN_TIE_RTOL, separate=params.missing_split == "separate",
                        n_threads=numba.get_num_threads(),
                        big=True if big else None)
    out = NodeArrays(**_leaf_arrays(n_nodes_max), leaf_of_row=leaf_of_row)
    return data, rules, out, _work(job, big, packing is None, len(bin_rows) == 0), packing


def _work(job, big: bool, in_float: bool, one_layout: bool) -> Workspace:
    """The grower's scratch buffers (``_grower.grow``'s ``work``), from ``_workspace.empty``: the
    same arrays tree after tree within a fit (without ``big`` nodes, ``_grower.big_nodes``, no
    parallel partition's ``block_lefts``: ``_partition.partition``). The first row buffer is the
    round's rows themselves (:func:`_first_buffer`). The gathered ``(g, h)`` only for histograms
    summed ``in_float`` (quantized training gathers packed integers, ``Packing.pk``, instead); with
    ``one_layout`` (no row-major bins: ``_layout.low_memory``) for half the rows where that suffices
    (``_grower.gathered_rows``)."""
    m, (n_rows, n_features) = len(job.rows), job.binned.shape
    row_id = _row_id_type(n_rows)
    block_lefts = empty("block_lefts", (2 * (m // PARTITION_BLOCK + 2),), np.int64) if big else None
    return Workspace(order1=empty("order1", (m,), row_id),
                     gh=empty("gh", (_gathered(job, m, one_layout) if in_float else 0, 2)),
                     goes_left=empty("goes_left", (m,), np.uint8),
                     block_lefts=block_lefts,
                     hist=empty("hist", (job.max_leaves + 1, n_features, FEATURE_SLOTS, LANES)))


def _gathered(job, m: int, one_layout: bool) -> int:
    """``_grower.gathered_rows`` of a tree on ``m`` rows of ``job``'s bins."""
    n_rows, n_features = job.binned.shape
    has_sparse = len(sparse_layout(job.binned)[1]) < n_features
    return _grower.gathered_rows(m, n_rows, n_features, has_sparse, one_layout)


def _leaf_arrays(n: int) -> dict:
    """Node arrays preset to leaves (the fields of ``_grower.NodeArrays`` but ``leaf_of_row``)."""
    return {
        "feature": np.full(n, LEAF, dtype=np.int32),
        "bin_threshold": np.full(n, LEAF, dtype=np.int32),
        "left": np.full(n, LEAF, dtype=np.int32),
        "right": np.full(n, LEAF, dtype=np.int32),
        "missing": np.full(n, LEAF, dtype=np.int32),
        "value": np.zeros(n),
        "gain": np.zeros(n),
        "count": np.zeros(n, dtype=np.int64),
        "hessian_sum": np.zeros(n),
    }


def _flat_layouts(binned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bins as two flat buffers, column-major and row-major (one kernel type for any shape)."""
    columns, rows = bin_layouts(binned)
    return columns.reshape(-1, order="F"), rows.reshape(-1)


def _first_buffer(rows: np.ndarray, n_rows: int, own: bool) -> np.ndarray:
    """The grower's ``rows``, its first row buffer (``_grower.grow`` overwrites it): ``rows`` itself when
    they are ``own`` (not the caller's) and of the grower's type, else a copy as :func:`_row_id_type`."""
    row_id = _row_id_type(n_rows)
    return rows if own and rows.dtype == row_id else rows.astype(row_id)


def _row_ids(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """Row ids as :func:`_row_id_type`."""
    return rows.astype(_row_id_type(n_rows))


def _row_id_type(n_rows: int) -> type:
    """int32 (half the memory traffic of int64) whenever the row ids fit."""
    return np.int32 if n_rows < 2**31 else np.int64


def build_histogram(binned, gradients, hessians, rows) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.tree.build_histogram` (the grower's kernel).

    Parallel over features; each slot summed in row order, as the reference's ``np.bincount``.
    The grower's histograms sum (g, h) only; the count lane is counted here apart.
    """
    columns, by_row = _flat_layouts(binned)
    rows = _row_ids(np.asarray(rows), binned.shape[0])
    gradients = np.ascontiguousarray(gradients, dtype=np.float64)
    hessians = np.ascontiguousarray(hessians, dtype=np.float64)
    n_rows, n_features = binned.shape
    hist = np.empty((n_features, FEATURE_SLOTS, LANES))  # (n_features, 258, LANES): g, h
    _grower.build(None, hist, columns, by_row, gradients, hessians, (rows, 0, len(rows)),
                  np.empty((len(rows), 2)), numba.get_num_threads(), hist, False, np.empty_like(hist),
                  all_dense(n_features), np.zeros(2), True)  # no skipped bins: the reference's sums
    out = np.empty((n_features, N_SLOTS, 3))  # (n_features, 256, 3): g, h, count
    out[:, :, :LANES] = hist[:, :N_SLOTS]
    counts = np.empty((n_features, N_SLOTS))
    over_chunks(count_features, n_features, columns, n_rows, rows, counts)
    out[:, :, COUNT] = counts
    return out


def find_best_split(hist, totals, n_bins, allowed, penalty, params: TreeParams, min_rows: int, *,
                    two_way: bool = False, gradient_noise: float = 0.0):
    """Numba-parallel twin of `twinrank.reference.trees.tree.find_best_split` (the grower's kernel)."""
    hist = np.ascontiguousarray(hist, dtype=np.float64)
    n_features = hist.shape[0]
    gains = np.empty(n_features)  # (n_features,) each feature's best candidate
    bins, sides = np.empty(n_features, np.int64), np.empty(n_features, np.int64)
    scans = (gains, bins, sides, np.empty(n_features, dtype=bool))
    g, h, c = (float(v) for v in totals)
    counts = np.ascontiguousarray(hist[:, :, COUNT])  # every feature counted: no row is read
    no_rows = (np.empty(0, np.uint8), 0, np.empty(0, np.int32), 0, 0, -1.0, 0.0, np.empty(0, np.int32), 0, 0,
               np.empty(0, np.bool_))
    rules = SplitRules(min_rows=int(min_rows), min_hessian=float(params.min_hessian_in_leaf),
                       l2=float(params.lambda_l2),
                       three_way=params.missing_split == "separate" and not two_way,
                       min_gain=float(params.min_gain_to_split), rtol=GAIN_TIE_RTOL)
    f = best_split(hist, (g, h, c), np.asarray(n_bins, dtype=np.int64), np.asarray(allowed, dtype=bool),
                   np.asarray(penalty, dtype=np.float64), rules, float(gradient_noise), scans, counts,
                   np.ones(n_features, dtype=bool), counts[:, MISSING_BIN] > 0, no_rows)
    if f < 0:
        return None
    if sides[f] == 2:
        return Split(float(gains[f]), int(f), int(bins[f]), False, True)
    missing_left = sides[f] == 1
    if hist[f, MISSING_BIN, COUNT] == 0:
        c_left = float(counts[f, :bins[f] + 1].sum())  # integers: exact in any order
        missing_left = c_left >= c - c_left
    return Split(float(gains[f]), int(f), int(bins[f]), bool(missing_left))


def grow_trees(binned, gradients, hessians, thresholds, params, samples, *,
               feature_cost=None) -> list:
    """Numba-parallel twin of `twinrank.reference.trees.tree.grow_trees`.

    Grows :func:`trees_at_once` trees at a time, each on one numba thread, when that
    is more than one; else one tree after the other, each on all threads. Each tree
    is the same either way (the grower's result never depends on its thread count).
    """
    def grow_one(sample, n_threads=None):
        rows, mask = sample
        with threads(n_threads):
            return grow_tree(binned, gradients, hessians, thresholds, params, rows=rows,
                             feature_mask=mask, feature_cost=feature_cost)

    n_workers = min(len(samples), trees_at_once())
    if n_workers <= 1:
        return [grow_one(sample) for sample in samples]
    with ThreadPoolExecutor(n_workers) as pool:
        return list(pool.map(lambda sample: grow_one(sample, n_threads=1), samples))


def trees_at_once() -> int:
    """How many trees :func:`grow_trees` grows at once: numba's thread count, or 1.

    Several trees at once need a grower that releases the GIL (``nogil``) and a
    threading layer that may be entered from several threads (``omp`` or ``tbb``;
    ``workqueue`` may not). Deep forest trees have many small nodes, where one tree
    per thread beats all threads on each node.
    """
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet: no layer chosen
        return 1
    if layer not in ("omp", "tbb") or not _grower.grow.targetoptions.get("nogil", False):
        return 1
    return numba.get_num_threads()

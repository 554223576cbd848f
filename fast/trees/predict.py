"""Numba-parallel twin of `twinrank.reference.trees.predict`: the same routes and the same sums, bit for bit.

An ensemble whose trees have at most 64 leaves each (every boosted model of
usual size) is scored by a vectorized QuickScorer (:mod:`._quickscorer`): no tree
is walked; each row's exit leaves come from ANDed bit masks, many rows per SIMD
instruction. Larger trees (random forests), and calls of fewer than ``WALK_ROWS``
rows (for which QuickScorer's blocks of rows would be mostly empty), walk
concatenated node arrays (child ids made global, leaves kept at -1), one block of
``ROW_BLOCK`` rows per task, every tree over the block before the next tree, so a
tree's nodes stay in cache while the block's rows walk it. Either layout is packed
once per model and kept with it (:func:`kept_layout`). Either way each row's score adds the trees
in order, as the reference does, so the result does not depend on the thread count
or the path.
"""
from __future__ import annotations

import operator
import weakref

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.fast.trees import _quickscorer
from twinrank.reference.constants import LEAF, MISSING_BIN
from twinrank.reference.io.model import Ensemble, MissingValues, Tree
from twinrank.reference.trees.predict import _check_n_features, _checked_features

__all__ = ["apply_tree", "predict_tree", "predict_tree_binned", "predict_ensemble", "add_leaf_values"]

ROW_BLOCK = 128
WALK_ROWS = 6  # calls of fewer rows walk the trees (docs/benchmarks.md: the crossover, 100 trees)
# one tree on fewer rows walks (predict_tree_binned: a fit's validation rows, each round): as fast or faster
# (QuickScorer packs the tree on every call), and a small fit's cold start compiles no QuickScorer on bins
WALK_ROWS_ALONE = 10_000
_KEPT: dict = {}  # id(ensemble) -> (weak reference, trees, n_features, {key: layout}), see kept_layout


def apply_tree(tree: Tree, X) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.predict.apply_tree` (parallel over rows)."""
    X = _floats(_checked_features(X, tree))
    leaves = np.empty(len(X), dtype=np.int32)  # (n_rows,)
    over_chunks(_apply, len(X), X, tree.feature, tree.threshold, tree.left, tree.right, tree.missing, leaves)
    return leaves


def predict_tree(tree: Tree, X) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.predict.predict_tree` (parallel over rows)."""
    return tree.value[apply_tree(tree, X)]


def predict_tree_binned(tree: Tree, binned) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.predict.predict_tree_binned` (parallel over rows)."""
    binned = _checked_features(binned, tree)
    if (binned.dtype == np.uint8 and 1 < tree.n_leaves <= _quickscorer.MAX_LEAVES
            and len(binned) >= WALK_ROWS_ALONE):
        out = np.zeros(len(binned))  # (n_rows,) 0 + 1.0 * leaf value: the value, exactly
        alone = Ensemble(trees=[tree], tree_weights=[1.0], n_features=binned.shape[1])
        _quickscorer.score(binned, _quickscorer.pack(alone, np.uint8), np.ones(1), out)
        return out
    out = np.empty(len(binned))  # (n_rows,)
    over_chunks(_predict_binned, len(binned), binned, tree.feature, tree.bin_threshold, tree.left,
                tree.right, tree.missing, tree.value, out)
    return out


def add_leaf_values(scores: np.ndarray, value: np.ndarray, leaf_of_row: np.ndarray, weight: float) -> None:
    """Numba-parallel twin of `twinrank.reference.trees.predict.add_leaf_values` (the same sums, bit for bit)."""
    over_chunks(_add_leaf_values, len(scores), scores, np.ascontiguousarray(value, dtype=np.float64),
                leaf_of_row, float(weight))


@njit(cache=True, nogil=True)
def _add_leaf_values(first, last, scores, value, leaf_of_row, weight):
    if weight == 1.0:
        for i in range(first, last):
            scores[i] += value[leaf_of_row[i]]
    else:
        for i in range(first, last):
            scores[i] += weight * value[leaf_of_row[i]]


def predict_ensemble(ensemble: Ensemble, X, *, as_float32: bool = False) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.predict.predict_ensemble`.

    Fewer than ``WALK_ROWS`` rows walk the trees on the calling thread (a few rows pay
    for every node of QuickScorer's blocks); more are scored by QuickScorer when every
    tree has at most ``_quickscorer.MAX_LEAVES`` leaves, blocks of rows in parallel,
    else tree by tree over a block. Either layout is packed once per model and kept
    with it (:func:`kept_layout`). The missing-value strategy is the reference's (NumPy
    preprocessing; its imputers' trees score bit for bit as here). ``as_float32`` with
    C-ordered float64 rows that QuickScorer scores: each value is rounded to float32 as
    QuickScorer's block transpose reads it (the same rounding as a float32 copy, without
    the copy's pass over the rows); otherwise the rows are rounded first.
    """
    X = _floats(np.asarray(X))
    _check_n_features(X, ensemble.n_features)
    quickscorer = len(X) >= WALK_ROWS and ensemble.n_trees and kept_layout(ensemble, "fits", _quickscorer.fits)
    if as_float32 and X.dtype != np.float32 and not (
            quickscorer and ensemble.missing is None and X.dtype == np.float64 and X.flags.c_contiguous):
        X = X.astype(np.float32)
    X = missing_applied(ensemble, X)
    scores = np.full(len(X), float(ensemble.base_score))  # (n_rows,)
    if ensemble.init_model is not None:
        scores = predict_ensemble(ensemble.init_model, X, as_float32=as_float32) + ensemble.base_score
    if not ensemble.n_trees or not len(X):
        return scores
    weights = np.ascontiguousarray(ensemble.tree_weights, dtype=np.float64)
    if quickscorer:
        dtype = np.dtype(np.float32) if as_float32 else X.dtype  # the thresholds' (and transposed rows') type
        layout = kept_layout(ensemble, dtype, lambda e: _quickscorer.pack(e, dtype))
        _quickscorer.score(X, layout, weights, scores)
    else:
        layout = kept_layout(ensemble, "walk", _packed)
        over_chunks(_predict_packed, (len(X) + ROW_BLOCK - 1) // ROW_BLOCK, X, *layout, weights, scores)
    return scores


def kept_layout(ensemble: Ensemble, key, build):
    """``build(ensemble)``, a scoring layout, made once for this ensemble, its trees and ``key`` (the
    layout's kind and dtype) and kept while the ensemble lives.

    Packing costs O(total nodes) of Python and NumPy per tree, about 1 ms for 100 trees: more
    than scoring a few rows. The layout is kept by ``id(ensemble)`` and dropped when the ensemble
    is garbage collected (a weak reference, as ``_layout`` keeps the row-major bins). It can
    never be stale: it is derived from the trees only, and a :class:`Tree` is a value (frozen
    fields, read-only arrays it owns), so the same tree objects mean the same layout. The
    ensemble itself is mutable, so every call compares, by identity, the trees it holds now
    with those the layout was made from, and ``n_features`` too (about 2 us for 1000 trees);
    what else a score depends on (``tree_weights``, ``base_score``, ``init_model``,
    ``missing``) is read on every call and never kept. A model truncated, copied or loaded is
    another object, with layouts of its own.
    """
    entry = _KEPT.get(id(ensemble))
    if entry is None or entry[0]() is not ensemble or entry[2] != ensemble.n_features \
            or not _same_trees(entry[1], ensemble.trees):
        entry = _KEPT[id(ensemble)] = (_forgetting(ensemble), tuple(ensemble.trees), ensemble.n_features, {})
    layouts = entry[3]
    layout = layouts.get(key)
    if layout is None:
        layout = layouts[key] = build(ensemble)
    return layout


def _same_trees(kept: tuple, trees) -> bool:
    """Whether ``trees`` are the very tree objects ``kept``, in the same order."""
    return len(kept) == len(trees) and all(map(operator.is_, kept, trees))


def _forgetting(ensemble: Ensemble) -> weakref.ref:
    """A weak reference to ``ensemble`` that drops its kept layouts when the ensemble is collected."""
    key = id(ensemble)
    return weakref.ref(ensemble, lambda _, key=key: _KEPT.pop(key, None))


def _floats(X: np.ndarray) -> np.ndarray:
    """Integer or boolean features as float64 (float32 and float64 are used as they are)."""
    return X if X.dtype.kind == "f" else X.astype(np.float64)


def _packed(ensemble: Ensemble):
    """The trees as concatenated node arrays, child ids offset to global ids; plus roots."""
    trees = ensemble.trees
    roots = np.cumsum([0] + [t.n_nodes for t in trees[:-1]]).astype(np.int64)  # (n_trees,)

    def children(name):
        ids = np.concatenate([getattr(t, name).astype(np.int64) for t in trees])  # (n_nodes_total,)
        offsets = np.repeat(roots, [t.n_nodes for t in trees])
        return np.where(ids == LEAF, LEAF, ids + offsets)

    return (np.concatenate([t.feature for t in trees]).astype(np.int64),
            np.concatenate([t.threshold for t in trees]),
            children("left"), children("right"), children("missing"),
            np.concatenate([t.value for t in trees]),
            roots)


@njit(cache=True)
def _leaf_of(x, node, feature, threshold, left, right, missing):
    """Walk row ``x`` from ``node`` to its leaf: NaN -> missing, ``x <= threshold`` -> left."""
    while left[node] != LEAF:
        v = x[feature[node]]
        if np.isnan(v):
            node = missing[node]
        elif np.float64(v) <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return node


@njit(cache=True, nogil=True)
def _apply(first, last, X, feature, threshold, left, right, missing, leaves):
    # IN X (n_rows, d); OUT leaves (n_rows,) int32, rows first .. last - 1
    for i in range(first, last):
        leaves[i] = _leaf_of(X[i], np.int64(0), feature, threshold, left, right, missing)


@njit(cache=True, nogil=True)
def _predict_binned(first, last, binned, feature, bin_threshold, left, right, missing, value, out):
    # IN binned (n_rows, d) uint8; OUT out (n_rows,), rows first .. last - 1
    for i in range(first, last):
        node = 0
        while left[node] != LEAF:
            b = binned[i, feature[node]]
            if b == MISSING_BIN:
                node = missing[node]
            elif b <= bin_threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = value[node]


@njit(cache=True, nogil=True)
def _predict_packed(first_block, last_block, X, feature, threshold, left, right, missing, value, roots,
                    weights, scores):
    # IN X (n_rows, d); packed trees; OUT scores (n_rows,) += sum_t weights[t] * f_t(x), the rows
    #    of blocks first_block .. last_block - 1
    n_rows = X.shape[0]
    for block in range(first_block, last_block):
        first, last = block * ROW_BLOCK, min(n_rows, (block + 1) * ROW_BLOCK)
        for t in range(len(roots)):
            for i in range(first, last):
                leaf = _leaf_of(X[i], roots[t], feature, threshold, left, right, missing)
                scores[i] += weights[t] * value[leaf]


def missing_applied(ensemble: Ensemble, X: np.ndarray) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.trees.predict.missing_applied` (imputers scored here)."""
    if ensemble.missing is None:
        return X
    return MissingValues.from_dict(ensemble.missing).transform(X, predict_ensemble)

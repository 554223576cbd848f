r"""Scoring an ensemble of small trees with a vectorized QuickScorer (Lucchese et al. 2015, 2016).

**Leaves as bits.** Number the leaves of a tree of at most 64 leaves
$0 .. L-1$ from left to right: at every internal node its left subtree,
then its third child's subtree (a ``missing`` child that is neither ``left`` nor
``right``), then its right subtree. At internal node $k$, with split
feature $f_k$ and threshold $t_k$, a row that does not go left can
reach none of the left subtree's leaves; one that goes right, none of the third
child's either. Give each internal node two bit masks,

$$
\mathrm{gt}_k = \neg\,\mathrm{bits}(\text{left and third subtree of } k), \qquad
\mathrm{nan}_k = \begin{cases}
    \text{all ones} & \texttt{missing[k]} = \texttt{left[k]} \\
    \mathrm{gt}_k & \texttt{missing[k]} = \texttt{right[k]} \\
    \neg\,\mathrm{bits}(\text{left subtree of } k) & \text{a third child,}
\end{cases}
$$

and AND, over every internal node, the mask the row's own value picks:

$$
v(x) = \bigwedge_k \begin{cases}
    \mathrm{nan}_k & x_{f_k} \text{ is NaN} \\
    \mathrm{gt}_k & x_{f_k} > t_k \\
    \text{all ones} & x_{f_k} \le t_k .
\end{cases}
$$

The leaf the row reaches is the lowest set bit of $v(x)$ (QuickScorer's
theorem, Lucchese et al., SIGIR 2015, with NaN added): no mask clears the exit
leaf $e$ (a node on its path keeps the branch the row took; a node off it
clears only leaves of its own subtree), and every leaf $l < e$ is cleared by
the deepest common ancestor of $l$ and $e$, where $l$ lies in an
earlier branch than the one the row took. No node is visited in order, so there
is no branch to mispredict and the AND over nodes can run in any order.

**Vectorized over rows** (V-QuickScorer, Lucchese et al., SIGIR 2016). A block of
``ROW_BLOCK`` rows is transposed to (feature, row), eight rows at a time (eight streams of
loads; the next block's rows prefetched meanwhile). Then, tree by tree in tree order, one
bitvector per row starts all ones; for every node of the tree one loop over the block's
rows compares each row's value with the threshold and ANDs the picked mask into the row's
bitvector (SIMD compares and masked ANDs, the bitvectors in L1), and each row adds
$w_t \cdot \mathrm{value}_t[\mathrm{lowest\ bit}]$ to its score, so each row's sum adds the
trees in order, as the reference does, bit for bit, on any thread count. Within a tree the
nodes come in three groups, so that most take one compare per row: those sending NaN left
($\mathrm{nan}_k$ all ones: $x > t_k$, false for NaN, picks $\mathrm{gt}_k$), those sending
it right ($\mathrm{nan}_k = \mathrm{gt}_k$: not $x \le t_k$, true for NaN), and the rest (a
third child, or bins, whose missing value is bin ``MISSING_BIN``: both tests). A block of
fewer rows is scored over its rows rounded up to ``LANES``.

**Exact comparisons.** On float32 features, thresholds are rounded down to
float32: for a float32 $x$, $x \le t \iff x \le \lfloor t
\rfloor_{32}$, the largest float32 not above $t$; the reference compares in
float64, with the same routes.
"""
from __future__ import annotations

import numba
import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._simd import EXIT_LANES, add_exit_values, claim, prefetch
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.constants import LEAF, MISSING_BIN
from twinrank.reference.io.model import Ensemble

__all__ = ["MAX_LEAVES", "fits", "pack", "score"]

MAX_LEAVES = 64  # bits of the widest mask
ROW_BLOCK = 256  # rows scored together (64 and 128 were slower, 512 no faster: docs/benchmarks.md)
LANES = 16  # a block of fewer rows is scored over its rows rounded up to a multiple of this
NAN_LEFT, NAN_RIGHT, OTHER = 0, 1, 2  # the node groups of a tree (the module docstring)


def fits(ensemble: Ensemble) -> bool:
    """True if every tree has at most ``MAX_LEAVES`` leaves (one bitvector word per tree)."""
    return all(tree.n_leaves <= MAX_LEAVES for tree in ensemble.trees)


def pack(ensemble: Ensemble, dtype) -> tuple:
    """The ensemble as QuickScorer arrays, for features of float ``dtype``, or for ``uint8``
    bins (``binning.apply_bins``; the nodes' ``bin_threshold``, ``MISSING_BIN`` is missing).

    Returns ``(bounds, node_feature, node_threshold, gt_mask, nan_mask, leaf_values, used)``:
    the internal nodes of all trees sorted by (tree, group, feature), where ``bounds`` (n_trees,
    4) holds, for tree ``t``, where its nodes sending NaN left, its nodes sending NaN right and
    its other nodes start, and where they end (for bins every node is an other node); masks
    are uint32 when every tree has at most 32 leaves, else uint64; ``leaf_values`` (n_trees,
    mask bits) holds each tree's leaf values in leaf-bit order; ``used`` (n_features,) marks
    the features some node splits on.
    """
    trees = ensemble.trees
    bits = 32 if all(tree.n_leaves <= 32 for tree in trees) else 64
    leaf_values = np.zeros((len(trees), bits))  # (n_trees, bits)
    per_tree = []
    for t, tree in enumerate(trees):
        nodes, gt, nan, leaf_order = _tree_masks(tree.left, tree.right, tree.missing)
        leaf_values[t, :len(leaf_order)] = tree.value[leaf_order]
        per_tree.append((nodes, np.full(len(nodes), t, dtype=np.int64), gt, nan))
    nodes, node_tree, gt, nan = (np.concatenate([part[i] for part in per_tree]) for i in range(4))
    ids = _global(nodes, trees)  # (n_internal,) into the concatenated node arrays
    feature = np.concatenate([tree.feature for tree in trees])[ids]
    binned = np.dtype(dtype) == np.uint8
    threshold = np.concatenate([tree.bin_threshold if binned else tree.threshold
                                for tree in trees])[ids]
    group = np.full(len(ids), OTHER) if binned else np.select(
        [nan == ~np.uint64(0), nan == gt], [NAN_LEFT, NAN_RIGHT], OTHER)
    order = np.lexsort((feature, group, node_tree))  # by tree, then group, then feature
    starts = np.searchsorted(node_tree[order] * 3 + group[order], np.arange(3 * len(trees) + 1))
    bounds = np.column_stack([starts[:-1].reshape(-1, 3), starts[3::3]]).astype(np.int64)
    mask_type = np.uint32 if bits == 32 else np.uint64
    threshold = threshold[order].astype(np.uint8) if binned else _thresholds_for(threshold[order], dtype)
    used = np.zeros(ensemble.n_features, dtype=np.bool_)
    used[feature] = True
    return (bounds, feature[order].astype(np.int64), threshold, gt[order].astype(mask_type),
            nan[order].astype(mask_type), leaf_values, used)


def score(X, packed, weights, scores) -> None:
    """``scores[i] += sum_t weights[t] * f_t(X[i])`` in tree order, for ``pack(ensemble, dtype)``:
    ``dtype`` is ``X``'s, or float32 for float64 rows (each value then rounded to float32 as the
    block transpose reads it).

    One kernel call per thread (``_threads.over_chunks`` over the threads, at most one per
    block); each claims the next block of rows from a shared counter (``_simd.claim``) until none
    is left, so a thread that starts late, or is slowed by other jobs, scores fewer blocks, and no
    block waits for the GIL. A call of one block runs on the calling thread alone."""
    ones = packed[3].dtype.type(np.iinfo(packed[3].dtype).max)  # a mask keeping every leaf
    missing = X.dtype.type(MISSING_BIN if X.dtype == np.uint8 else np.nan)  # NaN never equals NaN
    n_blocks = (X.shape[0] + ROW_BLOCK - 1) // ROW_BLOCK
    next_block = np.zeros(1, dtype=np.int64)  # the counter the threads claim blocks from
    over_chunks(_score_claimed, min(numba.get_num_threads(), n_blocks), next_block, X, *packed, ones,
                missing, weights, scores)


def _global(nodes, trees) -> np.ndarray:
    """Node ids of ``nodes`` (concatenated per-tree ids) as indices into the concatenated trees."""
    offsets = np.cumsum([0] + [tree.n_nodes for tree in trees[:-1]])
    counts = [int(np.sum(tree.left != LEAF)) for tree in trees]
    return nodes + np.repeat(offsets, counts)


def _thresholds_for(threshold: np.ndarray, dtype) -> np.ndarray:
    """float64 thresholds, or for float32 features each rounded down to a float32."""
    if np.dtype(dtype) != np.float32:
        return threshold.astype(np.float64)
    rounded = threshold.astype(np.float32)
    above = rounded.astype(np.float64) > threshold
    rounded[above] = np.nextafter(rounded[above], np.float32(-np.inf))
    return rounded


_ALL = (1 << 64) - 1  # a mask of every bit


def _tree_masks(left, right, missing):
    """One tree's internal nodes with their ``gt`` and ``nan`` masks (uint64), and its leaves in bit order.

    Plain Python over the tree's nodes (about 50 us for 31 leaves, once per model: ``pack`` is kept
    with it), not a kernel: compiled, it cost 0.7 s of a cold start's CPU."""
    left, right, missing = left.tolist(), right.tolist(), missing.tolist()
    preorder, leaf_order, stack = [], [], [0]
    while stack:  # depth-first: left, third child, right
        k = stack.pop()
        preorder.append(k)
        if left[k] == LEAF:
            leaf_order.append(k)
            continue
        stack.append(right[k])
        if missing[k] != left[k] and missing[k] != right[k]:
            stack.append(missing[k])
        stack.append(left[k])
    first, end = {}, {}  # the first and one past the last leaf bit of each node's subtree
    for bit, k in enumerate(leaf_order):
        first[k], end[k] = bit, bit + 1
    internal = [k for k in preorder if left[k] != LEAF]
    for k in reversed(internal):  # children before parents
        first[k], end[k] = first[left[k]], end[right[k]]
    gt, nan = [], []
    for k in internal:
        gt.append(_ALL ^ _bit_range(first[k], first[right[k]]))
        if missing[k] == left[k]:
            nan.append(_ALL)
        elif missing[k] == right[k]:
            nan.append(gt[-1])
        else:
            nan.append(_ALL ^ _bit_range(first[left[k]], end[left[k]]))
    return (np.array(internal, dtype=np.int64), np.array(gt, dtype=np.uint64), np.array(nan, dtype=np.uint64),
            np.array(leaf_order, dtype=np.int64))


def _bit_range(lo: int, hi: int) -> int:
    """The mask with bits ``lo .. hi-1`` set (``0 <= lo <= hi <= 64``)."""
    return ((1 << (hi - lo)) - 1) << lo


@njit(cache=True, nogil=True)
def _score_claimed(first_thread, last_thread, next_block, X, bounds, feature, threshold, gt, nan, leaf_values,
                   used, ones, missing, weights, scores):
    # IN X (n_rows, d) float or uint8 bins; nodes by tree; missing: the bin of missing values
    # (NaN for floats); next_block (1,) the shared counter; OUT scores (n_rows,) += tree sums, in
    # tree order, for the blocks this call claims (any thread range: one set of buffers, claim until done)
    n_rows, n_features = X.shape
    n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    width = min(ROW_BLOCK, (n_rows + LANES - 1) // LANES * LANES)  # a small call: buffers as small
    columns = np.zeros((n_features, width), dtype=threshold.dtype)  # a block, transposed (float64 rows
    # scored as float32, predict_ensemble's as_float32: each value rounded to nearest as it is copied)
    word = np.empty(width, dtype=gt.dtype)  # (row,) one tree's bitvectors
    totals = np.zeros(width)  # (row,) the block's scores
    block = claim(next_block)
    while block < n_blocks:
        first = block * ROW_BLOCK
        size = min(n_rows, first + ROW_BLOCK) - first
        _transpose(X, first, size, used, columns)
        _score_block(size, bounds, feature, threshold, gt, nan, leaf_values, ones, missing, weights,
                     columns, word, totals, scores[first:first + size])
        block = claim(next_block)


@njit(cache=True)
def _transpose(X, first, size, used, columns):
    """``columns[f, i] = X[first + i, f]`` for the ``used`` features, eight rows at a time (eight
    streams of loads), the next block's rows prefetched meanwhile (``_simd.prefetch``: a hint)."""
    n_rows, n_features = X.shape
    step = max(1, 64 // X.itemsize)  # elements per cache line
    for e in range(min(n_rows, first + ROW_BLOCK) * n_features, min(n_rows, first + 2 * ROW_BLOCK) * n_features,
                   step):
        prefetch(X, e)
    i = 0
    while i + 8 <= size:
        r0, r1, r2, r3 = X[first + i], X[first + i + 1], X[first + i + 2], X[first + i + 3]
        r4, r5, r6, r7 = X[first + i + 4], X[first + i + 5], X[first + i + 6], X[first + i + 7]
        for f in range(n_features):
            if used[f]:
                c = columns[f]
                c[i], c[i + 1], c[i + 2], c[i + 3] = r0[f], r1[f], r2[f], r3[f]
                c[i + 4], c[i + 5], c[i + 6], c[i + 7] = r4[f], r5[f], r6[f], r7[f]
        i += 8
    for i in range(i, size):
        for f in range(n_features):
            if used[f]:
                columns[f, i] = X[first + i, f]


@njit(cache=True)
def _score_block(size, bounds, feature, threshold, gt, nan, leaf_values, ones, missing, weights, columns,
                 word, totals, scores):
    """``scores += `` the trees, tree by tree, for the ``size`` rows transposed in ``columns``, over
    ``size`` rounded up to ``LANES`` lanes (lanes past ``size`` are stale, their words and totals go
    unused). Node indices are unsigned: no negative-index test in the inner loops."""
    lanes = min(columns.shape[1], (size + LANES - 1) // LANES * LANES)
    for i in range(size):
        totals[i] = scores[i]
    for t in range(leaf_values.shape[0]):  # trees in order: each row's sum is the reference's
        word[:lanes] = ones
        for j in range(np.uint64(bounds[t, 0]), np.uint64(bounds[t, 1])):  # NaN left: NaN > t is false
            x, at, if_greater = columns[np.uint64(feature[j])], threshold[j], gt[j]
            for i in range(lanes):  # vectorized: compare, masked AND
                w = word[i]
                word[i] = w & if_greater if x[i] > at else w
        for j in range(np.uint64(bounds[t, 1]), np.uint64(bounds[t, 2])):  # NaN right: NaN <= t is false
            x, at, if_greater = columns[np.uint64(feature[j])], threshold[j], gt[j]
            for i in range(lanes):
                w = word[i]
                word[i] = w if x[i] <= at else w & if_greater
        for j in range(np.uint64(bounds[t, 2]), np.uint64(bounds[t, 3])):  # a third child; bins
            x, at, if_greater, if_nan = columns[np.uint64(feature[j])], threshold[j], gt[j], nan[j]
            for i in range(lanes):
                xi = x[i]
                is_missing = (xi != xi) | (xi == missing)
                word[i] &= if_nan if is_missing else (if_greater if xi > at else ones)
        for i in range(0, lanes, EXIT_LANES):  # totals[i] += weights[t] * leaf value, eight rows at once
            add_exit_values(totals, leaf_values[t], word, weights[t], i)
    for i in range(size):
        scores[i] = totals[i]

"""Numba-parallel twin of `twinrank.reference.attribution.contributions`: path-dependent TreeSHAP, parallel over rows.

A block of ``ROW_BLOCK`` rows walks each tree together, as the reference walks it with all rows:
the features on the path and their shares $z$ are the block's, $o$ and the weights $w$ one entry
per row, so every step is a loop over the block's rows (which the compiler can vectorize), and
the blocks run in parallel. The walk is depth first with an explicit stack: a node's path is kept
at index ``level`` of the path buffers, copied from its parent's and extended, so a subtree never
overwrites the path of a sibling still on the stack. Children are walked left, right, then a third
child, as the reference recurses, and each step is the reference's arithmetic in the reference's
order, so a row's contributions are the reference's, bit for bit. The buffers are allocated once
per chunk of blocks.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.fast.trees.predict import _floats, _packed, missing_applied
from twinrank.reference.attribution.contributions import (
    base_value,
    check_cover,
    contributions_of,
    expected_value,
)
from twinrank.reference.constants import LEAF
from twinrank.reference.io.model import Ensemble, Tree
from twinrank.reference.trees.predict import _check_n_features, _checked_features

__all__ = ["predict_contributions", "tree_contributions", "ensemble_contributions"]

ROW_BLOCK = 64  # rows walking a tree together: the walk's bookkeeping is paid once per block


def predict_contributions(model, X) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.attribution.contributions.predict_contributions` (parallel over rows)."""
    return contributions_of(model, X, ensemble_contributions)


def ensemble_contributions(ensemble: Ensemble, X) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.attribution.contributions.ensemble_contributions`."""
    X = _floats(np.asarray(X))
    _check_n_features(X, ensemble.n_features)
    X = missing_applied(ensemble, X)
    if ensemble.init_model is not None:
        phi = ensemble_contributions(ensemble.init_model, X)
    else:
        phi = np.zeros((len(X), ensemble.n_features + 1))
    for t, tree in enumerate(ensemble.trees):
        check_cover(tree, f"trees[{t}]")
    if ensemble.n_trees:
        _add_contributions(ensemble, X, phi)
    phi[:, -1] = base_value(ensemble)
    return phi


def tree_contributions(tree: Tree, X) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.attribution.contributions.tree_contributions` (parallel over rows)."""
    X = _floats(_checked_features(X, tree))
    phi = np.zeros((len(X), X.shape[1] + 1))
    phi[:, -1] = expected_value(tree)
    check_cover(tree)
    _add_contributions(Ensemble(trees=[tree], tree_weights=[1.0], n_features=X.shape[1]), X, phi)
    return phi


def _add_contributions(ensemble: Ensemble, X: np.ndarray, phi: np.ndarray) -> None:
    """``phi[:, :-1] +=`` the weighted contributions of ``ensemble``'s own trees, parallel over rows."""
    feature, threshold, left, right, missing, value, roots = _packed(ensemble)
    weights = np.ascontiguousarray(ensemble.tree_weights, dtype=np.float64)
    count = np.concatenate([tree.count for tree in ensemble.trees]).astype(np.float64)  # (n_nodes_total,)
    depth = max(_depth(tree) for tree in ensemble.trees)
    over_chunks(_contributions, (len(X) + ROW_BLOCK - 1) // ROW_BLOCK, X, feature, threshold, left, right, missing,
                value, count, roots, weights, depth, phi)


def _depth(tree: Tree) -> int:
    """The most splits on a path from the root to a leaf (walked one level at a time)."""
    depth, level = 0, np.array([0])
    while True:
        split = level[tree.left[level] != LEAF]
        if not len(split):
            return depth
        depth += 1
        level = np.unique(np.concatenate([tree.left[split], tree.right[split], tree.missing[split]]))


@njit(cache=True, nogil=True)
def _contributions(first_block, last_block, X, feature, threshold, left, right, missing, value, count, roots,
                   weights, depth, phi):
    # IN X (n_rows, d); packed trees, count (n_nodes_total,) float64; OUT phi (n_rows, d + 1) += the
    #    trees' weighted contributions in columns 0 .. d - 1, the rows of blocks first_block .. last_block - 1
    n_rows, n_features = X.shape
    size = depth + 2  # a path holds the placeholder and at most one element per split
    path_feature, path_zero = np.empty((size, size), dtype=np.int64), np.empty((size, size))
    path_one, path_weight = np.empty((size, size, ROW_BLOCK)), np.empty((size, size, ROW_BLOCK))
    n_stack = 2 * depth + 3  # a split pushes at most three children, one of them popped next
    stack_node, stack_level = np.empty(n_stack, dtype=np.int64), np.empty(n_stack, dtype=np.int64)
    stack_length, stack_feature = np.empty(n_stack, dtype=np.int64), np.empty(n_stack, dtype=np.int64)
    stack_zero, stack_one = np.empty(n_stack), np.empty((n_stack, ROW_BLOCK))
    hot, incoming = np.empty(ROW_BLOCK, dtype=np.int64), np.empty(ROW_BLOCK)
    carry, total = np.empty(ROW_BLOCK), np.empty(ROW_BLOCK)
    tree_phi = np.empty((ROW_BLOCK, n_features))
    for block in range(first_block, last_block):
        first = block * ROW_BLOCK
        nb = min(n_rows, first + ROW_BLOCK) - first
        for t in range(len(roots)):
            if left[roots[t]] == LEAF:
                continue
            tree_phi[:nb] = 0.0
            stack_node[0], stack_level[0], stack_length[0], stack_feature[0] = roots[t], 0, 0, -1
            stack_zero[0] = 1.0
            stack_one[0, :nb] = 1.0
            top = 1
            while top > 0:
                top -= 1
                node, level, l = stack_node[top], stack_level[top], stack_length[top]
                pf, pz, po, pw = path_feature[level], path_zero[level], path_one[level], path_weight[level]
                if level > 0:  # the parent's path, then EXTEND by the step taken
                    pf[:l] = path_feature[level - 1, :l]
                    pz[:l] = path_zero[level - 1, :l]
                    po[:l, :nb] = path_one[level - 1, :l, :nb]
                    pw[:l, :nb] = path_weight[level - 1, :l, :nb]
                _extend(pf, pz, po, pw, l, nb, stack_zero[top], stack_one[top], stack_feature[top])
                if left[node] == LEAF:
                    for e in range(1, l + 1):
                        _unwound_sum(pz, po, pw, l, e, nb, carry, total)
                        for r in range(nb):
                            tree_phi[r, pf[e]] += total[r] * (po[e, r] - pz[e]) * value[node]
                    continue
                d = feature[node]
                for r in range(nb):  # each row's child, as predict routes it
                    v = X[first + r, d]
                    hot[r] = missing[node] if np.isnan(v) else (
                        left[node] if np.float64(v) <= threshold[node] else right[node])
                i_z = 1.0
                incoming[:nb] = 1.0
                for k in range(l + 1):  # d met before on this path: undo it, redo with both fractions
                    if pf[k] == d:
                        i_z = pz[k]
                        incoming[:nb] = po[k, :nb]
                        _unwind(pf, pz, po, pw, l, k, nb, carry)
                        l -= 1
                        break
                third = missing[node] != left[node] and missing[node] != right[node]
                for side in range(3):  # pushed third, right, left: popped left first, as the reference recurses
                    c = missing[node] if side == 0 else (right[node] if side == 1 else left[node])
                    if side == 0 and not third:
                        continue
                    stack_node[top], stack_level[top], stack_length[top], stack_feature[top] = c, level + 1, l + 1, d
                    stack_zero[top] = count[c] / count[node] * i_z
                    for r in range(nb):
                        stack_one[top, r] = incoming[r] if hot[r] == c else 0.0
                    top += 1
            for r in range(nb):
                for f in range(n_features):
                    phi[first + r, f] += weights[t] * tree_phi[r, f]


@njit(cache=True, inline="always")
def _extend(pf, pz, po, pw, l, nb, p_z, p_o, p_i):
    # EXTEND: append (p_i, p_z, p_o) to the path's l elements and reweight (the reference's extend)
    pf[l], pz[l] = p_i, p_z
    start = 1.0 if l == 0 else 0.0
    for r in range(nb):
        po[l, r] = p_o[r]
        pw[l, r] = start
    for k in range(l - 1, -1, -1):
        for r in range(nb):
            pw[k + 1, r] = pw[k + 1, r] + p_o[r] * pw[k, r] * (k + 1) / (l + 1)
            pw[k, r] = p_z * pw[k, r] * (l - k) / (l + 1)


@njit(cache=True, inline="always")
def _unwind(pf, pz, po, pw, l, i, nb, carry):
    # UNWIND element i of the path's elements 0 .. l in place (the reference's unwind); carry: scratch
    z = pz[i]
    for r in range(nb):
        carry[r] = pw[l, r]
    for j in range(l - 1, -1, -1):
        for r in range(nb):
            from_above = carry[r] * (l + 1) / (j + 1)
            carry[r] = pw[j, r] - from_above * z * (l - j) / (l + 1)
            alone = pw[j, r] * (l + 1) / (z * (l - j))
            pw[j, r] = from_above if po[i, r] != 0 else alone
    for j in range(i, l):
        pf[j], pz[j] = pf[j + 1], pz[j + 1]
        for r in range(nb):
            po[j, r] = po[j + 1, r]


@njit(cache=True, inline="always")
def _unwound_sum(pz, po, pw, l, i, nb, carry, total):
    # total[:nb] = the sum of UNWIND(m, i)'s weights, the path left as it is (the reference's unwound_sum)
    z = pz[i]
    for r in range(nb):
        carry[r] = pw[l, r]
        total[r] = 0.0
    for j in range(l - 1, -1, -1):
        for r in range(nb):
            from_above = carry[r] * (l + 1) / (j + 1)
            carry[r] = pw[j, r] - from_above * z * ((l - j) / (l + 1))
            alone = (pw[j, r] / z) / ((l - j) / (l + 1))
            total[r] = total[r] + (from_above if po[i, r] != 0 else alone)

"""Numba-parallel twin of `twinrank.reference.attribution.contributions`: path-dependent TreeSHAP, parallel over rows.

Each row walks every tree alone (the reference walks a tree once for all rows), depth first
with an explicit stack: a node's path is kept in row ``level`` of a (depth + 2)-square buffer
per path field, copied from its parent's row and extended, so a subtree never overwrites the
path of a sibling still on the stack. Children are walked left, right, then a third child, as
the reference recurses, and each step is the reference's arithmetic in the reference's order,
so a row's contributions are the reference's. The buffers are allocated once per chunk of rows.
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
    feature, threshold, left, right, missing, value, roots, weights = _packed(ensemble)
    count = np.concatenate([tree.count for tree in ensemble.trees]).astype(np.float64)  # (n_nodes_total,)
    depth = max(_depth(tree) for tree in ensemble.trees)
    over_chunks(_contributions, len(X), X, feature, threshold, left, right, missing, value, count, roots, weights,
                depth, phi)


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
def _contributions(first, last, X, feature, threshold, left, right, missing, value, count, roots, weights, depth,
                   phi):
    # IN X (n_rows, d); packed trees, count (n_nodes_total,) float64; OUT phi (n_rows, d + 1) += the
    #    trees' weighted contributions in columns 0 .. d - 1, rows first .. last - 1
    n_features = X.shape[1]
    size = depth + 2  # a path holds the placeholder and at most one element per split
    path_feature = np.empty((size, size), dtype=np.int64)
    path_zero, path_one, path_weight = np.empty((size, size)), np.empty((size, size)), np.empty((size, size))
    n_stack = 2 * depth + 3  # a split pushes at most three children, one of them popped next
    stack_node, stack_level, stack_length = (np.empty(n_stack, dtype=np.int64), np.empty(n_stack, dtype=np.int64),
                                             np.empty(n_stack, dtype=np.int64))
    stack_feature = np.empty(n_stack, dtype=np.int64)
    stack_zero, stack_one = np.empty(n_stack), np.empty(n_stack)
    tree_phi = np.empty(n_features)
    for i in range(first, last):
        for t in range(len(roots)):
            if left[roots[t]] == LEAF:
                continue
            tree_phi[:] = 0.0
            top = 1
            stack_node[0], stack_level[0], stack_length[0], stack_feature[0] = roots[t], 0, 0, -1
            stack_zero[0], stack_one[0] = 1.0, 1.0
            while top > 0:
                top -= 1
                node, level, l = stack_node[top], stack_level[top], stack_length[top]
                pf, pz, po, pw = path_feature[level], path_zero[level], path_one[level], path_weight[level]
                if level > 0:
                    pf[:l] = path_feature[level - 1, :l]
                    pz[:l] = path_zero[level - 1, :l]
                    po[:l] = path_one[level - 1, :l]
                    pw[:l] = path_weight[level - 1, :l]
                _extend(pf, pz, po, pw, l, stack_zero[top], stack_one[top], stack_feature[top])
                if left[node] == LEAF:
                    for e in range(1, l + 1):
                        tree_phi[pf[e]] += _unwound_sum(pz, po, pw, l, e) * (po[e] - pz[e]) * value[node]
                    continue
                d = feature[node]
                v = X[i, d]
                hot = missing[node] if np.isnan(v) else (left[node] if np.float64(v) <= threshold[node] else right[node])
                i_z, i_o = 1.0, 1.0
                for k in range(l + 1):
                    if pf[k] == d:
                        i_z, i_o = pz[k], po[k]
                        _unwind(pf, pz, po, pw, l, k)
                        l -= 1
                        break
                third = missing[node] != left[node] and missing[node] != right[node]
                for side in range(3):  # pushed third, right, left: popped left first
                    c = missing[node] if side == 0 else (right[node] if side == 1 else left[node])
                    if side == 0 and not third:
                        continue
                    stack_node[top], stack_level[top], stack_length[top], stack_feature[top] = c, level + 1, l + 1, d
                    stack_zero[top] = count[c] / count[node] * i_z
                    stack_one[top] = i_o if c == hot else 0.0
                    top += 1
            for f in range(n_features):
                phi[i, f] += weights[t] * tree_phi[f]


@njit(cache=True, inline="always")
def _extend(pf, pz, po, pw, l, p_z, p_o, p_i):
    # EXTEND: append (p_i, p_z, p_o) to the path's l elements and reweight (the reference's extend)
    pf[l], pz[l], po[l] = p_i, p_z, p_o
    pw[l] = 1.0 if l == 0 else 0.0
    for k in range(l - 1, -1, -1):
        pw[k + 1] = pw[k + 1] + p_o * pw[k] * (k + 1) / (l + 1)
        pw[k] = p_z * pw[k] * (l - k) / (l + 1)


@njit(cache=True, inline="always")
def _unwind(pf, pz, po, pw, l, i):
    # UNWIND element i of the path's elements 0 .. l in place (the reference's unwind)
    z, o = pz[i], po[i]
    n = pw[l]
    for j in range(l - 1, -1, -1):
        if o != 0:
            from_above = n * (l + 1) / (j + 1)
            n = pw[j] - from_above * z * (l - j) / (l + 1)
            pw[j] = from_above
        else:
            pw[j] = pw[j] * (l + 1) / (z * (l - j))
    for j in range(i, l):
        pf[j], pz[j], po[j] = pf[j + 1], pz[j + 1], po[j + 1]


@njit(cache=True, inline="always")
def _unwound_sum(pz, po, pw, l, i):
    # the sum of UNWIND(m, i)'s weights, the path left as it is (the reference's unwound_sum)
    z, o = pz[i], po[i]
    n = pw[l]
    total = 0.0
    for j in range(l - 1, -1, -1):
        if o != 0:
            from_above = n * (l + 1) / (j + 1)
            n = pw[j] - from_above * z * ((l - j) / (l + 1))
            total += from_above
        else:
            total += (pw[j] / z) / ((l - j) / (l + 1))
    return total

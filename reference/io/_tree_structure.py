"""The check that a :class:`Tree`'s arrays describe a tree, so no walk can loop or index out of range.

Node 0 is the root. A node is a leaf exactly when ``feature == -1``, and then
``left == right == missing == -1``. An internal node splits on a feature
``0 <= feature < n_features`` at a ``threshold`` that is a number (``+inf`` for
the last value bin: every value left, only the missing rows elsewhere), and has children ``left != right`` in ``1..n_nodes-1``; its
``missing`` child is ``left``, ``right`` or a third child. Then the arrays are a
tree when every node but the root is the child of exactly one node and every node
is reached from the root: a breadth-first walk from node 0, one level per step,
visits each node once (a cycle is either reached twice or never). Leaf values are
finite. Each violation is reported by field and node, e.g. ``left[17]``.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._model_fields import first_bad


def check_tree(tree, path: str = "tree") -> None:
    """Raise ModelFormatError naming ``path.field[node]`` unless ``tree``'s arrays form a tree."""
    n = tree.n_nodes
    if n == 0:
        raise ModelFormatError(f"{path}: a tree needs at least its root node")
    leaf = tree.feature == LEAF
    inner = ~leaf
    _refuse(tree, path, "feature", (tree.feature < LEAF), "is not a feature index")
    for name in ("left", "right", "missing"):
        child = getattr(tree, name)
        _refuse(tree, path, name, leaf & (child != LEAF), "must be -1 at a leaf (feature == -1)")
        _refuse(tree, path, name, inner & ((child < 1) | (child >= n)), f"is not a node of this tree (1..{n - 1})")
    third = inner & (tree.missing != tree.left) & (tree.missing != tree.right)
    _refuse(tree, path, "right", inner & (tree.left == tree.right), "equals left")
    _refuse(tree, path, "threshold", inner & np.isnan(tree.threshold), "is not a number")
    _refuse(tree, path, "value", leaf & ~np.isfinite(tree.value), "is not finite")
    children = np.concatenate([tree.left[inner], tree.right[inner], tree.missing[third]])
    parents = np.bincount(children, minlength=n)
    twice = first_bad(parents > 1)
    if twice is not None:
        raise ModelFormatError(f"{path}: node {twice} is the child of {parents[twice]} nodes")
    _check_reachable(tree, inner, third, path)


def _check_reachable(tree, inner, third, path) -> None:
    """Walk from the root one level at a time; with one parent per node, every node is met at most once."""
    seen = np.zeros(tree.n_nodes, dtype=bool)
    level = np.array([0])
    while len(level):
        seen[level] = True
        split = level[inner[level]]
        level = np.concatenate([tree.left[split], tree.right[split], tree.missing[split[third[split]]]])
    unreached = first_bad(~seen)
    if unreached is not None:
        raise ModelFormatError(f"{path}: node {unreached} is not reached from the root (a cycle or a lost node)")


def _refuse(tree, path, name, bad, why) -> None:
    node = first_bad(bad)
    if node is not None:
        raise ModelFormatError(f"{path}.{name}[{node}] = {getattr(tree, name)[node]}: {why}")

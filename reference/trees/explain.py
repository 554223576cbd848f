r"""Reading a fitted model: feature importances and a readable tree dump.

Both read only the model format (:mod:`~twinrank.reference.io.model`), so they are
data, not algorithm: defined once here, re-exported by ``twinrank.reference.trees.explain``,
and a model from either twin gives the same answer.

Importances, per feature $f$ (LightGBM's ``importance_type``):

- ``"split"``: the number of internal nodes that split on $f$;
- ``"gain"``: the sum of those nodes' split gains (the loss reduction the grower
  recorded, ``Tree.gain``).

Trees count unweighted by ``tree_weights`` (as LightGBM). A prior model (``init_model``:
LambdaSMART's model, IGBRT's forest) counts only when asked, ``include_init_model=True``,
its trees first; the estimators' ``feature_importances_`` ask, since ``predict`` scores
with it. An McRank model sums its classifiers' trees.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import Ensemble, McRankModel, Tree

__all__ = ["feature_importances", "tree_importances", "dump_tree", "dump_model", "IMPORTANCE_KINDS"]

IMPORTANCE_KINDS = ("split", "gain")


def tree_importances(tree: Tree, n_features: int, kind: str = "gain") -> np.ndarray:
    """The importance (float64, shape (n_features,)) of every feature in one tree."""
    _check_kind(kind)
    internal = tree.left != LEAF  # (n_nodes,)
    weights = None if kind == "split" else tree.gain[internal]
    return np.bincount(tree.feature[internal], weights=weights,
                       minlength=n_features).astype(np.float64)


def feature_importances(model, kind: str = "gain", per_tree: bool = False, *,
                        include_init_model: bool = False) -> np.ndarray:
    """Importances of every feature: shape (n_features,), or (n_trees, n_features) per tree.

    ``model``: an :class:`Ensemble`, an :class:`McRankModel` (its classifiers' trees in
    order) or a fitted estimator; ``kind``: ``"split"`` or ``"gain"`` (module docstring);
    ``include_init_model``: also the prior model's trees, before the model's own.
    """
    model = getattr(model, "model_", model)
    trees = [tree for tree, _ in _weighted_trees(model, include_init_model)]
    _check_kind(kind)
    if per_tree:
        return np.array([tree_importances(t, model.n_features, kind) for t in trees]).reshape(
            len(trees), model.n_features)  # (n_trees, n_features)
    total = np.zeros(model.n_features)  # (n_features,) summed tree by tree: no (n_trees, n_features) matrix
    for t in trees:
        total += tree_importances(t, model.n_features, kind)
    return total


def dump_tree(tree: Tree, feature_names=None, *, precision: int = 6) -> str:
    """The tree as indented text, one node a line, children below their parent::

        0: f3 <= 0.5 (NaN -> 1)  gain=12.5  count=100
          1: leaf 0.25  count=60
          2: leaf -0.5  count=40

    Features are named by their id in the LETOR file, 1-based, as everywhere twinrank names a
    feature (``twinrank inspect``, a LightGBM export's ``feature_names``): ``f3`` is LETOR
    feature 3, column 2 of ``X``. ``feature_names``: one name per column of ``X``, replacing
    ``f1, f2, ...``; ``precision``: significant digits.
    """
    lines = []

    def visit(k: int, depth: int) -> None:
        pad = "  " * depth
        if tree.left[k] == LEAF:
            lines.append(f"{pad}{k}: leaf {tree.value[k]:.{precision}g}  count={tree.count[k]}")
            return
        f = int(tree.feature[k])
        name = feature_names[f] if feature_names is not None else f"f{f + 1}"
        lines.append(f"{pad}{k}: {name} <= {tree.threshold[k]:.{precision}g} "
                     f"(NaN -> {tree.missing[k]})  gain={tree.gain[k]:.{precision}g}  "
                     f"count={tree.count[k]}")
        children = (tree.left[k], tree.right[k])
        if tree.missing[k] not in children:
            children += (tree.missing[k],)  # a third child holding the missing rows
        for child in children:
            visit(int(child), depth + 1)

    if tree.n_nodes:
        visit(0, 0)
    return "\n".join(lines)


def dump_model(model, feature_names=None, *, precision: int = 6) -> str:
    """Every tree of ``model`` (Ensemble, McRankModel or fitted estimator), each under a header.

    A prior model's trees are not shown (dump ``model.init_model`` for them).
    """
    model = getattr(model, "model_", model)
    return "\n".join(f"tree {t} (weight {w:.{precision}g})\n"
                     f"{dump_tree(tree, feature_names, precision=precision)}"
                     for t, (tree, w) in enumerate(_weighted_trees(model)))


def _weighted_trees(model, include_init_model: bool = False) -> list:
    """``(tree, weight)`` of every tree of ``model``, the prior model's first if included."""
    if isinstance(model, McRankModel):
        return [pair for c in model.classifiers for pair in _weighted_trees(c)]
    if isinstance(model, Ensemble):
        prior = (_weighted_trees(model.init_model, True)
                 if include_init_model and model.init_model is not None else [])
        return prior + list(zip(model.trees, model.tree_weights))
    raise ParameterError(f"not a twinrank model: {type(model).__name__}")


def _check_kind(kind: str) -> None:
    if kind not in IMPORTANCE_KINDS:
        raise ParameterError(f"importance kind must be one of {IMPORTANCE_KINDS}, got {kind!r}")

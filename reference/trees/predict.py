r"""Scoring rows with a :class:`Tree` or an :class:`Ensemble`.

A row walks from the root: at internal node ``k`` with ``v = x[feature[k]]`` it goes
to ``missing[k]`` if ``v`` is NaN, else to ``left[k]`` if ``v <= threshold[k]``, else
to ``right[k]`` (compared in float64). On binned data the test is
``bin <= bin_threshold[k]`` and ``bin == MISSING_BIN`` means missing; the binning
makes both routes agree on the data the thresholds came from.

All rows move one level per step, so the loops run over tree depth, never over rows.
An ensemble scores

$$F(x) = F_{\mathrm{init}}(x) + F_0 + \sum_t w_t f_t(x),$$

summed in that order (prior model, base score, then trees in order).
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import LEAF, MISSING_BIN
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import Ensemble, MissingValues, Tree


def apply_tree(tree: Tree, X) -> np.ndarray:
    """The leaf node id (int32) each row of the raw features ``X`` reaches."""
    X = _checked_features(X, tree)
    return _route(tree, lambda rows, f: X[rows, f],
                  lambda v, k: np.where(np.isnan(v), tree.missing[k],
                                        np.where(v <= tree.threshold[k], tree.left[k], tree.right[k])),
                  len(X))


def predict_tree(tree: Tree, X) -> np.ndarray:
    """The value (float64) of the leaf each row of the raw features ``X`` reaches."""
    return tree.value[apply_tree(tree, X)]


def predict_tree_binned(tree: Tree, binned) -> np.ndarray:
    """The leaf value (float64) of each row of ``binned`` (uint8, ``binning.apply_bins``)."""
    binned = _checked_features(binned, tree)
    leaves = _route(tree, lambda rows, f: binned[rows, f],
                    lambda b, k: np.where(b == MISSING_BIN, tree.missing[k],
                                          np.where(b <= tree.bin_threshold[k], tree.left[k],
                                                   tree.right[k])),
                    len(binned))
    return tree.value[leaves]


def add_leaf_values(scores: np.ndarray, value: np.ndarray, leaf_of_row: np.ndarray, weight: float) -> None:
    r"""``scores += weight * value[leaf_of_row]``, in place: a boosting round's step
    $s_i \leftarrow s_i + w\, v_{\ell(i)}$ on rows whose leaves the grower recorded (no walk).
    ``weight`` 1 adds the values themselves."""
    scores += weight * value[leaf_of_row] if weight != 1.0 else value[leaf_of_row]


def predict_ensemble(ensemble: Ensemble, X, *, as_float32: bool = False) -> np.ndarray:
    r"""The score $F(x)$ (float64) of every row of ``X`` (n_rows, ensemble.n_features).

    A model with a fitted missing-value strategy (``ensemble.missing``) fills the NaN
    of ``X`` first (:meth:`model.MissingValues.transform`, its imputers scored by this function); its prior model then
    scores the filled rows, as it did in training.

    ``as_float32``: score the values of ``X`` rounded to float32 (to nearest), the precision the
    estimators train on; their ``predict`` passes float64 rows this way, and the fast twin rounds
    them as it reads them instead of in a copy.
    """
    X = np.asarray(X, dtype=np.float32) if as_float32 else np.asarray(X)
    _check_n_features(X, ensemble.n_features)
    X = missing_applied(ensemble, X)
    scores = np.full(len(X), float(ensemble.base_score))  # (n_rows,)
    if ensemble.init_model is not None:
        scores = predict_ensemble(ensemble.init_model, X) + ensemble.base_score
    for tree, weight in zip(ensemble.trees, ensemble.tree_weights):
        scores = scores + weight * predict_tree(tree, X)
    return scores


def missing_applied(ensemble: Ensemble, X: np.ndarray) -> np.ndarray:
    """``X`` with the model's missing-value strategy applied (``X`` itself if it has none)."""
    if ensemble.missing is None:
        return X
    return MissingValues.from_dict(ensemble.missing).transform(X, predict_ensemble)


def _check_n_features(X: np.ndarray, n_features: int) -> None:
    """Raise a ParameterError naming both widths unless ``X`` is (n_rows, n_features)."""
    if X.ndim != 2:
        raise ParameterError(f"X must be 2-D (n_rows, n_features), got shape {X.shape}")
    if X.shape[1] != n_features:
        raise ParameterError(
            f"X has {X.shape[1]} features but the model was trained on {n_features}")


def _route(tree: Tree, feature_values, child, n_rows: int) -> np.ndarray:
    """Walk all rows down one level at a time; ``child(values, nodes)`` picks the next nodes."""
    node = np.zeros(n_rows, dtype=np.int32)  # (n_rows,) current node of every row
    active = np.flatnonzero(tree.left[node] != LEAF)  # rows not yet at a leaf
    while len(active):
        k = node[active]
        node[active] = child(feature_values(active, tree.feature[k]), k)
        active = active[tree.left[node[active]] != LEAF]
    return node


def _checked_features(X, tree: Tree) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise ParameterError(f"X must be 2-D (n_rows, n_features), got shape {X.shape}")
    needed = int(tree.feature.max(initial=-1)) + 1
    if X.shape[1] < needed:
        raise ParameterError(f"X has {X.shape[1]} columns but the tree splits on column {needed - 1} "
                             f"(feature f{needed})")
    return X

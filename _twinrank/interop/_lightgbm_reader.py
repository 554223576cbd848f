r"""LightGBM's text model (``Booster.save_model``) read into a twinrank :class:`Ensemble`.

The file: a header of ``key=value`` lines (``num_class``, ``max_feature_idx``,
``objective``, ``feature_names``, ...), then one block per tree opened by ``Tree=i``
and closed by a blank line, then ``end of trees`` and sections twinrank does not need
(feature importances, parameters). A tree block holds LightGBM's per-node arrays:
internal nodes ``0 .. num_leaves-2`` (``split_feature``, ``threshold``,
``decision_type``, ``left_child``, ``right_child``, ``internal_*``), leaves
``0 .. num_leaves-1`` (``leaf_value``, ``leaf_weight``, ``leaf_count``), a child
reference ``i >= 0`` naming internal node ``i`` and ``~j`` (< 0) leaf ``j``.

A row goes left at internal node ``k`` iff ``x <= threshold`` (LightGBM's
``Tree::NumericalDecision``), which is twinrank's rule on float32 features (the threshold is
kept as written); where NaN goes depends on the
node's ``decision_type`` (bit 1: categorical, bit 2: default left, bits 3-4: missing
type) and becomes the node's ``missing`` child:

| missing type | LightGBM sends NaN | twinrank's ``missing`` child |
|---|---|---|
| 2 (NaN) | to the default child | the default child |
| 0 (None) | where 0 goes (NaN is read as 0) | ``left`` if ``0 <= threshold`` else ``right`` |
| 1 (Zero) | with 0 and values within 1e-35 of it, to the default child | the default child, if 0 goes there anyway; otherwise refused |

Leaf values already include LightGBM's shrinkage, so every tree weight is 1
(``1/T`` for a random forest, ``average_output``), the base score is 0, and the
twinrank score is LightGBM's ``predict(raw_score=True)``.
"""
from __future__ import annotations

import numpy as np

from twinrank.interop._lightgbm_writer import default_feature_names
from twinrank.reference.constants import LEAF, MAX_MODEL_FEATURES
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._ensemble import Ensemble, Tree

CATEGORICAL, DEFAULT_LEFT = 1, 2  # decision_type bits (kCategoricalMask, kDefaultLeftMask)
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2  # (decision_type >> 2) & 3


def from_lightgbm_text(text: str, source: str = "<string>") -> Ensemble:
    """The model of a LightGBM text model (numerical splits, one score per row).

    ModelFormatError, naming ``source``, the line and the field, for a file that is not a
    LightGBM model or holds what twinrank's trees cannot express: a multiclass model
    (``num_class``), categorical splits (``num_cat``, ``decision_type``), linear trees
    (``is_linear``), zeros set apart from their side of the threshold (``zero_as_missing``).
    """
    header, blocks = _sections(text.splitlines(), source)
    for key in ("num_class", "max_feature_idx"):
        if key not in header:
            raise ModelFormatError(f"{source}: not a LightGBM text model (no {key}= line before the first tree)")
    n_class = _int(header, "num_class", source)
    per_iteration = _int(header, "num_tree_per_iteration", source) if "num_tree_per_iteration" in header else n_class
    for key, n in (("num_class", n_class), ("num_tree_per_iteration", per_iteration)):
        if n != 1:
            raise ModelFormatError(f"{source}:{header[key][1]}: {key}={n}: a multiclass model scores {n} raw "
                                   f"scores per row, one ensemble per class; a twinrank model scores one, so "
                                   f"only {key}=1 can be imported")
    n_features = _int(header, "max_feature_idx", source) + 1
    if not 1 <= n_features <= MAX_MODEL_FEATURES:
        raise ModelFormatError(f"{source}:{header['max_feature_idx'][1]}: max_feature_idx={n_features - 1} must be in "
                               f"0 .. {MAX_MODEL_FEATURES - 1:,} (twinrank reads models of at most "
                               f"{MAX_MODEL_FEATURES:,} features)")
    trees = [_tree(fields, n_features, f"{source}:{line}: Tree={i}") for i, (line, fields) in enumerate(blocks)]
    weight = 1.0 / len(trees) if "average_output" in header and trees else 1.0
    return Ensemble(trees=trees, tree_weights=np.full(len(trees), weight), base_score=0.0,
                    n_features=n_features, algorithm="lightgbm", params=_params(header, n_features, source))


def _sections(lines: list, source: str):
    """``({key: (value, line)}, [(line, {key: (value, line)})])``: the header and the tree blocks."""
    if lines and lines[0].lstrip().startswith("{"):
        raise ModelFormatError(f"{source}: not a LightGBM text model but JSON (a twinrank model? load it "
                               f"with twinrank's load_model)")
    header, blocks, i = {}, [], 0
    while i < len(lines) and not lines[i].startswith("Tree="):
        key, _, value = lines[i].strip().partition("=")
        header[key] = (value, i + 1)
        i += 1
    while i < len(lines) and lines[i].startswith("Tree="):
        opened, fields = i + 1, {}
        i += 1
        while i < len(lines) and lines[i].strip():
            key, sep, value = lines[i].strip().partition("=")
            if not sep:
                raise ModelFormatError(f"{source}:{i + 1}: expected key=value in the tree of line {opened}, "
                                       f"got {lines[i][:60]!r}")
            fields[key] = (value, i + 1)
            i += 1
        blocks.append((opened, fields))
        while i < len(lines) and not lines[i].strip():
            i += 1
    return header, blocks


def _params(header: dict, n_features: int, source: str) -> dict:
    """The objective, and the file's feature names unless they are LightGBM's or twinrank's defaults."""
    params = {"objective": header.get("objective", ("",))[0]}
    names = header.get("feature_names", ("",))[0].split()
    if names and len(names) != n_features:
        raise ModelFormatError(f"{source}:{header['feature_names'][1]}: feature_names= has {len(names)} "
                               f"names for the {n_features} features of max_feature_idx={n_features - 1}")
    if names and not _default_names(names):
        params["feature_names"] = names
    return params


def _default_names(names: list) -> bool:
    """Whether ``names`` are LightGBM's default feature names (``Column_0 ...``) or twinrank's own."""
    return names in ([f"Column_{j}" for j in range(len(names))], default_feature_names(len(names)))


def _tree(fields: dict, n_features: int, where: str) -> Tree:
    """One LightGBM tree block as a twinrank Tree, nodes numbered breadth-first from the root."""
    if "num_leaves" not in fields:
        raise ModelFormatError(f"{where}: the tree has no num_leaves= line")
    n_leaves = _int(fields, "num_leaves", where)
    if n_leaves < 1:
        raise ModelFormatError(f"{where}: num_leaves={n_leaves} must be >= 1")
    if "num_cat" in fields and _int(fields, "num_cat", where) > 0:
        raise ModelFormatError(f"{where}: num_cat={fields['num_cat'][0]}: the tree has categorical splits "
                               f"(x in a set of categories), which twinrank's numerical splits (x <= threshold) "
                               f"cannot express; train LightGBM without categorical_feature")
    if "is_linear" in fields and _int(fields, "is_linear", where) != 0:
        raise ModelFormatError(f"{where}: is_linear={fields['is_linear'][0]}: a linear tree (linear_tree=true) "
                               f"fits a linear model in each leaf; twinrank's leaves hold constants")
    leaf = {k: _array(fields, k, n_leaves, int if k in _INT_FIELDS else float, where)
            for k in ("leaf_value", "leaf_weight", "leaf_count")}
    n_inner = n_leaves - 1
    inner = {k: _array(fields, k, n_inner, int if k in _INT_FIELDS else float, where) for k in _INNER_FIELDS}
    order = _breadth_first(inner["left_child"], inner["right_child"], n_leaves, where)  # (2 n_leaves - 1,)
    is_inner = order >= 0
    node_of_inner, node_of_leaf = np.empty(n_inner, np.int64), np.empty(n_leaves, np.int64)
    node_of_inner[order[is_inner]] = np.flatnonzero(is_inner)
    node_of_leaf[~order[~is_inner]] = np.flatnonzero(~is_inner)
    node = lambda ref: np.where(ref >= 0, node_of_inner[np.maximum(ref, 0)], node_of_leaf[~np.minimum(ref, -1)])  # noqa: E731
    i, j = order[is_inner], ~order[~is_inner]  # LightGBM ids of the internal nodes, of the leaves
    missing = _missing_children(inner, n_features, where)[i]  # (n_inner,) LightGBM child references

    def per_node(inner_values, leaf_values, dtype):
        out = np.empty(len(order), dtype=dtype)
        out[is_inner], out[~is_inner] = inner_values, leaf_values
        return out

    none = np.full(n_leaves, LEAF)
    return Tree(feature=per_node(inner["split_feature"][i], none, np.int32),
                threshold=per_node(inner["threshold"][i], 0.0, np.float64),
                bin_threshold=np.full(len(order), -1),  # no bins: an imported tree is scored on raw features
                left=per_node(node(inner["left_child"][i]), none, np.int32),
                right=per_node(node(inner["right_child"][i]), none, np.int32),
                missing=per_node(node(missing), none, np.int32),
                value=per_node(inner["internal_value"][i], leaf["leaf_value"][j], np.float64),
                gain=per_node(inner["split_gain"][i], 0.0, np.float64),
                count=per_node(inner["internal_count"][i], leaf["leaf_count"][j], np.int64),
                hessian_sum=per_node(inner["internal_weight"][i], leaf["leaf_weight"][j], np.float64))


_INNER_FIELDS = ("split_feature", "threshold", "decision_type", "left_child", "right_child", "split_gain",
                 "internal_value", "internal_weight", "internal_count")
_INT_FIELDS = {"split_feature", "decision_type", "left_child", "right_child", "internal_count", "leaf_count"}
_REQUIRED = {"leaf_value", "split_feature", "threshold", "left_child", "right_child"}


def _missing_children(inner: dict, n_features: int, where: str) -> np.ndarray:
    """The child reference a NaN reaches at every internal node (the table of the module docstring)."""
    decision, threshold = inner["decision_type"], inner["threshold"]
    feature, left, right = inner["split_feature"], inner["left_child"], inner["right_child"]
    kind, default_left = (decision >> 2) & 3, (decision & DEFAULT_LEFT) != 0  # (n_inner,)
    zero_left = 0.0 <= threshold  # (n_inner,) the side 0 takes
    problems = [(decision & CATEGORICAL) != 0, kind > MISSING_NAN,
                (kind == MISSING_ZERO) & (default_left != zero_left), (feature < 0) | (feature >= n_features)]
    reasons = ["is a categorical split (bit 1), which twinrank's numerical splits cannot express",
               "has missing type 3, which LightGBM does not define",
               "sends 0 with the missing values (missing type Zero, from zero_as_missing=true) to the other "
               "side of the threshold than 0 goes; twinrank's trees set only NaN apart (retrain with "
               "zero_as_missing=false, LightGBM's default)",
               f"splits on a feature outside 0..{n_features - 1} (max_feature_idx)"]
    for bad, reason in zip(problems, reasons):
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ModelFormatError(f"{where}: internal node {k} (decision_type={decision[k]}, split_feature="
                                   f"{feature[k]}, threshold={float(threshold[k])!r}) {reason}")
    goes_left = np.where(kind == MISSING_NONE, zero_left, default_left)  # (n_inner,)
    return np.where(goes_left, left, right)


def _breadth_first(left: np.ndarray, right: np.ndarray, n_leaves: int, where: str) -> np.ndarray:
    """The child references from the root (internal node 0, or leaf 0 alone) breadth-first,
    left before right; ModelFormatError unless they form one tree over every node."""
    order = [0 if n_leaves > 1 else ~0]
    for ref in order:
        children = [int(left[ref]), int(right[ref])] if ref >= 0 else []
        order += children
        if len(order) > 2 * n_leaves - 1 or any(not -n_leaves <= c < n_leaves - 1 for c in children):
            raise ModelFormatError(f"{where}: left_child/right_child do not form a tree of {n_leaves} leaves "
                                   f"(children {children} of internal node {ref})")
    order = np.array(order, dtype=np.int64)
    if len(order) != 2 * n_leaves - 1 or len(np.unique(order)) != len(order):
        raise ModelFormatError(f"{where}: left_child/right_child do not reach each of the {n_leaves} leaves once")
    return order


def _array(fields: dict, key: str, n: int, kind, where: str) -> np.ndarray:
    """Field ``key`` as ``n`` numbers; zeros if an optional field is absent."""
    if key not in fields:
        if key in _REQUIRED and n > 0:
            raise ModelFormatError(f"{where}: the tree has no {key}= line")
        return np.zeros(n, dtype=np.int64 if kind is int else np.float64)
    text, line = fields[key]
    try:
        values = np.array([kind(v) for v in text.split()], dtype=np.int64 if kind is int else np.float64)
    except (ValueError, OverflowError) as e:
        raise ModelFormatError(f"{where} (line {line}): {key}: {e}") from None
    if len(values) != n:
        raise ModelFormatError(f"{where} (line {line}): {key} has {len(values)} values, expected {n}")
    return values


def _int(fields: dict, key: str, where: str) -> int:
    text, line = fields[key]
    try:
        return int(text)
    except ValueError:
        raise ModelFormatError(f"{where} (line {line}): {key}={text[:60]!r} is not an integer") from None

r"""A twinrank :class:`Ensemble` as LightGBM's text model (``Booster.save_model``'s format, version v4).

What is written, and why the scores are the same (the rules are in
:mod:`~twinrank.interop.lightgbm_text`):

- **Trees in scoring order**: a prior model's trees (``init_model``, recursively) first,
  then a one-leaf tree holding the model's ``base_score`` if it is not 0, then the trees;
  without a prior model the base score is added to the first tree's leaves instead
  (LightGBM's ``boost_from_average`` does the same). LightGBM sums the trees from 0 in
  file order, so every partial sum is the one twinrank's predict forms.
- **Leaf values** $w_t \cdot v$, the tree weight folded in (``shrinkage=1``).
- **Thresholds** for LightGBM's float64 comparison: twinrank reads features as float32
  (a LETOR file's precision; an estimator's ``predict`` converts its ``X``), so a row goes
  left iff ``float32(x) <= t``; LightGBM compares the float64 ``x`` itself. The written
  threshold is ``t'``, the largest float64 ``d`` with ``float32(d) <= t`` (just below, or
  with round-half-to-even at, the midpoint between the largest float32 ``<= t`` and the next
  float32), so ``x <= t'`` iff ``float32(x) <= t`` for every float64 ``x``; a float32 ``x``
  takes the same route at ``t`` and ``t'``, and ``t'`` maps to itself.
- **Splits**: ``decision_type`` 8 (missing type NaN, NaN goes right) or 10 (NaN goes left)
  with ``missing[k]`` the right or left child; a third child for missing values
  (``missing_split="separate"``) becomes an extra node on the same feature at threshold
  ``inf`` sending NaN right to that child and every number left to the split itself.
- **A fill strategy** (``missing`` = zero, one, mean, median) fills NaN before the trees
  see them; each split sends NaN where the fill value goes at that split.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._bag_model import BagModel
from twinrank.reference.io._ensemble import Ensemble, Tree
from twinrank.reference.io._mcrank_model import McRankModel

NAN_RIGHT, NAN_LEFT = 8, 10  # decision_type: missing_type NaN (2 << 2), plus kDefaultLeftMask (2)
# float rounding of a sum of LightGBM's parsed numbers equals ours only if they are read back
# exactly: repr() is the shortest string that parses to the same float64.
_fmt = repr
_CUMULATIVE_SCORES = {  # how a classification model's ensembles give P(y > c_j)
    "mcrank": "sigmoids of its classifiers' log-odds",
    "cumulative-regression": "its regressors' estimates clipped to [0, 1] and made monotone",
}
_BAG_RULES = {  # why a bag's combination is not one LightGBM model
    "minmax": "which rescales each member's scores to [0, 1] within each query, so a document's score "
              "depends on the other documents of its query, while LightGBM scores each row alone",
    "borda": "which replaces each member's scores by rank points within each query, so a document's "
             "score depends on the other documents of its query, while LightGBM scores each row alone",
    "mean": "the mean of its members' scores, which export does not write: it would be every member's "
            "trees with weights 1/B, each member's own fill of missing values applied, which one LightGBM "
            "model cannot hold when the fills differ",
}
_FLOAT32_TOP = float(np.finfo(np.float32).max) + 2.0 ** 103  # float32 rounds this and above to inf


def default_feature_names(n_features: int) -> list:
    """``["f1", ..., "fN"]``: column ``j`` of ``X`` is LETOR feature ``j + 1``, named ``f{j+1}``."""
    return [f"f{j + 1}" for j in range(n_features)]


def to_lightgbm_text(model, *, feature_names=None) -> str:
    """The model as the text of a LightGBM model file (``lightgbm.Booster(model_str=...)``).

    ``feature_names``: one name per column of ``X``, no spaces (default: the names of an imported
    LightGBM model, else ``f1 ... fN``, the LETOR file's 1-based feature ids, as ``twinrank inspect``
    and ``dump_tree`` name them).
    ModelFormatError, naming the kind and the reason, for a model LightGBM cannot express
    (McRank, cumulative regression, a BL-MART bag, iterative imputation).
    """
    model = _ensemble_of(model)
    names = _feature_names(model, feature_names)
    blocks = [f"Tree={i}\n{_tree_text(*t)}\n" for i, t in enumerate(_scoring_trees(model, None))]
    header = ["tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
              f"max_feature_idx={model.n_features - 1}", f"objective={_objective(model)}",
              f"feature_names={' '.join(names)}", f"feature_infos={' '.join(_feature_infos(model))}",
              f"tree_sizes={' '.join(str(len(b.encode())) for b in blocks)}", "", ""]
    return "\n".join(header) + "".join(blocks) + "end of trees\n"


def _ensemble_of(model) -> Ensemble:
    model = getattr(model, "model_", model)  # a fitted estimator: its model
    if isinstance(model, McRankModel):
        raise ModelFormatError(
            f"{model.described} ({model.algorithm}) cannot be written as one LightGBM model: its score, "
            f"the expected relevance sum_k F(c_k) P(y = c_k | x), combines its classifiers' scores "
            f"nonlinearly ({_CUMULATIVE_SCORES[model.algorithm]}), and a LightGBM model only sums trees; "
            "export each classifier (model.classifiers[j]) on its own instead")
    if isinstance(model, BagModel):
        raise ModelFormatError(
            f"a BL-MART bag (bl-mart) cannot be written as one LightGBM model: it combines its "
            f"{len(model.members)} members' scores by {model.combine!r}, {_BAG_RULES[model.combine]}; "
            "export each member (model.members[m]) on its own instead")
    if not isinstance(model, Ensemble):
        raise ModelFormatError(f"expected a twinrank Ensemble, got {type(model).__name__}")
    if model.n_features < 1:
        raise ModelFormatError("a LightGBM model needs at least one feature; this model has none")
    return model


def _scoring_trees(model: Ensemble, fill) -> list:
    """``[(tree, leaf values per node, fill or None)]`` whose sum, in order, is ``model``'s score."""
    fill = _fill(model) if fill is None else fill  # an outer fill already replaced every NaN
    values = [w * t.value for t, w in zip(model.trees, model.tree_weights)]  # per tree (n_nodes,)
    base = float(model.base_score)
    if model.init_model is None and values:
        values[0] = base + values[0]
        prefix = []
    else:
        prior = [] if model.init_model is None else _scoring_trees(model.init_model, fill)
        prefix = prior + ([(_constant_tree(), np.array([base]), None)] if base != 0 or not prior else [])
    return prefix + [(t, v, fill) for t, v in zip(model.trees, values)]


def _fill(model: Ensemble):
    """The per-feature fill values of the model's missing-value strategy (None: NaN reach the trees)."""
    missing = model.missing or {}
    if missing.get("imputers"):
        raise ModelFormatError(
            "a model with missing='iterative' cannot be written as a LightGBM model: its missing values "
            "are predicted by regression models of the other features, which LightGBM's splits cannot "
            "express (a fill strategy such as mean or median can)")
    fill = np.asarray(missing.get("fill", []), dtype=np.float64)
    return fill if len(fill) else None


def _constant_tree() -> Tree:
    one = np.array([LEAF])
    return Tree(feature=one, threshold=[0.0], bin_threshold=one, left=one, right=one, missing=one,
                value=[0.0], gain=[0.0], count=[0], hessian_sum=[0.0])


def _tree_text(tree: Tree, leaf_values: np.ndarray, fill) -> str:
    """One tree's ``key=value`` lines (LightGBM's ``Tree::ToString``), ending in a blank line."""
    a = _lightgbm_arrays(tree, leaf_values, fill)
    j = lambda key, f=str: f"{key}={' '.join(map(f, a[key]))}"  # noqa: E731
    lines = [f"num_leaves={len(a['leaf_value'])}", "num_cat=0", j("split_feature"),
             j("split_gain", _fmt), j("threshold", _fmt), j("decision_type"), j("left_child"),
             j("right_child"), j("leaf_value", _fmt), j("leaf_weight", _fmt), j("leaf_count"),
             j("internal_value", _fmt), j("internal_weight", _fmt), j("internal_count"),
             "is_linear=0", "shrinkage=1"]
    return "\n".join(lines) + "\n\n"


def _lightgbm_arrays(tree: Tree, leaf_values, fill) -> dict:
    """LightGBM's per-node lists: internal nodes numbered in preorder from the root, leaves in
    preorder too, a child reference ``i >= 0`` an internal node and ``~j`` (< 0) leaf ``j``."""
    a = {k: [] for k in ("split_feature", "split_gain", "threshold", "decision_type", "left_child",
                         "right_child", "internal_value", "internal_weight", "internal_count",
                         "leaf_value", "leaf_weight", "leaf_count")}
    stack = [(0, None, "", False)]  # (twinrank node, LightGBM parent, side, split only: NaN already set apart)
    while stack:
        k, parent, side, split_only = stack.pop()
        if tree.left[k] == LEAF:
            ref = ~len(a["leaf_value"])
            _append(a, leaf_value=float(leaf_values[k]), leaf_weight=float(tree.hessian_sum[k]),
                    leaf_count=int(tree.count[k]))
        else:
            ref = len(a["split_feature"])
            nan_to = _nan_child(tree, k, fill)
            third = not split_only and nan_to not in (tree.left[k], tree.right[k])
            _append(a, split_feature=int(tree.feature[k]), split_gain=float(tree.gain[k]),
                    threshold=np.inf if third else float64_threshold(tree.threshold[k]),
                    decision_type=NAN_LEFT if nan_to == tree.left[k] and not third else NAN_RIGHT,
                    internal_value=float(leaf_values[k]), internal_weight=float(tree.hessian_sum[k]),
                    internal_count=int(tree.count[k]), left_child=0, right_child=0)
            if third:  # numbers go left, to the split itself; NaN right, to the third child
                stack += [(nan_to, ref, "right_child", False), (k, ref, "left_child", True)]
            else:
                stack += [(tree.right[k], ref, "right_child", False), (tree.left[k], ref, "left_child", False)]
        if parent is not None:
            a[side][parent] = ref
    return a


def float64_threshold(threshold: float) -> float:
    """``t'``, the largest float64 ``d`` with ``float32(d) <= threshold``: LightGBM's ``x <= t'`` on a
    float64 ``x`` is then twinrank's ``float32(x) <= threshold`` (module docstring)."""
    t = float(threshold)
    if np.isnan(t) or t == np.inf:
        return t
    with np.errstate(over="ignore"):
        low = np.float32(t)  # round to nearest: the largest float32 <= t, or the next one above it
        if float(low) > t:
            low = np.nextafter(low, np.float32(-np.inf))
        if low == -np.inf:  # below every float32: only the doubles float32 rounds to -inf
            return -_FLOAT32_TOP
        high = np.nextafter(low, np.float32(np.inf))
        midpoint = _FLOAT32_TOP if high == np.inf else (float(low) + float(high)) / 2  # exact in float64
        if float(np.float32(midpoint)) <= t:  # a tie rounds to the even one of low and high
            return midpoint
    return float(np.nextafter(midpoint, -np.inf))


def _nan_child(tree: Tree, k: int, fill) -> int:
    """The child a NaN of node ``k``'s feature reaches: its fill value's child if filled."""
    if fill is None:
        return int(tree.missing[k])
    return int(tree.left[k] if fill[tree.feature[k]] <= tree.threshold[k] else tree.right[k])


def _append(a: dict, **values) -> None:
    for key, value in values.items():
        a[key].append(value)


def _objective(model: Ensemble) -> str:
    """An objective whose output transform is the identity, so ``predict()`` is twinrank's score
    (an imported model keeps its own objective, and LightGBM its output transform)."""
    if model.algorithm == "lambdamart":
        return "lambdarank"
    if model.algorithm == "lightgbm":  # an imported model keeps its objective (and its transform)
        return model.params.get("objective", "regression")
    return "regression"


def _feature_names(model: Ensemble, names) -> list:
    """The names written: given, an imported model's, or ``f1 ... fN`` (column ``j`` is ``f{j+1}``)."""
    names = names if names is not None else model.params.get("feature_names") or default_feature_names(
        model.n_features)
    names = [str(n) for n in names]
    if len(names) != model.n_features:
        raise ModelFormatError(f"{len(names)} feature names for a model of {model.n_features} features")
    bad = [n for n in names if not n or any(c.isspace() or c == "=" for c in n)]
    if bad:
        raise ModelFormatError(f"feature name {bad[0]!r} cannot be written: LightGBM's feature_names "
                               f"line separates names by spaces and keys by '='")
    return names


def _feature_infos(model: Ensemble) -> list:
    """``[lo:hi]`` per feature, the smallest and largest finite threshold written; ``none`` if unused.

    (LightGBM writes the training data's range here; twinrank keeps no data range, and
    LightGBM reads the field only to check its length.)
    """
    used = {}
    ensembles = [model]
    while ensembles[-1].init_model is not None:
        ensembles.append(ensembles[-1].init_model)
    for tree in (t for e in ensembles for t in e.trees):
        inner = (tree.left != LEAF) & np.isfinite(tree.threshold)  # (n_nodes,)
        for f, t in zip(tree.feature[inner].tolist(), map(float64_threshold, tree.threshold[inner])):
            lo, hi = used.get(f, (t, t))
            used[f] = (min(lo, t), max(hi, t))
    return [f"[{_fmt(used[f][0])}:{_fmt(used[f][1])}]" if f in used else "none"
            for f in range(model.n_features)]

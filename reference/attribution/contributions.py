r"""Per-feature contributions of a score: exact path-dependent TreeSHAP.

Lundberg, Erion & Lee (2018), "Consistent individualized feature attribution for tree
ensembles", Algorithm 2; LightGBM's ``predict(X, pred_contrib=True)``, XGBoost's
``pred_contribs``. The page *Explaining a score* in the documentation derives it step by step.

**Shapley values.** A model $f$ scores a row $x$ of $M$ features. Write $f_x(S)$ for the score
expected when only the features $S$ of $x$ are known. Feature $i$'s Shapley value is its
effect on that expectation, averaged over every order in which the features could become known:

$$\phi_i = \sum_{S \subseteq \{1..M\} \setminus \{i\}} \frac{|S|!\,(M - |S| - 1)!}{M!}
\bigl(f_x(S \cup \{i\}) - f_x(S)\bigr),$$

and they add up to the score: $\phi_0 + \sum_{i=1}^M \phi_i = f(x)$, with the base value
$\phi_0 = f_x(\varnothing)$ (local accuracy).

**Path-dependent expectation** (the paper's Algorithm 1). In a tree, $f_x(S)$ follows $x$ at a
node that splits on a feature of $S$; at any other node it takes every child $c$ of node $j$,
weighted by the share of the training rows that went there, $r_c / r_j$ (``Tree.count``, the
*cover*). So $f_x(\varnothing) = \sum_\ell (r_\ell / r_0)\, v_\ell$, the mean of the tree over
its training rows (:func:`expected_value`).

**One leaf at a time.** Leaf $\ell$ adds $v_\ell \prod_e q_e(S)$ to $f_x(S)$, a product over the
distinct features $e$ split on along its path from the root: $q_e(S) = o_e$ if $e \in S$ (1 if
$x$ goes this way at every node of the path on $e$, else 0) and $q_e(S) = z_e$ if not (the
product of the shares $r_c / r_j$ at those nodes). For a product of $D$ such factors, feature $i$
of the path gets

$$\phi_i^{(\ell)} = v_\ell\, (o_i - z_i) \sum_{k=0}^{D-1} \frac{k!\,(D-1-k)!}{D!}
\sum_{\substack{S \subseteq \text{path} \setminus \{i\} \\ |S| = k}} \prod_{e \in S} o_e
\prod_{e \notin S,\, e \ne i} z_e,$$

and every feature off the path gets 0 from this leaf; $\phi_i$ is the sum over leaves.

**EXTEND and UNWIND.** Walking down, the path $m$ keeps its features $d$ with their $z$ and $o$ and
the weights $w_k = \frac{k!\,(D-k)!}{(D+1)!} \sum_{|S| = k} \prod_{e \in S} o_e \prod_{e \notin S} z_e$,
$k = 0..D$ (the path starts with a placeholder element, feature $-1$, $z = o = 1$, so $D + 1$
elements weigh $D$ features). :func:`extend` appends one feature in $O(D)$ (it multiplies the
polynomial $\prod_e (z_e + o_e t)$ by one more factor, reweighted); :func:`unwind` divides a
factor out again. At a leaf, $\phi_i^{(\ell)} = v_\ell (o_i - z_i) \sum_k \operatorname{UNWIND}(m, i).w_k$
(:func:`unwound_sum`): $O(D^2)$ per leaf and $O(L D^2)$ per tree of $L$ leaves, where the
definition sums $2^M$ subsets. A feature split on twice along a path is one factor: at its second
node it is unwound and extended again with both nodes' fractions multiplied.

**Next to the paper.** The names are Algorithm 2's: RECURSE's $j, m, p_z, p_o, p_i$ and $i_z, i_o$;
the path's fields $m.d, m.z, m.o, m.w$ are :class:`Path`'s ``feature``, ``zero`` (the fraction of
the training rows, the paths where the feature is unknown), ``one`` (the row's own fraction, where
it is known) and ``weight``; the placeholder's feature, the paper's 0, is $-1$ here. The paper counts
path positions from 1 and Python from 0: the loops of :func:`extend`, :func:`unwind` and
:func:`unwound_sum` run over the paper's $i$ and $j$ so that their formulas read as the paper's,
$m_j$'s weight being ``weight[j - 1]``, while an element's position elsewhere (``unwind(m, i)``,
the leaf's loop) is Python's. (LightGBM's and SHAP's C++, and the fast twin, write the same loops
with $l$ one less: ``unique_depth``, the last element's 0-based position.)

**Here.** $o$ is 1 or 0 (a row goes one way at a split), so where the paper divides by $o$ the
code divides by 1. Rows are routed as :mod:`~twinrank.reference.trees.predict` routes them
(NaN to ``missing[j]``, a third child included, which gets its share $r_c / r_j$ like the
others; ``x <= threshold`` compared in float64); the recursion walks the tree once for all rows
of ``X``: the features, $z$ and the weights' formulas are the same for every row, only $o$ (and
so $w$) differ, one array entry per row.

**An ensemble** $F(x) = F_{\mathrm{init}}(x) + F_0 + \sum_t w_t f_t(x)$ is a sum, and Shapley values
add: $\phi_i(F) = \phi_i(F_{\mathrm{init}}) + \sum_t w_t \phi_i(f_t)$, with the base value
$E[F] = E[F_{\mathrm{init}}] + F_0 + \sum_t w_t E[f_t]$ (:func:`base_value`). A model whose score is
not a sum of trees is refused (:func:`contributions_of`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io.model import BagModel, Ensemble, McRankModel, Tree
from twinrank.reference.trees.predict import _check_n_features, _checked_features, missing_applied

_CLASS_SCORES = {  # how a classification model's ensembles give its class probabilities
    "mcrank": "the sigmoids of its classifiers' log-odds",
    "cumulative-regression": "its regressors' estimates clipped to [0, 1] and made monotone",
}

__all__ = ["predict_contributions", "tree_contributions", "expected_value", "base_value", "check_cover",
           "contributions_of", "Path", "extend", "unwind", "unwound_sum"]


def predict_contributions(model, X) -> np.ndarray:
    r"""The contributions $\phi$ (float64, shape (n_rows, n_features + 1)) of every row of ``X``.

    Column ``f`` is feature ``f``'s Shapley value $\phi_f$ (LETOR feature ``f + 1``); the last column
    is the base value $E[F]$, the same in every row. Each row sums to the raw score of
    :func:`~twinrank.reference.trees.predict.predict_ensemble` (up to float rounding). ``model``: an
    :class:`Ensemble`, or a BL-MART bag combined by ``mean``; other models are refused
    (:func:`contributions_of`).
    """
    return contributions_of(model, X, ensemble_contributions)


def contributions_of(model, X, ensemble_contributions) -> np.ndarray:
    r"""``model``'s contributions, each ensemble's from ``ensemble_contributions(ensemble, X)``
    (the twin's; the fast twin passes its own): what a model kind's score allows.

    - an :class:`Ensemble`: its own;
    - a BL-MART bag combined by ``mean``: the mean of its members' ($\phi$ is linear in the model);
    - a bag combined by ``minmax`` or ``borda``, and McRank or cumulative regression: refused with the
      reason (their scores are not sums of trees, so no path through a tree is a share of them).
    """
    if isinstance(model, Ensemble):
        return ensemble_contributions(model, X)
    if isinstance(model, BagModel) and model.combine == "mean":
        total = 0.0
        for member in model.members:  # in member order, as the bag's own mean (bag_rules)
            total = total + ensemble_contributions(member, X)
        return total / len(model.members)
    if isinstance(model, BagModel):
        raise ModelFormatError(
            f"a BL-MART bag combined by {model.combine!r} has no per-feature contributions: it rescales each "
            "member's scores within each query (min-max or Borda points), so a document's score is not a sum "
            "of trees and depends on the other documents of its query; a bag combined by 'mean' has them, "
            "and so has each member (model.members[m])")
    if isinstance(model, McRankModel):
        raise ModelFormatError(
            f"{model.described} ({model.algorithm}) has no per-feature contributions: its score, the expected "
            f"relevance sum_k F(c_k) P(y = c_k | x), is computed from {_CLASS_SCORES[model.algorithm]}, not a "
            "sum of trees; explain each of its ensembles (model.classifiers[j]) instead")
    raise ModelFormatError(f"expected a twinrank model (an Ensemble), got {type(model).__name__}")


def ensemble_contributions(ensemble: Ensemble, X) -> np.ndarray:
    r"""$\phi$ (n_rows, n_features + 1) of an ensemble: its prior model's, plus $w_t \phi(f_t)$ tree by
    tree; the last column :func:`base_value`. ``X`` is filled first as ``predict_ensemble`` fills it."""
    X = np.asarray(X)
    _check_n_features(X, ensemble.n_features)
    X = missing_applied(ensemble, X)
    if ensemble.init_model is not None:
        phi = ensemble_contributions(ensemble.init_model, X)
    else:
        phi = np.zeros((len(X), ensemble.n_features + 1))
    for t, (tree, weight) in enumerate(zip(ensemble.trees, ensemble.tree_weights)):
        check_cover(tree, f"trees[{t}]")
        phi[:, :-1] += weight * tree_contributions(tree, X)[:, :-1]
    phi[:, -1] = base_value(ensemble)
    return phi


def base_value(ensemble: Ensemble) -> float:
    r"""$E[F] = E[F_{\mathrm{init}}] + F_0 + \sum_t w_t E[f_t]$, summed in the order ``predict_ensemble`` sums."""
    if ensemble.init_model is None:
        value = float(ensemble.base_score)
    else:
        value = base_value(ensemble.init_model) + ensemble.base_score
    for tree, weight in zip(ensemble.trees, ensemble.tree_weights):
        value = value + weight * expected_value(tree)
    return float(value)


def expected_value(tree: Tree) -> float:
    r"""$E[f] = \sum_\ell (r_\ell / r_0)\, v_\ell$: the tree's mean over its training rows (a leaf's
    value for a one-leaf tree), the paper's $f_x(\varnothing)$."""
    if tree.left[0] == LEAF:
        return float(tree.value[0])
    check_cover(tree)
    leaves = np.flatnonzero(tree.is_leaf)
    return float(np.sum(tree.count[leaves] / tree.count[0] * tree.value[leaves]))


def check_cover(tree: Tree, path: str = "tree") -> None:
    """ModelFormatError unless the tree's ``count`` is a cover: every node reached by a training row,
    and a split's children holding its rows between them (as every twinrank and LightGBM tree does).

    TreeSHAP weighs a split's children by the share of the training rows that took each; a tree
    without its counts (one built by hand, or a model file with them zeroed) has none.
    """
    if tree.left[0] == LEAF:
        return
    empty = np.flatnonzero(tree.count < 1)
    if len(empty):
        raise ModelFormatError(f"{path}.count[{empty[0]}] = {tree.count[empty[0]]}: per-feature contributions "
                               "weigh each branch by the training rows that took it, and no row reached this node")
    inner = np.flatnonzero(~tree.is_leaf)
    third = (tree.missing[inner] != tree.left[inner]) & (tree.missing[inner] != tree.right[inner])
    rows = tree.count[tree.left[inner]] + tree.count[tree.right[inner]] + np.where(
        third, tree.count[tree.missing[inner]], 0)  # (n_inner,)
    bad = np.flatnonzero(rows != tree.count[inner])
    if len(bad):
        k = inner[bad[0]]
        raise ModelFormatError(f"{path}.count[{k}] = {tree.count[k]}: its children hold {rows[bad[0]]} rows; "
                               "per-feature contributions need the training rows of a split divided among "
                               "its children")


def tree_contributions(tree: Tree, X) -> np.ndarray:
    r"""$\phi$ (float64, shape (n_rows, n_columns + 1)) of one tree $f$: column ``f`` feature ``f``'s
    Shapley value $\phi_f$, the last column $E[f]$ (:func:`expected_value`).

    The paper's Algorithm 2 (TS): one walk of the tree, all rows at once (module docstring).
    """
    X = _checked_features(X, tree)
    phi = np.zeros((len(X), X.shape[1] + 1))  # (n_rows, n_columns + 1)
    phi[:, -1] = expected_value(tree)
    if tree.left[0] != LEAF:
        check_cover(tree)
        root_path = Path(feature=[], zero=[], one=[], weight=[])
        _recurse(tree, X, phi, 0, root_path, 1.0, np.ones(len(X)), -1)
    return phi


# --8<-- [start:recurse]
def _recurse(tree: Tree, X, phi, j: int, m: Path, p_z: float, p_o: np.ndarray, p_i: int) -> None:
    r"""RECURSE(j, m, p_z, p_o, p_i) of Algorithm 2: node ``j`` reached along path ``m``, whose last
    step, on feature $p_i$, kept the share $p_z$ of the training rows and $p_o$ of each row.

    At a leaf every feature $m_i.d$ of the path gets $w\,(m_i.o - m_i.z)\,v_j$, $w$ the sum of
    UNWIND$(m, i)$'s weights. At a split the paper recurses into the hot child $h$ (the one $x$ takes,
    $p_o = i_o$) and the cold one $c$ ($p_o = 0$); with one row per entry of $p_o$ the child taken
    differs by row, so every child gets $p_o = i_o [\text{the row takes it}]$.
    """
    m = extend(m, p_z, p_o, p_i)
    if tree.left[j] == LEAF:
        for i in range(1, len(m.feature)):  # element 0 is the placeholder
            phi[:, m.feature[i]] += unwound_sum(m, i) * (m.one[i] - m.zero[i]) * tree.value[j]
        return
    d = int(tree.feature[j])
    hot = _child_taken(tree, j, X[:, d])  # (n_rows,) the child each row's own value goes to
    i_z, i_o = 1.0, np.ones(len(X))  # what an earlier split on d on this path already kept
    if d in m.feature:
        k = m.feature.index(d)
        i_z, i_o = m.zero[k], m.one[k]
        m = unwind(m, k)
    for c in _children(tree, j):
        _recurse(tree, X, phi, c, m, tree.count[c] / tree.count[j] * i_z, i_o * (hot == c), d)
# --8<-- [end:recurse]


def _child_taken(tree: Tree, j: int, values: np.ndarray) -> np.ndarray:
    """The child of node ``j`` each value goes to, as ``predict`` routes (NaN to ``missing[j]``)."""
    values = values.astype(np.float64)
    return np.where(np.isnan(values), tree.missing[j],
                    np.where(values <= tree.threshold[j], tree.left[j], tree.right[j]))


def _children(tree: Tree, j: int) -> list:
    """Node ``j``'s children: left, right, and a third one holding the missing values if it has one."""
    children = [int(tree.left[j]), int(tree.right[j])]
    if tree.missing[j] not in children:
        children.append(int(tree.missing[j]))
    return children


@dataclass
class Path:
    r"""The paper's path $m$ from the root: per element, its feature $d$, the share $z$ (float) of the
    training rows and the rows' own $o$ ((n_rows,) of 0.0 and 1.0) that follow it, and the weights $w$
    ((n_rows,) each), ``weight[k]`` the weight of the path's subsets of $k$ features (module docstring)."""

    feature: list
    zero: list
    one: list
    weight: list


# --8<-- [start:extend]
def extend(m: Path, p_z: float, p_o: np.ndarray, p_i: int) -> Path:
    r"""EXTEND(m, p_z, p_o, p_i): ``m`` with one more feature $p_i$ (a new path; ``m`` is kept).

    With $l$ elements before, the new subsets of $i$ features take $p_o$ times the old ones of $i - 1$,
    those of $i - 1$ take $p_z$ times them, each reweighted from $l$ to $l + 1$ elements, for
    $i = l, \dots, 1$ (the paper's positions, from 1):
    $m_{i+1}.w \mathrel{+}= p_o\, m_i.w\; i / (l + 1)$, $m_i.w \leftarrow p_z\, m_i.w\, (l + 1 - i) / (l + 1)$.
    """
    l = len(m.feature)
    w = [wk.copy() for wk in m.weight] + [np.full(len(p_o), 1.0 if l == 0 else 0.0)]  # m_{l+1}.w
    for i in range(l, 0, -1):  # the paper's i = l .. 1; m_i.w is w[i - 1]
        w[i] = w[i] + p_o * w[i - 1] * i / (l + 1)
        w[i - 1] = p_z * w[i - 1] * (l + 1 - i) / (l + 1)
    return Path(m.feature + [p_i], m.zero + [p_z], m.one + [p_o], w)
# --8<-- [end:extend]


# --8<-- [start:unwind]
def unwind(m: Path, i: int) -> Path:
    r"""UNWIND(m, i): ``m`` without its element ``i`` (Python's position), as if it had never been
    extended by it (a new path).

    EXTEND is undone from the top weight $n = m_l.w$ down, for the paper's $j = l - 1, \dots, 1$
    ($l$ = len(m)). Where $o_i = 1$: $t = m_j.w$, $m_j.w \leftarrow n\, l / j$ (what EXTEND's $p_o$ term
    put one place up), $n \leftarrow t - m_j.w\, z_i (l - j) / l$ (what is left of $t$ once its $p_z$
    term is taken out). Where $o_i = 0$ only the $p_z$ term is there: $m_j.w \leftarrow m_j.w\, l / (z_i (l - j))$.
    """
    l = len(m.feature)
    z, follows = m.zero[i], m.one[i] != 0  # (n_rows,) where o_i = 1
    w = [wk.copy() for wk in m.weight[:l - 1]]
    n = m.weight[l - 1]  # m_l.w, the new top weight, carried down
    for j in range(l - 1, 0, -1):  # the paper's j = l - 1 .. 1; m_j.w is m.weight[j - 1]
        from_above = n * l / j  # the paper's n l / (j o_i), o_i = 1
        n = m.weight[j - 1] - from_above * z * (l - j) / l
        w[j - 1] = np.where(follows, from_above, m.weight[j - 1] * l / (z * (l - j)))
    return Path(_without(m.feature, i), _without(m.zero, i), _without(m.one, i), w)


def _without(values: list, i: int) -> list:
    """``values`` without its element ``i``."""
    return values[:i] + values[i + 1:]
# --8<-- [end:unwind]


# --8<-- [start:unwound_sum]
def unwound_sum(m: Path, i: int) -> np.ndarray:
    r"""$\sum_j \operatorname{UNWIND}(m, i).w_j$ (n_rows,): the Shapley weight of feature ``i`` of the path,
    its subsets of the other features summed (the paper's ``sum(UNWIND(m, i).w)``, without the path).

    :func:`unwind`'s loop, summing the weights instead of storing them; its divisions are grouped as
    the fast twin (and LightGBM's ``UnwoundPathSum``) groups them, so that the twins agree to the last bit.
    """
    l = len(m.feature)
    z, follows = m.zero[i], m.one[i] != 0
    n = m.weight[l - 1]
    total = np.zeros(len(n))
    for j in range(l - 1, 0, -1):  # the paper's j = l - 1 .. 1; m_j.w is m.weight[j - 1]
        from_above = n * l / j
        n = m.weight[j - 1] - from_above * z * ((l - j) / l)
        total = total + np.where(follows, from_above, (m.weight[j - 1] / z) / ((l - j) / l))
    return total
# --8<-- [end:unwound_sum]

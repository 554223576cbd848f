r"""Histogram regression trees with Newton leaf values, grown leaf-wise (best-first).

This is the engine of every twinrank algorithm (GBRT, LambdaMART, random forests,
...): the caller supplies per-row gradients $g_i$ and hessians $h_i$,
and :func:`grow_tree` returns the tree minimising the second-order loss
approximation (Friedman 2001; Chen & Guestrin 2016, XGBoost, Eq. 5-7; Ke et al.
2017, LightGBM's leaf-wise growth).

Node statistics over the node's rows (a row listed twice in ``rows`` counts twice)::

    G = sum g,   H = sum h,   count = number of rows

Leaf value (a Newton step; not shrunk: the caller multiplies by a learning rate)

$$
v = -\frac{G}{H + \lambda_2}
$$

Gain of splitting a node into L and R on feature $f$ (Chen & Guestrin 2016,
Eq. 7 without the factor 1/2 and without $\gamma$; a cost penalty as in
cost-sensitive trees, Xu et al. 2012)

$$
\mathrm{gain} = \frac{G_L^2}{H_L + \lambda_2} + \frac{G_R^2}{H_R + \lambda_2}
    - \frac{G^2}{H + \lambda_2} - \lambda_c\, c_f
$$

where a term whose denominator $H + \lambda_2$ is not positive counts as 0
(and so does the value of such a node). All sums are float64.

Candidates of feature ``f`` with ``n_f = len(thresholds[f]) + 1`` value bins and
missing-bin statistics ``M`` (the node's rows missing ``f``), in this order:

* for ``b = 0 .. n_f - 2``: ``left = {bin <= b}``; if ``M.count > 0`` first with the
  missing rows on the right, then on the left; if ``M.count == 0`` once, and the
  node's missing child is the child with more rows (ties: left);
* if ``M.count > 0``, ``b = n_f - 1``: every non-missing row left, missing rows
  right (the node's threshold is ``+inf``).

These are the two-way candidates (``params.missing_split == "learn"``). With
``params.missing_split == "separate"`` (Mohan 2010, Sec. 2.2: missing values get a
child of their own), a feature whose missing rows could form a child on their
own, ``M.count > 0``, ``M.count >= min_rows`` and ``M.H >= params.min_hessian_in_leaf``,
has instead only the three-way candidates, for ``b = 0 .. n_f - 2``: ``left`` =
non-missing rows with ``bin <= b``, ``right`` = non-missing rows with ``bin > b``,
and the missing child = the ``M`` rows, of gain

$$
\mathrm{gain} = \frac{G_L^2}{H_L + \lambda_2} + \frac{G_R^2}{H_R + \lambda_2}
    + \frac{G_M^2}{H_M + \lambda_2} - \frac{G^2}{H + \lambda_2} - \lambda_c\, c_f
$$

(same zero rule); any other feature (no missing rows at the node, or too few /
too little hessian to make a child) keeps its two-way candidates, so a node
without missing rows splits exactly as in ``"learn"`` mode.

A candidate is valid iff its left and right children have ``count >= params.min_rows_in_leaf(len(rows))``
and ``H >= params.min_hessian_in_leaf`` (a three-way candidate's missing child
always does); features masked out at the node are skipped.

**Ties.** Gains equal in real arithmetic are common on real data (two features,
or a feature and a coarser copy of it, that cut a node's rows into the same two
sets), but the sums behind them, taken in another order (the fast twin's
parallel histograms; a child's statistics as parent minus sibling), differ in
the last bits. So gains are compared with a relative tolerance $\epsilon$
= ``GAIN_TIE_RTOL``: with $G^*$ the largest gain of the node's valid
candidates and $S = |G^*| + G^2 / (H + \lambda_2)$ (the size of the terms a
gain is a difference of), every candidate of gain $\ge G^* - \epsilon S$
ties with the best, and the node's best split is the first tied candidate in
the order (feature ascending, bin ascending, missing right before missing left),
with its own gain. A node is split only if
$G^* + \lambda_c c_{f^*} > \mathrm{min\_gain\_to\_split} + \epsilon S + (\epsilon A)^2 / (H + \lambda_2)$
($f^*$ the best candidate's feature: the cost penalty chooses among a node's splits, as in
Mohan 2010, Eq. 6.1, and does not stop the growth),
$A = \sum_i |g_i|$ over the tree's rows (a gain tied with
``params.min_gain_to_split`` does not beat it, and no split is made on a gain that
is zero up to rounding, also where the node's gradients cancel:
``_split.rounding_gain``), its depth is ``< params.max_depth`` (the root has
depth 0) and the tree has fewer than ``params.max_leaves`` leaves.

Growth is leaf-wise: repeatedly split the leaf of largest best gain, ties by the
same rule going to the lowest node id ($G^*$ is then the largest best gain
of the leaves that can be split and $S$ the largest
$|\mathrm{gain}| + G^2 / (H + \lambda_2)$ of one of them); its children get
the ids ``n_nodes`` (left), ``n_nodes + 1``
(right) and, for a three-way split, ``n_nodes + 2`` (missing) at that moment, so
node ids are in creation order, which is the order of the rows of
``feature_mask``. A three-way split adds two leaves, so when the tree has
``params.max_leaves - 1`` leaves every leaf's best split is taken among its
two-way candidates only (those of ``"learn"`` mode) for that last split. A tree
of ``L`` leaves made by ``s`` three-way splits has ``2 L - 1 - s <= 2 * max_leaves - 1``
nodes.

**Modules.** The grower is written here, one tree at a time, as the rules read:
:func:`grow_tree`'s loop splits the best leaf, partitions its rows and scores its children.
A node's histogram is ``_histogram.node_histogram`` (one ``np.bincount`` per statistic over
its features), its split search ``_split.best_split`` (``np.cumsum`` over the bins, every
candidate's gain at once, then the tie rule ``_split.first_tied``); ``_tree_checks`` checks
the arguments for both twins. Every public name is importable from this module.

**Sibling subtraction** (Ke et al. 2017, Sec. 3). When every child has its parent's features
(no feature subsampling) and the largest child (ties: the last) may be split, its histogram
is the parent's minus its siblings', subtracted in child order, and only the smaller children
are summed from their rows. It changes the last bits of the larger child's sums, never a split
choice beyond the tie rule: the fast twin subtracts the same way. A node that cannot split (at
``max_depth``, or with fewer than ``2 * min_rows`` rows) gets no histogram, and a node that may
split on every feature skips the constant ones, which have no candidate (``_splittable``).

**Least-squares splits.** With ``params.split_gain == "least_squares"`` (the papers'
LambdaMART) the same rules run with every hessian 1, and the values and hessian sums are then
refit from the true ``gradients`` and ``hessians`` (:func:`least_squares_job`).

**Quantized gradients.** With ``quantized`` (a ``QuantizedGradients`` of
``quantize_gradients``) the same rules run on the integers $\tilde g, \tilde h$
(sums exact in any order, so both twins grow the same tree bit for bit), with
$\lambda_2$, ``min_hessian_in_leaf``, ``min_gain_to_split`` and the penalties
rescaled so that gains are those of the scaled sums $s_g G$, $s_h H$; the
values and hessian sums are then refit from the true ``gradients`` and
``hessians`` (:mod:`~twinrank.reference.trees._quantize`).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from twinrank.reference.constants import COUNT, MISSING_BIN, G, H
from twinrank.reference.io.model import LEAF, Tree
from twinrank.reference.params import TreeParams
from twinrank.reference.trees._checks import _checked_inputs, checked_leaf_of_row
from twinrank.reference.trees._histogram import build_histogram, node_histogram
from twinrank.reference.trees._quantize import (
    QuantizedGradients,
    checked_quantized,
    integer_job,
    quantize_gradients,
    refit,
)
from twinrank.reference.trees._split import (
    GAIN_TIE_RTOL,
    Split,
    _score,
    best_split,
    find_best_split,
    gradient_noise,
    tie_floor,
)

__all__ = ["GAIN_TIE_RTOL", "grow_tree", "build_histogram", "Split", "find_best_split", "tie_floor",
           "grow_trees", "QuantizedGradients", "quantize_gradients"]


def grow_tree(binned, gradients, hessians, thresholds, params: TreeParams, *, rows=None,
              feature_mask=None, feature_cost=None, quantized=None, leaf_of_row=None) -> Tree:
    """Grow one regression tree on ``binned[rows]`` (the rules of the module docstring).

    Parameters
    ----------
    binned : uint8 array (n_rows, n_features), from ``binning.apply_bins``
    gradients, hessians : float64 arrays (n_rows,), finite
    thresholds : list of float64 arrays, from ``binning.bin_thresholds``
    params : TreeParams
    rows : int64 array, the rows the tree is grown on; may repeat (a bootstrap). Default all rows.
    feature_mask : bool array (``params.nodes_for(len(rows))`` or more, n_features); row ``i``
        holds the features allowed at node ``i`` (``sampling.feature_masks``; ``2 * max_leaves - 1``
        rows always suffice). Default all True.
    feature_cost : float64 array (n_features,), the effective cost $c_f$ of each
        feature (zero for features already paid for). Default zeros.
    quantized : QuantizedGradients, optional (``quantize_gradients``); the splits are then
        chosen on its integer gradients and the values refit from ``gradients`` and
        ``hessians`` (quantized training, :mod:`~twinrank.reference.trees._quantize`).
    leaf_of_row : int32 array (n_rows,), optional; receives the leaf of each row of ``rows``
        (the grower's partition: what routing the row down the tree gives, without the walk;
        the boosting loop's score update). The other rows are left as they are.

    Returns
    -------
    Tree with node 0 the root. A leaf has ``feature = left = right = missing = -1``,
    ``threshold = 0``, ``bin_threshold = -1`` and ``gain = 0``. An internal node stores
    its would-be leaf value, its gain, ``threshold = thresholds[f][b]`` (``+inf`` for
    ``b = n_f - 1``) and ``bin_threshold = b``.
    """
    job = _checked_inputs(binned, gradients, hessians, thresholds, params, rows, feature_mask, feature_cost)
    leaf_of_row = checked_leaf_of_row(leaf_of_row, len(job.gradients))
    if quantized is None and params.split_gain == "newton":
        nodes = _grow(job)
        if leaf_of_row is not None:
            _label_rows(nodes, leaf_of_row)
        return _as_tree(nodes, job.thresholds)
    split_on = (least_squares_job(job) if quantized is None
                else integer_job(job, checked_quantized(quantized, len(job.gradients))))
    nodes = _grow(split_on)
    if leaf_of_row is None:
        leaf_of_row = np.zeros(len(job.gradients), dtype=np.int32)  # (n_rows,) the leaf of each row
    _label_rows(nodes, leaf_of_row)
    return refit(_as_tree(nodes, job.thresholds), leaf_of_row, job.rows, job.gradients, job.hessians,
                 params.lambda_l2, getattr(split_on, "gain_factor", 1.0))


def grow_trees(binned, gradients, hessians, thresholds, params, samples, *, feature_cost=None) -> list:
    """One tree per ``(rows, feature_mask)`` of ``samples``, in order, all on the same ``feature_cost``
    (:func:`grow_tree`; a forest's trees of one round)."""
    return [grow_tree(binned, gradients, hessians, thresholds, params, rows=rows, feature_mask=mask,
                      feature_cost=feature_cost) for rows, mask in samples]


def least_squares_job(job) -> SimpleNamespace:
    """``split_gain="least_squares"``: the splits are chosen with every hessian 1 (a least-squares
    regression tree of the gradients, gains $S^2/n$); :func:`grow_tree` then refits the leaves'
    Newton values from the true hessians, as after quantized splits."""
    return SimpleNamespace(**{**vars(job), "hessians": np.ones_like(job.hessians)})


def _grow(job) -> list:
    """The nodes of one tree grown best-first (module docstring); each leaf keeps its rows.

    Node ids are creation order. Each leaf that may split holds its best split and its best
    two-way split (``splits``); the loop splits the leaf :func:`_next_leaf` picks until the tree
    has ``max_leaves`` leaves or no leaf's split beats ``min_gain_to_split``.
    """
    job = SimpleNamespace(**vars(job), every_feature=np.flatnonzero(_splittable(job)),
                          gradient_noise=gradient_noise(job))
    root = _node(job, job.rows, depth=0, node_id=0)
    nodes = [root]
    _score_children(job, None, [root])
    n_leaves, max_leaves = 1, job.max_leaves  # params.max_leaves, or room for the leaves the rows can fill
    while n_leaves < max_leaves:
        last = int(n_leaves == max_leaves - 1)  # the last split adds one leaf: two-way only
        k = _next_leaf(nodes, last)
        if k is None:
            break
        parent = nodes[k]
        parent.split = parent.splits[last]
        parts = _partition(job, parent.rows, parent.split)
        parent.children = tuple(range(len(nodes), len(nodes) + len(parts)))
        children = [_node(job, part, parent.depth + 1, node_id=c) for c, part in zip(parent.children, parts)]
        nodes += children
        n_leaves += len(parts) - 1
        if n_leaves < max_leaves:
            _score_children(job, parent, children)
        parent.rows = parent.hist = parent.splits = None
    return nodes


def _next_leaf(nodes: list, last: int):
    """The leaf to split next: of the leaves whose best split (``last``: best two-way split) ties the
    largest gain, the lowest id; None if no leaf can be split. The tie scale $S$ is the largest
    ``|gain| + G^2 / (H + l2)`` of such a leaf (module docstring, **Ties**)."""
    leaves = [(k, n.splits[last], n.score) for k, n in enumerate(nodes)
              if n.splits is not None and n.splits[last] is not None]
    if not leaves:
        return None
    best = max(split.gain for _, split, _ in leaves)
    floor = tie_floor(best, max(abs(split.gain) + score for _, split, score in leaves))
    return next(k for k, split, _ in leaves if split.gain >= floor)


def _score_children(job, parent, children: list) -> None:
    """The histograms and best splits of the ``children`` of ``parent`` (None: the root) that may split.

    With sibling subtraction (:func:`_subtracted_child`) the largest child's histogram is the
    parent's minus its siblings', and the siblings are summed from their rows even where they
    cannot split themselves; otherwise each child that may split is summed from its rows.
    """
    largest = _subtracted_child(job, parent, children)
    for child in children:
        if child is not largest and (largest is not None or _may_split(job, child)):
            child.hist = node_histogram(job.binned, job.gradients, job.hessians, child.rows, child.features)
    if largest is not None:
        largest.hist = parent.hist.copy()  # (3, k, 256)
        for sibling in children:
            if sibling is not largest:
                largest.hist -= sibling.hist
    for child in children:
        if _may_split(job, child):
            child.splits = _best_splits(job, child)
        if not (_may_split(job, child) and _may_be_parent(job, child)):
            child.hist = None  # no child of this node will subtract from it


def _subtracted_child(job, parent, children: list):
    """The child whose histogram is its parent's minus its siblings', or None: the largest (ties:
    the last), when every child has the parent's features and the largest may be split."""
    if parent is None or parent.hist is None:
        return None
    largest = max(reversed(children), key=lambda c: c.totals[COUNT])
    same = all(np.array_equal(c.features, parent.features) for c in children)
    return largest if same and _may_split(job, largest) else None


def _best_splits(job, node) -> tuple:
    """The node's ``(best split, best two-way split)``, each a Split or None (:func:`_split.best_split`)."""
    args = (node.hist, node.features, node.totals, job.n_bins, job.penalty, job.params, job.min_rows)
    best = best_split(*args, gradient_noise=job.gradient_noise)
    if job.params.missing_split == "learn":
        return best, best
    return best, best_split(*args, two_way=True, gradient_noise=job.gradient_noise)


def _label_rows(nodes: list, leaf_of_row: np.ndarray) -> None:
    """Write the leaf of each of the tree's rows into ``leaf_of_row`` (n_rows,): a leaf keeps its rows."""
    for k, node in enumerate(nodes):
        if node.rows is not None:
            leaf_of_row[node.rows] = k


def _leaf_value(g_sum, h_sum, l2):
    r"""The Newton step $-G / (H + \lambda_2)$, 0 if the denominator is not positive."""
    return -g_sum / (h_sum + l2) if h_sum + l2 > 0 else 0.0


@dataclass
class _Node:
    rows: np.ndarray | None  # the node's rows while it is a leaf
    depth: int
    totals: np.ndarray  # (3,) G, H, count
    value: float  # -G / (H + l2), the leaf's Newton step
    score: float  # G^2 / (H + l2), the node's own score (in the tie scale of the leaves it competes with)
    features: np.ndarray  # (k,) the features allowed at the node, ascending
    hist: np.ndarray | None = None  # (3, k, 256) while it is a leaf that may be split
    splits: tuple | None = None  # (best split, best two-way split) while it is a leaf that may split
    split: Split | None = None
    children: tuple = (LEAF, LEAF)  # (left, right) or (left, right, missing)


def _node(job, rows: np.ndarray, depth: int, node_id: int) -> _Node:
    totals = np.array([job.gradients[rows].sum(), job.hessians[rows].sum(), len(rows)])
    allowed = job.feature_mask[node_id]  # (n_features,)
    features = job.every_feature if allowed.all() else np.flatnonzero(allowed)  # constant ones: no candidate
    l2 = job.params.lambda_l2
    return _Node(rows, depth, totals, _leaf_value(totals[G], totals[H], l2), float(_score(totals, l2)), features)


def _splittable(job) -> np.ndarray:
    """The features that can have a candidate at all, (n_features,) bool: two value bins or more, or
    one and some missing rows. The others (constant features) get no histogram where a node may
    split on every feature; a node of sampled features keeps them."""
    single = np.flatnonzero(job.n_bins == 1)  # (n_single,)
    splittable = job.n_bins > 1  # (n_features,)
    splittable[single] = (job.binned[:, single] == MISSING_BIN).any(axis=0)
    return splittable


def _may_split(job, node: _Node) -> bool:
    """Whether a node can have a valid split at all: below ``max_depth``, two children's worth of rows."""
    return node.depth < job.max_depth and node.totals[COUNT] >= 2 * job.min_rows


def _may_be_parent(job, node: _Node) -> bool:
    """Whether the node's histogram may serve its children (sibling subtraction): kept only
    for a node of every feature (no feature subsampling), where a child has the node's features."""
    return np.array_equal(node.features, job.every_feature)


def _partition(job, rows: np.ndarray, split: Split) -> list:
    """The node's rows going left, right (and to the missing child), each in their order in ``rows``."""
    bins = job.binned[rows, split.feature]  # (n_node_rows,)
    is_missing = bins == MISSING_BIN  # (n_node_rows,)
    goes_left = np.where(is_missing, split.missing_left, bins <= split.bin_threshold)
    if split.missing_child:
        return [rows[goes_left], rows[~goes_left & ~is_missing], rows[is_missing]]
    return [rows[goes_left], rows[~goes_left]]


def _as_tree(nodes: list, thresholds: list) -> Tree:
    split = [n.split for n in nodes]
    return Tree(
        feature=[LEAF if s is None else s.feature for s in split],
        threshold=[0.0 if s is None else _split_threshold(thresholds[s.feature], s.bin_threshold)
                   for s in split],
        bin_threshold=[LEAF if s is None else s.bin_threshold for s in split],
        left=[n.children[0] for n in nodes],
        right=[n.children[1] for n in nodes],
        missing=[LEAF if s is None else n.children[2 if s.missing_child else 0 if s.missing_left else 1]
                 for n, s in zip(nodes, split)],
        value=[n.value for n in nodes],
        gain=[0.0 if s is None else s.gain for s in split],
        count=[n.totals[COUNT] for n in nodes],
        hessian_sum=[n.totals[H] for n in nodes],
    )


def _split_threshold(feature_thresholds: np.ndarray, bin_threshold: int) -> float:
    """The raw threshold of ``bin <= bin_threshold``: ``t_b``, or ``+inf`` for the last value bin."""
    if bin_threshold < len(feature_thresholds):
        return float(feature_thresholds[bin_threshold])
    return np.inf

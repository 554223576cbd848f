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
``params.missing_split == "separate"`` (Mohan 2010, Ch. 4: missing values get a
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
$G^* > \mathrm{min\_gain\_to\_split} + \epsilon S + (\epsilon A)^2 / (H + \lambda_2)$,
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

**Modules.** The grower is written here; it calls ``_histogram.node_histograms``
(``build_histogram`` of a batch of nodes, each on its own features), and ``_split.best_splits_among``
(``find_best_split`` of a batch of nodes: a split's children at once) with the tie rule above; ``_tree_checks``
checks its arguments for both twins. Every public name is importable from this module.

**Loops written as NumPy.** The grower loops over splits, one leaf at a time, as the
rules read. Inside a split there is no Python loop over rows or candidates: a
histogram is one ``np.bincount`` per statistic over (feature, bin) keys; a split
search is a ``np.cumsum`` over bins and an ``np.argmax`` over every (feature, bin,
side) candidate; the larger child's histogram is the parent's minus its siblings'
(sibling subtraction, Ke et al. 2017, Sec. 3) when every child has the parent's
features, so only the smaller children are summed from their rows; the next leaf
to split is an ``np.argmax`` over the leaves' best gains (``_Leaves``). A node that
cannot split (at ``max_depth``, or with fewer than ``2 * min_rows`` rows) gets no
histogram, and a node's histogram covers only the features it may split on (a node that
may split on every feature skips the constant ones, which have no candidate: ``_splittable``).
``grow_trees`` grows a forest's batch of trees side by side (``_Growth``: each
tree's loop cut into steps), the new leaves of every tree scored as one batch.
Subtraction changes the last bits of the larger child's sums, never a split
choice beyond the tie rule: the fast twin subtracts the same way.

**Quantized gradients.** With ``quantized`` (a ``QuantizedGradients`` of
``quantize_gradients``) the same rules run on the integers $\tilde g, \tilde h$
(sums exact in any order, so both twins grow the same tree bit for bit), with
$\lambda_2$, ``min_hessian_in_leaf``, ``min_gain_to_split`` and the penalties
rescaled so that gains are those of the scaled sums $s_g G$, $s_h H$; the
values and hessian sums are then refit from the true ``gradients`` and
``hessians`` (:mod:`~twinrank.reference._quantize`).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ._histogram import build_histogram, node_histograms
from ._quantize import QuantizedGradients, checked_quantized, integer_job, quantize_gradients, refit
from ._split import (GAIN_TIE_RTOL, Split, _score, best_splits_among, find_best_split, gradient_noise,
                     tie_floor)
from ._tree_checks import _checked_inputs, checked_leaf_of_row
from .constants import COUNT, G, H, MISSING_BIN
from .model import LEAF, Tree
from .params import TreeParams

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
    feature_mask : bool array (2 * max_leaves - 1, n_features); row ``i`` holds the features
        allowed at node ``i`` (``sampling.feature_masks``). Default all True.
    feature_cost : float64 array (n_features,), the effective cost $c_f$ of each
        feature (zero for features already paid for). Default zeros.
    quantized : QuantizedGradients, optional (``quantize_gradients``); the splits are then
        chosen on its integer gradients and the values refit from ``gradients`` and
        ``hessians`` (quantized training, :mod:`~twinrank.reference._quantize`).
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
    if quantized is None:
        growth = _grown([_Growth(job)])[0]
        if leaf_of_row is not None:
            _label_rows(growth, leaf_of_row)
        return growth.tree()
    on_integers = integer_job(job, checked_quantized(quantized, len(job.gradients)))
    growth = _grown([_Growth(on_integers)])[0]
    if leaf_of_row is None:
        leaf_of_row = np.zeros(len(job.gradients), dtype=np.int32)  # (n_rows,) the leaf of each row
    _label_rows(growth, leaf_of_row)
    return refit(growth.tree(), leaf_of_row, job.rows, job.gradients, job.hessians, params.lambda_l2,
                 on_integers.gain_factor)


def _label_rows(growth, leaf_of_row: np.ndarray) -> None:
    """Write the leaf of each of the tree's rows into ``leaf_of_row`` (n_rows,): a leaf keeps its rows."""
    for k, node in enumerate(growth.nodes):
        if node.rows is not None:
            leaf_of_row[node.rows] = k


class _Growth:
    """One tree being grown by the rules of the module docstring: its nodes, its leaves'
    best splits, and the best-first loop cut into steps (:meth:`split_next`)."""

    def __init__(self, job):
        every = np.flatnonzero(_splittable(job))  # the features of a node that may split on every feature
        job = SimpleNamespace(**vars(job), gradient_noise=gradient_noise(job),  # rounding_gain's
                              every_feature=every)
        self.job, self.nodes = job, [_node(job, job.rows, depth=0, node_id=0)]
        self.leaves = _Leaves(len(job.feature_mask))  # the best splits of the leaves that can be split
        self.n_leaves = 1
        self.scoring = (None, [0])  # (parent, children) to score before the next split

    def split_next(self) -> bool:
        """Split the next leaf (the rule's choice); False when the tree is finished."""
        max_leaves = self.job.params.max_leaves
        last = int(self.n_leaves == max_leaves - 1)  # the last split adds one leaf: two-way only
        k = self.leaves.best_leaf(last) if self.n_leaves < max_leaves else None
        if k is None:
            return False
        split, parent = self.leaves.pop(k)[last], self.nodes[k]
        parts = _partition(self.job, parent.rows, split)
        parent.split, parent.rows = split, None
        parent.children = tuple(range(len(self.nodes), len(self.nodes) + len(parts)))
        self.nodes += [_node(self.job, part, parent.depth + 1, node_id=i)
                       for i, part in zip(parent.children, parts)]
        self.n_leaves += len(parts) - 1
        self.scoring = (parent, parent.children if self.n_leaves < max_leaves else [])
        return True

    def wanted(self) -> list:
        """The children to score that can be split."""
        return [self.nodes[c] for c in self.scoring[1] if _may_split(self.job, self.nodes[c])]

    def add_scored(self) -> None:
        """The scored children join the leaves that can be split; the parent's histogram goes."""
        parent, children = self.scoring
        for c in children:
            if self.nodes[c].splits is not None:
                self.leaves.add(c, self.nodes[c].splits,
                                float(_score(self.nodes[c].totals, self.job.params.lambda_l2)))
        if parent is not None:
            parent.hist = None  # its children have theirs

    def tree(self) -> Tree:
        assert len(self.nodes) <= len(self.job.feature_mask)  # 2 * max_leaves - 1 rows suffice
        return _as_tree(self.nodes, self.job.thresholds)


class _Leaves:
    r"""The best splits of the leaves that can be split, by node id, and the choice of the next one.

    ``gain[last, k]`` is the gain of leaf ``k``'s best split (``last = 1``: two-way only), and
    ``size[last, k]`` its $|\mathrm{gain}| + G^2 / (H + \lambda_2)$; ``-inf`` where leaf ``k`` has
    no such split (or ``k`` is not a leaf). Arrays stand in for a loop over the leaves.
    """

    def __init__(self, n_slots: int):
        self.gain = np.full((2, n_slots), -np.inf)  # (2, 2 * max_leaves - 1)
        self.size = np.full((2, n_slots), -np.inf)  # (2, 2 * max_leaves - 1)
        self.splits = {}  # leaf id -> (best split, best two-way split), each a Split or None

    def add(self, k: int, splits: tuple, score: float) -> None:
        self.splits[k] = splits
        for last, split in enumerate(splits):
            if split is not None:
                self.gain[last, k], self.size[last, k] = split.gain, abs(split.gain) + score

    def pop(self, k: int) -> tuple:
        self.gain[:, k] = self.size[:, k] = -np.inf
        return self.splits.pop(k)

    def best_leaf(self, last: int):
        """The leaf to split next: of the leaves whose gain ties the largest, the lowest id (None if
        no leaf can be split); the scale is the largest ``|gain| + G^2 / (H + l2)`` of such a leaf."""
        best = self.gain[last].max()
        if best == -np.inf:
            return None
        tied = self.gain[last] >= tie_floor(best, self.size[last].max())  # (n_slots,)
        return int(np.argmax(tied))  # the lowest tied id


def _leaf_value(g_sum, h_sum, l2):
    r"""The Newton step $-G / (H + \lambda_2)$, 0 if the denominator is not positive."""
    return -g_sum / (h_sum + l2) if h_sum + l2 > 0 else 0.0


@dataclass
class _Node:
    rows: np.ndarray | None  # the node's rows while it is a leaf
    depth: int
    totals: np.ndarray  # (3,) G, H, count
    value: float
    features: np.ndarray  # (k,) the features allowed at the node, ascending
    hist: np.ndarray | None = None  # (3, k, 256) while it is a leaf that may be split
    splits: tuple | None = None  # (best split, best two-way split) once scored, if it may split
    split: Split | None = None
    children: tuple = (LEAF, LEAF)  # (left, right) or (left, right, missing)


def _node(job, rows: np.ndarray, depth: int, node_id: int) -> _Node:
    totals = np.array([job.gradients[rows].sum(), job.hessians[rows].sum(), len(rows)])
    allowed = job.feature_mask[node_id]  # (n_features,)
    features = job.every_feature if allowed.all() else np.flatnonzero(allowed)  # constant ones: no candidate
    return _Node(rows, depth, totals, _leaf_value(totals[G], totals[H], job.params.lambda_l2), features)


def _splittable(job) -> np.ndarray:
    """The features that can have a candidate at all, (n_features,) bool: two value bins or more, or
    one and some missing rows. The others (constant features) get no histogram where a node may
    split on every feature; a node of sampled features keeps them (the nodes of a forest's batch
    have as many features each, so that their splits are searched as one batch)."""
    single = np.flatnonzero(job.n_bins == 1)  # (n_single,)
    splittable = job.n_bins > 1  # (n_features,)
    splittable[single] = (job.binned[:, single] == MISSING_BIN).any(axis=0)
    return splittable


def _may_split(job, node: _Node) -> bool:
    """Whether a node can have a valid split at all: below ``max_depth``, two children's worth of rows."""
    return node.depth < job.max_depth and node.totals[COUNT] >= 2 * job.min_rows


def _score_children(growths: list) -> None:
    """Histograms and best splits (``node.splits``) of the children every growth has to score
    that can be split, all at once (one batch per number of features). The trees share
    ``binned``, ``gradients`` and ``hessians``."""
    job = growths[0].job
    built = [c for g in growths for c in _built_from_rows(g)]
    for batch in _by_feature_count(built, built):
        hists = node_histograms(job.binned, job.gradients, job.hessians, [c.rows for c in batch],
                                np.stack([c.features for c in batch]))  # (n_batch, 3, k, 256)
        for child, hist in zip(batch, hists):
            child.hist = hist
    for growth in growths:
        _subtract_siblings(growth)
    wanted = [(g.job, c) for g in growths for c in g.wanted()]
    for batch in _by_feature_count(wanted, [child for _, child in wanted]):
        for (job, child), splits in zip(batch, _best_splits_of(batch)):
            child.splits = splits
            if not _may_be_parent(job, child):
                child.hist = None  # no child of this node will subtract from it


def _by_feature_count(items: list, nodes: list) -> list:
    """``items`` grouped by the number of features of their ``nodes`` (one batch of a search each)."""
    counts = [len(node.features) for node in nodes]
    return [[item for item, n in zip(items, counts) if n == count] for count in dict.fromkeys(counts)]


def _largest_if_subtracted(growth: _Growth):
    """The child whose histogram is its parent's minus its siblings', or None.

    Sibling subtraction (Ke et al. 2017, Sec. 3): when every child has the parent's
    features (always without feature subsampling) and the largest child (ties: the
    last) can be split, it gets the parent's histogram minus its siblings', subtracted
    one by one in child order (the fast twin's order), and only the smaller children
    are built from their rows. Otherwise each child that can be split is built from its rows.
    """
    parent, ids = growth.scoring
    if parent is None or parent.hist is None or not ids:
        return None
    children = [growth.nodes[c] for c in ids]
    largest = max(reversed(children), key=lambda c: c.totals[COUNT])
    same = all(np.array_equal(c.features, parent.features) for c in children)
    return largest if same and _may_split(growth.job, largest) else None


def _built_from_rows(growth: _Growth) -> list:
    """The children to score whose histograms are summed from their rows."""
    largest = _largest_if_subtracted(growth)
    if largest is None:
        return growth.wanted()
    return [growth.nodes[c] for c in growth.scoring[1] if growth.nodes[c] is not largest]


def _subtract_siblings(growth: _Growth) -> None:
    """The largest child's histogram, if it is subtracted (the parent's minus its siblings')."""
    largest = _largest_if_subtracted(growth)
    if largest is not None:
        hist = growth.scoring[0].hist.copy()  # (3, k, 256)
        for sibling in (growth.nodes[c] for c in growth.scoring[1]):
            if sibling is not largest:
                hist -= sibling.hist
                if not _may_split(growth.job, sibling):
                    sibling.hist = None  # built for the subtraction only
        largest.hist = hist


def _may_be_parent(job, node: _Node) -> bool:
    """Whether the node's histogram may serve its children (sibling subtraction): kept only
    for a node of every feature (no feature subsampling), where a child has the node's features."""
    return np.array_equal(node.features, job.every_feature)


def _best_splits_of(batch: list) -> list:
    """Each node's ``(best split, best two-way split)`` (each a Split or None), the ``(job, node)``
    pairs of ``batch`` having as many features each, scored at once."""
    job = batch[0][0]  # the trees of a batch share params, n_bins and penalty
    args = (np.stack([n.hist for _, n in batch], axis=1),  # (3, n_nodes, k, 256)
            np.stack([n.features for _, n in batch]),  # (n_nodes, k)
            np.stack([n.totals for _, n in batch]),  # (n_nodes, 3)
            job.n_bins, job.penalty, job.params,
            np.array([j.min_rows for j, _ in batch]))  # (n_nodes,) each tree's min_rows
    noise = np.array([j.gradient_noise for j, _ in batch])  # (n_nodes,) each tree's
    best = best_splits_among(*args, gradient_noise=noise)
    two_way = best if job.params.missing_split == "learn" else best_splits_among(
        *args, two_way=True, gradient_noise=noise)
    return list(zip(best, two_way))


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


def grow_trees(binned, gradients, hessians, thresholds, params, samples, *,
               feature_cost=None) -> list:
    """One tree per ``(rows, feature_mask)`` of ``samples``, in order (:func:`grow_tree`),
    all on the same ``feature_cost``.

    **NumPy idiom for the loop over trees.** The trees grow side by side: each step
    splits the next leaf of every tree still growing (each by its own best-first rule),
    and the children of all of them are scored as one batch, the trees becoming the
    node axis of the histograms and of the split search. Each tree is the one
    :func:`grow_tree` grows alone.
    """
    growths = [_Growth(_checked_inputs(binned, gradients, hessians, thresholds, params, rows, mask,
                                       feature_cost)) for rows, mask in samples]
    return [growth.tree() for growth in _grown(growths)]


def _grown(growths: list) -> list:
    """``growths`` grown side by side to the end (their leaves keep their rows)."""
    growing = growths
    while growing:
        _score_children(growing)
        for growth in growing:
            growth.add_scored()
        growing = [growth for growth in growing if growth.split_next()]
    return growths

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
$G^* > \mathrm{min\_gain\_to\_split} + \epsilon S$ (a gain tied with
``params.min_gain_to_split`` does not beat it: no split is made on a gain that
is zero up to rounding), its depth is ``< params.max_depth`` (the root has
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

**Quantized gradients.** With ``quantized`` (a ``QuantizedGradients`` of
``quantize_gradients``) the same rules run on the integers $\tilde g, \tilde h$
(sums exact in any order, so both twins grow the same tree bit for bit), with
$\lambda_2$, ``min_hessian_in_leaf``, ``min_gain_to_split`` and the penalties
rescaled so that gains are those of the scaled sums $s_g G$, $s_h H$; the
values and hessian sums are then refit from the true ``gradients`` and
``hessians`` (:mod:`~twinrank.reference._quantize`).

**Modules.** The grower is written here; it calls ``_histogram.build_histogram``, and
``_split.find_best_split`` with the tie rule above; ``_tree_checks`` checks its arguments
for both twins. Every public name is importable from this module.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._histogram import build_histogram
from ._quantize import QuantizedGradients, checked_quantized, integer_job, quantize_gradients, refit
from ._split import GAIN_TIE_RTOL, Split, _score, find_best_split, tie_floor
from ._tree_checks import _checked_inputs
from .constants import COUNT, G, H, MISSING_BIN
from .model import LEAF, Tree
from .params import TreeParams

__all__ = ["GAIN_TIE_RTOL", "grow_tree", "build_histogram", "Split", "find_best_split", "tie_floor",
           "grow_trees", "QuantizedGradients", "quantize_gradients"]


def grow_tree(binned, gradients, hessians, thresholds, params: TreeParams, *, rows=None,
              feature_mask=None, feature_cost=None, quantized=None) -> Tree:
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

    Returns
    -------
    Tree with node 0 the root. A leaf has ``feature = left = right = missing = -1``,
    ``threshold = 0``, ``bin_threshold = -1`` and ``gain = 0``. An internal node stores
    its would-be leaf value, its gain, ``threshold = thresholds[f][b]`` (``+inf`` for
    ``b = n_f - 1``) and ``bin_threshold = b``.
    """
    job = _checked_inputs(binned, gradients, hessians, thresholds, params, rows, feature_mask,
                         feature_cost)
    if quantized is None:
        return _as_tree(_grow(job), job.thresholds)
    on_integers = integer_job(job, checked_quantized(quantized, len(job.gradients)))
    nodes = _grow(on_integers)
    leaf_of_row = np.zeros(len(job.gradients), dtype=np.int64)  # (n_rows,) the leaf of each row
    for k, node in enumerate(nodes):
        if node.rows is not None:
            leaf_of_row[node.rows] = k
    return refit(_as_tree(nodes, job.thresholds), leaf_of_row, job.rows, job.gradients, job.hessians,
                 params.lambda_l2, on_integers.gain_factor)


def _grow(job) -> list:
    """The nodes of the tree of ``job`` (leaves keep their rows)."""
    params = job.params
    nodes = [_node(job, job.rows, depth=0)]
    best = {0: _best_splits_of(job, nodes[0], node_id=0)}  # leaf id -> (best, best two-way) or None
    n_leaves = 1
    while n_leaves < params.max_leaves:
        last = int(n_leaves == params.max_leaves - 1)  # the last split adds one leaf: two-way only
        ready = {k: splits[last] for k, splits in best.items() if splits[last] is not None}
        if not ready:
            break
        k = _best_leaf(ready, nodes, params.lambda_l2)
        split, parent = best.pop(k)[last], nodes[k]
        parts = _partition(job, parent.rows, split)
        parent.split, parent.rows = split, None
        parent.children = tuple(range(len(nodes), len(nodes) + len(parts)))
        nodes += [_node(job, part, parent.depth + 1) for part in parts]
        n_leaves += len(parts) - 1
        if n_leaves < params.max_leaves:
            for child in parent.children:
                best[child] = _best_splits_of(job, nodes[child], node_id=child)
    assert len(nodes) <= len(job.feature_mask)  # 2 * max_leaves - 1 rows of feature_mask suffice
    return nodes


def _best_leaf(ready: dict, nodes: list, l2: float) -> int:
    """The leaf to split next: of the leaves ``ready`` (id -> Split) whose gain ties the largest,
    the lowest id; the scale is the largest ``|gain| + G^2 / (H + l2)`` of a ready leaf."""
    gains = {k: split.gain for k, split in ready.items()}
    best = max(gains.values())
    scale = max(abs(gain) + float(_score(nodes[k].totals, l2)) for k, gain in gains.items())
    return min(k for k, gain in gains.items() if gain >= tie_floor(best, scale))


def _leaf_value(g_sum, h_sum, l2):
    r"""The Newton step $-G / (H + \lambda_2)$, 0 if the denominator is not positive."""
    return -g_sum / (h_sum + l2) if h_sum + l2 > 0 else 0.0


@dataclass
class _Node:
    rows: np.ndarray | None  # the node's rows while it is a leaf
    depth: int
    totals: np.ndarray  # (3,) G, H, count
    value: float
    split: Split | None = None
    children: tuple = (LEAF, LEAF)  # (left, right) or (left, right, missing)


def _node(job, rows: np.ndarray, depth: int) -> _Node:
    totals = np.array([job.gradients[rows].sum(), job.hessians[rows].sum(), len(rows)])
    return _Node(rows, depth, totals, _leaf_value(totals[G], totals[H], job.params.lambda_l2))


def _best_splits_of(job, node: _Node, node_id: int):
    """The node's best split and its best two-way split (each a Split or None); None past max_depth."""
    if node.depth >= job.max_depth:
        return None, None
    hist = build_histogram(job.binned, job.gradients, job.hessians, node.rows)
    args = (hist, node.totals, job.n_bins, job.feature_mask[node_id], job.penalty, job.params,
            job.min_rows)
    best = find_best_split(*args)
    return best, best if job.params.missing_split == "learn" else find_best_split(*args, two_way=True)


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
    all on the same ``feature_cost``."""
    return [grow_tree(binned, gradients, hessians, thresholds, params, rows=rows, feature_mask=mask,
                      feature_cost=feature_cost)
            for rows, mask in samples]

r"""Split search of the reference grower: every candidate of a node scored at once, the tie rule.

The gains, the candidates and the tie rule are specified in the docstring of
:mod:`~twinrank.reference.tree` (**Ties**); the fast twin's is ``fast/_split.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .constants import COUNT, G, H, MISSING_BIN
from .params import TreeParams


# Two gains are tied when they differ by at most GAIN_TIE_RTOL * (|best gain| + parent score).
# Rounding: a float64 sum of n terms taken in another order moves by ~1e-16 * sqrt(n) of the
# sum of their magnitudes (MQ2008's exact ties came out 5e-15 apart, relatively); gains that
# differ by less than 1e-10 are not told apart by any data either. Both twins read this one
# constant (the fast twin passes it to its kernels as an argument).
GAIN_TIE_RTOL = 1e-10


@dataclass(frozen=True)
class Split:
    """The best split of a node: ``left = {bin <= bin_threshold}`` plus missing rows if ``missing_left``;
    with ``missing_child`` the missing rows go to a third child instead (``missing_left`` is False)."""

    gain: float
    feature: int
    bin_threshold: int
    missing_left: bool
    missing_child: bool = False


def find_best_split(hist, totals, n_bins, allowed, penalty, params: TreeParams, min_rows: int, *,
                    two_way: bool = False, gradient_noise: float = 0.0):
    r"""The best valid split of a node from its histogram, or None if no gain beats ``min_gain_to_split``.

    Parameters
    ----------
    hist : (n_features, 256, 3) from :func:`build_histogram`
    totals : (3,) the node's ``[G, H, count]``
    n_bins : int array (n_features,), value bins ``n_f`` of each feature
    allowed : bool array (n_features,), the features the node may split on
    penalty : float64 array (n_features,), $\lambda_c c_f$
    min_rows : int, ``params.min_rows_in_leaf(len(rows))``
    two_way : only the two-way candidates, whatever ``params.missing_split`` (a tree's last split)
    gradient_noise : $\epsilon \sum_i |g_i|$ over the tree's rows (:func:`rounding_gain`); 0: none

    Notes
    -----
    The allowed features' histograms are handed to ``_split.best_splits_among`` (a batch of
    one node), which scores all their candidates at once. O(n_features * 256).
    """
    features = np.flatnonzero(allowed)  # (k,) ascending: the tie order is kept
    hists = np.moveaxis(hist[features], -1, 0)[:, None]  # (3, 1, k, 256): statistics first, as the grower's
    return best_splits_among(hists, features[None], totals[None], n_bins, penalty, params, min_rows,
                             two_way=two_way, gradient_noise=gradient_noise)[0]


def best_splits_among(hists, features, totals, n_bins, penalty, params: TreeParams, min_rows: int, *,
                      two_way: bool = False, gradient_noise=0.0) -> list:
    r""":func:`find_best_split` of each of a batch of nodes that have ``k`` features each.

    Parameters
    ----------
    hists : (3, n_nodes, k, 256), the histograms of ``features``, statistics first: the
        (n_nodes, k, 256) sums of gradients, of hessians and of rows
    features : int array (n_nodes, k), each row ascending
    totals : (n_nodes, 3) the nodes' ``[G, H, count]``
    min_rows : int, or int array (n_nodes,): each node's ``params.min_rows_in_leaf`` (the
        nodes may come from trees grown on different numbers of rows)
    n_bins, penalty, params, two_way : as in :func:`find_best_split`
    gradient_noise : float, or float array (n_nodes,): each node's tree's ``gradient_noise``
        (:func:`rounding_gain`)

    Returns
    -------
    list of ``n_nodes`` Split or None.

    Notes
    -----
    **NumPy idiom for the loops over nodes and candidates.** Every candidate
    (node, feature, bin, side) is scored at once. ``np.cumsum`` over the value bins
    gives the left statistics of every threshold; the thresholds a feature has, bins
    ``b < n_f`` (``_thresholds``), are then taken out of the bins' axis, feature by
    feature, so a feature of few values is not scanned over the bins of the feature of
    most: (3, n_nodes, c) for the ``c`` thresholds, the statistics first so that each of
    G, H and count is one contiguous (n_nodes, c) array. Side 0 = missing right, 1 = missing
    left, 2 = missing child (a feature has candidates of sides 0-1 or of side 2, never
    both); only the sides some feature has are scored, the last axis of the gains. Per
    node, ``np.argmax`` of ``gain >= tie_floor(...)`` over its (c, sides) gains, in C
    order, is the first tied candidate in the order (feature, bin, side)
    (:mod:`~twinrank.reference.tree`, **Ties**). O(n_nodes * k * 256).
    """
    if features.shape[1] == 0:
        return [None] * len(features)
    l2 = params.lambda_l2
    min_rows = np.reshape(min_rows, (-1, 1))  # (n_nodes, 1) each node's own, or (1, 1) one for all
    node_bins = n_bins[features]  # (n_nodes, k) value bins n_f of each node's features
    width = int(node_bins.max())  # value bins scanned: every threshold has b < width
    at = _thresholds(node_bins, width)  # (c,) each threshold's flat index j * width + b, in tie order
    j, b = np.divmod(at, width)  # (c,) each: its feature position j and bin b
    missing = hists[..., MISSING_BIN]  # (3, n_nodes, k)
    separate = ((params.missing_split == "separate") & (not two_way) & (missing[COUNT] > 0)
                & (missing[COUNT] >= min_rows)
                & (missing[H] >= params.min_hessian_in_leaf))  # (n_nodes, k) three-way features
    below = np.cumsum(hists[..., :width], axis=-1)  # (3, n_nodes, k, width) stats of bins <= b
    below = np.take(below.reshape(3, len(features), -1), at, axis=2)  # (3, n_nodes, c) at the thresholds
    totals = totals.T[..., None]  # (3, n_nodes, 1)
    parent_score = _score(totals, l2)  # (n_nodes, 1)
    has_missing = missing[COUNT] > 0  # (n_nodes, k)
    sides = _sides(has_missing, separate)
    per_threshold = [np.take(a, j, axis=-1) for a in (missing, node_bins, has_missing, separate,
                                                      penalty[features])]  # of each threshold's feature
    gain = np.stack([_side_gains(side, below, totals, parent_score, b, *per_threshold, min_rows, params)
                     for side in sides], axis=-1)  # (n_nodes, c, len(sides)); -inf: none, or invalid
    noise = rounding_gain(np.asarray(gradient_noise), totals[H, :, 0], l2)  # (n_nodes,) or ()
    return _first_tied(gain, sides, j, b, below, missing, features, totals[:, :, 0], parent_score[:, 0], noise,
                       params)


def _thresholds(node_bins: np.ndarray, width: int) -> np.ndarray:
    """The candidate thresholds of a batch: every (feature position ``j``, bin ``b``) with ``b`` below
    the most value bins ``n_f`` position ``j`` has in a node, as flat indices ``j * width + b``
    into (k, width), ascending: the order (j, b)."""
    return np.flatnonzero(np.arange(width) < node_bins.max(axis=0)[:, None])  # of (k, width)


def _side_gains(side, below, totals, parent_score, b, missing, n_f, has_missing, separate, penalty, min_rows,
                params: TreeParams) -> np.ndarray:
    """The gains of the candidates of ``side`` at the thresholds of ``below`` (3, n_nodes, c), -inf
    where the candidate is not defined or not valid; the other arguments are (n_nodes, c) per
    threshold (``missing`` (3, n_nodes, c), ``totals`` (3, n_nodes, 1), ``b`` (c,)). (n_nodes, c)."""
    l2 = params.lambda_l2
    exists = _candidates_exist(n_f, b, has_missing, separate, side)  # (n_nodes, c)
    left, right = _children(below, missing, totals, side)  # (3, n_nodes, c) each
    extra = _score(missing, l2) if side == 2 else 0.0  # (n_nodes, c) G_M^2/(H_M+l2)
    side_gain = _score(left, l2) + _score(right, l2) + extra - parent_score - penalty  # (n_nodes, c)
    valid = (exists & (left[COUNT] >= min_rows) & (right[COUNT] >= min_rows)
             & (left[H] >= params.min_hessian_in_leaf)
             & (right[H] >= params.min_hessian_in_leaf))  # (n_nodes, c)
    return np.where(valid, side_gain, -np.inf)


def _first_tied(gain, sides, j, b, below, missing, features, totals, parent_score, noise,
                params: TreeParams) -> list:
    """Each node's best split from its candidates' gains (n_nodes, c, len(sides)): the first
    candidate tied with the best, or None if no gain beats ``min_gain_to_split``."""
    flat = gain.reshape(len(gain), -1)  # (n_nodes, c * len(sides)) in the tie order
    best = flat.max(axis=1)  # (n_nodes,)
    scale = np.abs(best) + parent_score  # (n_nodes,)
    splits = best > params.min_gain_to_split + GAIN_TIE_RTOL * scale + noise  # (n_nodes,) False where -inf
    first = np.argmax(flat >= tie_floor(best, scale)[:, None], axis=1)  # (n_nodes,) first tied
    return [_split_at(n, *divmod(int(first[n]), len(sides)), gain, sides, j, b, below, missing, features, totals)
            if splits[n] else None for n in range(len(gain))]


def _split_at(n: int, t: int, s: int, gain, sides, j, b, below, missing, features, totals) -> Split:
    """The split of node ``n`` at its threshold ``t`` (feature position ``j[t]``, bin ``b[t]``) on side ``sides[s]``."""
    f, value, side = int(features[n, j[t]]), float(gain[n, t, s]), sides[s]
    if side == 2:
        return Split(value, f, int(b[t]), False, True)
    if missing[COUNT, n, j[t]] > 0:
        missing_left = side == 1
    else:
        left = below[COUNT, n, t]
        missing_left = left >= totals[COUNT, n] - left  # more rows left
    return Split(value, f, int(b[t]), bool(missing_left))


def _sides(has_missing: np.ndarray, separate: np.ndarray) -> list:
    """The sides some feature has candidates of (from the (n_nodes, k) flags; the others are not scored)."""
    two_way = ~separate  # (n_nodes, k)
    return [side for side, some in enumerate((two_way, has_missing & two_way, separate)) if some.any()]


def _children(below, missing, totals, side):
    """The left and right statistics of every (node, threshold) candidate of ``side``,
    (3, n_nodes, c) each; ``missing`` (3, n_nodes, c), ``totals`` (3, n_nodes, 1)."""
    if side == 1:  # missing rows left
        left = below + missing
        return left, totals - left
    if side == 2:  # missing rows in a child of their own
        return below, totals - below - missing
    return below, totals - below  # missing rows right


def tie_floor(best_gain: float, scale: float) -> float:
    r"""The smallest gain tied with ``best_gain``: $G^* - \epsilon S$, $\epsilon$ the
    constant ``GAIN_TIE_RTOL``.

    ``scale`` is $S$, the size of the terms the gains are differences of
    (:mod:`~twinrank.reference.tree`, **Ties**): sums of the same rows added in another order
    differ in the last bits, so gains equal in real arithmetic are equal only up
    to a rounding error in proportion to it.
    """
    return best_gain - GAIN_TIE_RTOL * scale


def _candidates_exist(n_f: np.ndarray, b: np.ndarray, has_missing: np.ndarray, separate: np.ndarray,
                      side: int) -> np.ndarray:
    """Which (node, threshold) candidates of ``side`` the rules define, from (n_nodes, c) value bins
    and flags of each threshold's feature, ``b`` (c,) its bin: (n_nodes, c) bool."""
    inner = b < n_f - 1  # (n_nodes, c) thresholds between value bins
    if side == 2:
        return inner & separate
    if side == 1:
        return inner & has_missing & ~separate
    last = (b == n_f - 1) & has_missing  # all values left, missing right
    return (inner | last) & ~separate


def gradient_noise(job) -> float:
    r"""$\epsilon A$, $A = \sum_i |g_i|$ over the rows of a grower's job (``job.gradients[job.rows]``,
    the integers in quantized training): how far from zero any sum of those gradients may be
    and still be zero up to rounding (:func:`rounding_gain`)."""
    return float(GAIN_TIE_RTOL * np.abs(job.gradients[job.rows]).sum())


def rounding_gain(gradient_noise, h, l2):
    r"""The largest gain rounding alone can show in a node of hessian sum $H$: $(\epsilon A)^2 / (H + \lambda_2)$,
    0 if the denominator is not positive.

    $A = \sum_i |g_i|$ over the tree's rows and $\epsilon$ = ``GAIN_TIE_RTOL``
    (``gradient_noise`` $= \epsilon A$, :func:`gradient_noise`). A node whose
    rows' gradients cancel has $G \approx 0$ and children whose sums are rounding
    residue (about $10^{-16} A$, as parent minus sibling): their "gain" is some
    $10^{-32}$, which the relative tie tolerance cannot tell from zero since the
    node's own score is as small. Such a node is not split.
    """
    denominator = h + l2
    return gradient_noise * gradient_noise / np.where(denominator > 0, denominator, np.inf)


def _score(stats: np.ndarray, l2: float) -> np.ndarray:
    r"""$G^2 / (H + \lambda_2)$ of ``stats`` (3, ...): G, H, count first; 0 where the denominator is not positive."""
    g, denominator = stats[G], stats[H] + l2
    return g * g / np.where(denominator > 0, denominator, np.inf)  # G^2 / inf = 0

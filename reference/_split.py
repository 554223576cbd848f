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
                    two_way: bool = False):
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

    Notes
    -----
    The allowed features' histograms are handed to ``_split.best_splits_among`` (a batch of
    one node), which scores all their candidates at once. O(n_features * 256).
    """
    features = np.flatnonzero(allowed)  # (k,) ascending: the tie order is kept
    return best_splits_among(hist[None, features], features[None], totals[None], n_bins, penalty,
                             params, min_rows, two_way=two_way)[0]


def best_splits_among(hists, features, totals, n_bins, penalty, params: TreeParams, min_rows: int, *,
                      two_way: bool = False) -> list:
    r""":func:`find_best_split` of each of a batch of nodes that have ``k`` features each.

    Parameters
    ----------
    hists : (n_nodes, k, 256, 3), the histograms of ``features``
    features : int array (n_nodes, k), each row ascending
    totals : (n_nodes, 3) the nodes' ``[G, H, count]``
    min_rows : int, or int array (n_nodes,): each node's ``params.min_rows_in_leaf`` (the
        nodes may come from trees grown on different numbers of rows)
    n_bins, penalty, params, two_way : as in :func:`find_best_split`

    Returns
    -------
    list of ``n_nodes`` Split or None.

    Notes
    -----
    **NumPy idiom for the loops over nodes and candidates.** Every candidate
    (node, feature, bin, side) is scored at once: ``np.cumsum`` over the value bins
    gives the left statistics of every threshold, (n_nodes, k, n, 3) with ``n`` the most
    value bins of a feature; side 0 = missing right, 1 = missing left, 2 = missing
    child (a feature has candidates of sides 0-1 or of side 2, never both), and a side
    no feature has is not scored. Per node, ``np.argmax`` of ``gain >= tie_floor(...)``
    over its (k, n, 3) gains, in C order, is the first tied candidate in the order
    (feature, bin, side) (:mod:`~twinrank.reference.tree`, **Ties**). O(n_nodes * k * 256).
    """
    if features.shape[1] == 0:
        return [None] * len(features)
    l2 = params.lambda_l2
    min_rows = np.broadcast_to(min_rows, (len(features),))[:, None]  # (n_nodes, 1) each node's own
    width = int(n_bins[features].max())  # value bins scanned: every candidate has b < width
    missing = hists[:, :, MISSING_BIN]  # (n_nodes, k, 3)
    separate = ((params.missing_split == "separate") & (not two_way) & (missing[..., COUNT] > 0)
                & (missing[..., COUNT] >= min_rows)
                & (missing[..., H] >= params.min_hessian_in_leaf))  # (n_nodes, k) three-way features
    below = np.cumsum(hists[:, :, :width], axis=2)  # (n_nodes, k, width, 3) stats of bins <= b
    totals = totals[:, None, None]  # (n_nodes, 1, 1, 3)
    parent_score = _score(totals, l2)  # (n_nodes, 1, 1)
    has_missing = missing[..., COUNT] > 0  # (n_nodes, k)
    gain = np.full(below.shape[:-1] + (3,), -np.inf)  # (n_nodes, k, width, 3 sides); -inf: none, or invalid
    for side in _sides(has_missing, separate):
        exists = _candidates_exist(n_bins[features], width, has_missing, separate, side)  # (n_nodes, k, width)
        left, right = _children(below, missing, totals, side)  # (n_nodes, k, width, 3) each
        extra = _score(missing, l2)[..., None] if side == 2 else 0.0  # (n_nodes, k, 1) G_M^2/(H_M+l2)
        side_gain = (_score(left, l2) + _score(right, l2) + extra - parent_score
                     - penalty[features][..., None])  # (n_nodes, k, width)
        at_least = min_rows[..., None]  # (n_nodes, 1, 1)
        valid = (exists & (left[..., COUNT] >= at_least) & (right[..., COUNT] >= at_least)
                 & (left[..., H] >= params.min_hessian_in_leaf)
                 & (right[..., H] >= params.min_hessian_in_leaf))  # (n_nodes, k, width)
        gain[..., side] = np.where(valid, side_gain, -np.inf)
    return _first_tied(gain, below, missing, features, totals[:, 0, 0], parent_score[:, 0, 0], params)


def _first_tied(gain, below, missing, features, totals, parent_score, params: TreeParams) -> list:
    """Each node's best split from its candidates' gains (n_nodes, k, width, 3): the first
    candidate tied with the best, or None if no gain beats ``min_gain_to_split``."""
    flat = gain.reshape(len(gain), -1)  # (n_nodes, k * width * 3) in the tie order
    best = flat.max(axis=1)  # (n_nodes,)
    scale = np.abs(best) + parent_score  # (n_nodes,)
    splits = best > params.min_gain_to_split + GAIN_TIE_RTOL * scale  # (n_nodes,) False where -inf
    first = np.argmax(flat >= tie_floor(best, scale)[:, None], axis=1)  # (n_nodes,) first tied
    return [_split_at(n, first[n], gain, below, missing, features, totals) if splits[n] else None
            for n in range(len(gain))]


def _split_at(n: int, i: int, gain, below, missing, features, totals) -> Split:
    """The split of node ``n`` at its candidate ``i`` (flat index into its (k, width, 3) gains)."""
    j, b, side = np.unravel_index(i, gain.shape[1:])
    f, value = int(features[n, j]), float(gain[n, j, b, side])
    if side == 2:
        return Split(value, f, int(b), False, True)
    if missing[n, j, COUNT] > 0:
        missing_left = side == 1
    else:
        left = below[n, j, b, COUNT]
        missing_left = left >= totals[n, COUNT] - left  # more rows left
    return Split(value, f, int(b), bool(missing_left))


def _sides(has_missing: np.ndarray, separate: np.ndarray) -> list:
    """The sides some feature has candidates of (from the (n_nodes, k) flags; the others are not scored)."""
    two_way = ~separate  # (n_nodes, k)
    return [side for side, some in enumerate((two_way, has_missing & two_way, separate)) if some.any()]


def _children(below, missing, totals, side):
    """The left and right statistics of every (node, feature, bin) candidate of ``side``,
    (n_nodes, k, width, 3) each; ``missing`` (n_nodes, k, 3), ``totals`` (n_nodes, 1, 1, 3)."""
    if side == 1:  # missing rows left
        left = below + missing[..., None, :]
        return left, totals - left
    if side == 2:  # missing rows in a child of their own
        return below, totals - below - missing[..., None, :]
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


def _candidates_exist(n_bins: np.ndarray, width: int, has_missing: np.ndarray, separate: np.ndarray,
                      side: int) -> np.ndarray:
    """Which (node, feature, bin) candidates of ``side`` the rules define, from (n_nodes, k) flags:
    (n_nodes, k, width) bool."""
    b = np.arange(width)  # (width,)
    inner = b < n_bins[..., None] - 1  # (n_nodes, k, width) thresholds between value bins
    if side == 2:
        return inner & separate[..., None]
    two_way = ~separate[..., None]  # (n_nodes, k, 1)
    if side == 1:
        return inner & has_missing[..., None] & two_way
    last = (b == n_bins[..., None] - 1) & has_missing[..., None]  # all values left, missing right
    return (inner | last) & two_way


def _score(stats: np.ndarray, l2: float) -> np.ndarray:
    r"""$G^2 / (H + \lambda_2)$, 0 where the denominator is not positive."""
    g, denominator = stats[..., G], stats[..., H] + l2
    return g * g / np.where(denominator > 0, denominator, np.inf)  # G^2 / inf = 0

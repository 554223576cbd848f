r"""Split search of the reference grower: every candidate of one node scored at once, the tie rule.

The gains, the candidates and the tie rule are specified in the docstring of
:mod:`~twinrank.reference.trees.tree` (**Ties**); the fast twin's is ``fast/trees/_split.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference.constants import COUNT, MISSING_BIN, G, H
from twinrank.reference.params import TreeParams

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
    """
    features = np.flatnonzero(allowed)  # (k,) ascending: the tie order is kept
    return best_split(np.moveaxis(hist[features], -1, 0), features, totals, n_bins, penalty, params, min_rows,
                      two_way=two_way, gradient_noise=gradient_noise)


def best_split(hist, features, totals, n_bins, penalty, params: TreeParams, min_rows: int, *,
               two_way: bool = False, gradient_noise: float = 0.0):
    r"""The best split of one node over its ``features``, or None (the grower's form of :func:`find_best_split`).

    ``hist`` is the node's histogram of those features, statistics first: (3, k, 256), the sums
    of gradients, of hessians and of rows (``_histogram.node_histogram``). Every candidate is
    scored at once (:func:`candidate_gains`); :func:`first_tied` picks the split.
    """
    if len(features) == 0:
        return None
    gains, below = candidate_gains(hist, features, totals, n_bins, penalty, params, min_rows, two_way)
    return first_tied(gains, below, hist[..., MISSING_BIN], features, totals, params, gradient_noise,
                      penalty[features])


SIDES = 3  # where a candidate sends the missing rows: 0 right, 1 left, 2 a child of their own


def candidate_gains(hist, features, totals, n_bins, penalty, params: TreeParams, min_rows: int, two_way: bool):
    r"""The gain of every candidate (feature, bin, side) of a node: (k, width, 3), ``-inf`` where the
    rules define no candidate or it is not valid; and ``below`` (3, k, width), the statistics of
    the bins $\le b$ of each feature.

    The left statistics of every threshold $b$ are the cumulative sums of the histogram over
    the value bins; ``width`` is the most value bins of a feature here. Side 0 sends the
    missing rows $M$ right, side 1 left, side 2 to a child of their own (a feature has
    candidates of sides 0-1 or of side 2, never both; :mod:`~twinrank.reference.trees.tree`).
    """
    l2 = params.lambda_l2
    n_f = n_bins[features][:, None]  # (k, 1) value bins of each feature
    width = int(n_f.max())
    b = np.arange(width)  # (width,) the thresholds bin <= b
    missing = hist[..., MISSING_BIN][..., None]  # (3, k, 1)
    has_missing = missing[COUNT] > 0  # (k, 1)
    separate = ((params.missing_split == "separate") & (not two_way) & has_missing
                & (missing[COUNT] >= min_rows) & (missing[H] >= params.min_hessian_in_leaf))  # (k, 1) three-way
    below = np.cumsum(hist[..., :width], axis=-1)  # (3, k, width) statistics of the bins <= b
    totals = np.asarray(totals)[:, None, None]  # (3, 1, 1)
    parent_score = _score(totals, l2)  # (1, 1)
    gains = np.full((len(features), width, SIDES), -np.inf)  # (k, width, 3)
    for side in range(SIDES):
        exists = _candidates_exist(n_f, b, has_missing, separate, side)  # (k, width)
        if not exists.any():  # no feature has candidates of this side (side 1: no missing rows)
            continue
        left, right = _children(below, missing, totals, side)  # (3, k, width) each
        extra = _score(missing, l2) if side == 2 else 0.0  # (k, 1) G_M^2/(H_M+l2)
        gain = _score(left, l2) + _score(right, l2) + extra - parent_score - penalty[features][:, None]
        valid = (exists & (left[COUNT] >= min_rows) & (right[COUNT] >= min_rows)
                 & (left[H] >= params.min_hessian_in_leaf) & (right[H] >= params.min_hessian_in_leaf))
        gains[..., side] = np.where(valid, gain, -np.inf)
    return gains, below


def first_tied(gains, below, missing, features, totals, params: TreeParams, gradient_noise: float = 0.0,
               penalty=None):
    r"""The tie rule: the first candidate, in the order (feature, bin, side), whose gain ties the best;
    None if the best candidate's own gain does not beat ``min_gain_to_split``
    (:mod:`~twinrank.reference.trees.tree`, **Ties**).

    With $G^*$ the best (penalised) gain and $S = |G^*| + G^2/(H + \lambda_2)$, a gain ties the best
    when it is at least :func:`tie_floor` $= G^* - \epsilon S$; the node splits only if
    $G^* + \lambda_c c_{f^*} > \mathrm{min\_gain\_to\_split} + \epsilon S + (\epsilon A)^2 / (H + \lambda_2)$
    (:func:`rounding_gain`), $f^*$ the best candidate's feature: the cost penalty ``penalty`` (k,)
    chooses among the node's splits, it does not stop the growth (Mohan 2010, Eq. 6.1).
    ``missing``: (3, k), the statistics of each feature's missing rows.
    """
    best = gains.max()
    scale = abs(best) + _score(totals, params.lambda_l2)
    noise = rounding_gain(gradient_noise, totals[H], params.lambda_l2)
    if best == -np.inf:
        return None
    own_gain = best + (0.0 if penalty is None else penalty[np.unravel_index(np.argmax(gains), gains.shape)[0]])
    if not own_gain > params.min_gain_to_split + GAIN_TIE_RTOL * scale + noise:
        return None
    j, b, side = np.unravel_index(np.argmax(gains.ravel() >= tie_floor(best, scale)), gains.shape)
    f, gain = int(features[j]), float(gains[j, b, side])
    if side == 2:
        return Split(gain, f, int(b), False, True)
    if missing[COUNT, j] > 0:
        return Split(gain, f, int(b), bool(side == 1))
    left = below[COUNT, j, b]  # no missing row: a missing value later goes to the child with more rows
    return Split(gain, f, int(b), bool(left >= totals[COUNT] - left))


def _children(below, missing, totals, side):
    """The left and right statistics of every candidate of ``side``, (3, k, width) each."""
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
    (:mod:`~twinrank.reference.trees.tree`, **Ties**): sums of the same rows added in another order
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

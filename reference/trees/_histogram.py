r"""Histograms of the reference grower: per feature and bin, the sums of $g$, $h$ and 1 (``np.bincount``)."""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import COUNT, N_SLOTS, G, H


def build_histogram(binned, gradients, hessians, rows) -> np.ndarray:
    r"""Per feature and bin, the sums over ``rows`` of $g$, $h$ and 1.

    A row listed twice counts twice. O(len(rows) * n_features).

    Returns
    -------
    float64 array (n_features, 256, 3): ``[..., 0]`` sum of gradients, ``[..., 1]``
    sum of hessians, ``[..., 2]`` row count; slot ``MISSING_BIN`` holds the missing rows.
    (The grower keeps the statistics first: ``node_histogram``.)
    """
    features = np.arange(binned.shape[1])
    return np.moveaxis(node_histogram(binned, gradients, hessians, rows, features), 0, -1)


def node_histogram(binned, gradients, hessians, rows, features) -> np.ndarray:
    r"""The histogram of one node on its ``features``: (3, k, 256), the sums of $g$, $h$ and 1.

    $$\mathrm{hist}[\cdot, j, b] = \sum_{i \in \mathrm{rows},\ \mathrm{bin}(i, f_j) = b} (g_i,\ h_i,\ 1)$$

    (Ke et al. 2017, LightGBM, Alg. 1). Feature $f_j$'s bins become the slots
    $256 j + b$ of one flat array, so one ``np.bincount`` per statistic sums every feature
    at once; it adds each slot's weights in the order of ``rows``. Each statistic is a
    contiguous (k, 256) plane (``constants.G, H, COUNT``): the split search sums along the
    bins of a plane.
    """
    k = len(features)
    slots = np.arange(k) * N_SLOTS + binned[np.ix_(rows, features)]  # (n_node_rows, k): feature j's bin b at 256 j + b
    hist = np.empty((3, k, N_SLOTS))  # (3, k, 256)
    for stat, weights in ((G, gradients[rows]), (H, hessians[rows]), (COUNT, None)):
        per_slot = None if weights is None else np.repeat(weights, k)  # (n_node_rows * k,) each row's, k times
        hist[stat] = np.bincount(slots.ravel(), weights=per_slot, minlength=k * N_SLOTS).reshape(k, N_SLOTS)
    return hist

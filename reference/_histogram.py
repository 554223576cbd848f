"""Histograms of the reference grower: per feature and bin, the sums of $g$, $h$ and 1 (``np.bincount``)."""
from __future__ import annotations

import numpy as np

from .constants import N_SLOTS


def build_histogram(binned, gradients, hessians, rows) -> np.ndarray:
    r"""Per feature and bin, the sums over ``rows`` of $g$, $h$ and 1.

    One ``np.bincount`` per feature and statistic; a row listed twice counts twice.
    O(len(rows) * n_features).

    Returns
    -------
    float64 array (n_features, 256, 3): ``[..., 0]`` sum of gradients, ``[..., 1]``
    sum of hessians, ``[..., 2]`` row count; slot ``MISSING_BIN`` holds the missing rows.
    """
    node_bins = np.asfortranarray(binned[rows])  # (n_node_rows, n_features), columns contiguous
    weights = (gradients[rows], hessians[rows], None)  # None: bincount counts rows
    hist = np.empty((binned.shape[1], N_SLOTS, 3))  # (n_features, 256, 3)
    for f in range(binned.shape[1]):
        for stat, w in enumerate(weights):
            hist[f, :, stat] = np.bincount(node_bins[:, f], weights=w, minlength=N_SLOTS)
    return hist

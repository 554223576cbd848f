r"""Histograms of the reference grower: per feature and bin, the sums of $g$, $h$ and 1 (``np.bincount``)."""
from __future__ import annotations

import numpy as np

from .constants import N_SLOTS


def build_histogram(binned, gradients, hessians, rows) -> np.ndarray:
    r"""Per feature and bin, the sums over ``rows`` of $g$, $h$ and 1.

    A row listed twice counts twice. O(len(rows) * n_features).

    Returns
    -------
    float64 array (n_features, 256, 3): ``[..., 0]`` sum of gradients, ``[..., 1]``
    sum of hessians, ``[..., 2]`` row count; slot ``MISSING_BIN`` holds the missing rows.
    """
    return feature_histograms(binned, gradients, hessians, rows, np.arange(binned.shape[1]))


def feature_histograms(binned, gradients, hessians, rows, features) -> np.ndarray:
    r""":func:`build_histogram` of the features ``features`` only: (len(features), 256, 3).

    **NumPy idiom for the loop over features and bins.** The double loop
    ``for j, f in enumerate(features): for i in rows: hist[j, binned[i, f]] += (g_i, h_i, 1)``
    is one ``np.bincount`` per statistic over the keys ``j * 256 + bin`` of every
    (row, feature) pair. ``np.bincount`` adds each slot's weights in input order, so
    each slot is summed over ``rows`` in order, as the loop would.
    """
    features = np.asarray(features, dtype=np.int64)
    node_bins = binned[rows][:, features]  # (n_node_rows, k)
    keys = (node_bins + N_SLOTS * np.arange(len(features))).ravel()  # (n_node_rows * k,) j * 256 + bin
    hist = np.empty((len(features) * N_SLOTS, 3))  # (k * 256, 3)
    for stat, per_row in enumerate((gradients[rows], hessians[rows], None)):  # None: count rows
        weights = None if per_row is None else np.repeat(per_row, len(features))  # (n_node_rows * k,)
        hist[:, stat] = np.bincount(keys, weights=weights, minlength=len(hist))
    return hist.reshape(len(features), N_SLOTS, 3)

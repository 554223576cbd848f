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
    (The grower keeps the statistics first, :func:`node_histograms`.)
    """
    features = np.arange(binned.shape[1])[None]  # (1, n_features): one node, every feature
    return np.moveaxis(node_histograms(binned, gradients, hessians, [rows], features)[0], 0, -1)


def node_histograms(binned, gradients, hessians, node_rows: list, features) -> np.ndarray:
    r""":func:`build_histogram` of several nodes at once, each on its own ``k`` features.

    Parameters
    ----------
    node_rows : list of ``n_nodes`` int arrays, the rows of each node
    features : int array (n_nodes, k), the features of each node

    Returns
    -------
    float64 array (n_nodes, 3, k, 256): per node the (k, 256) planes of the sums of
    gradients, of hessians and of rows (``constants.G, H, COUNT``), each contiguous (the
    split search sums along the bins of a plane)

    Notes
    -----
    **NumPy idiom for the loops over nodes, features and rows.** The loops
    ``for node: for j, f in enumerate(features[node]): for i in rows[node]: hist[node, :, j, binned[i, f]] += (g_i, h_i, 1)``
    are one ``np.bincount`` per statistic over the keys ``(node * k + j) * 256 + bin`` of
    every (row, feature) pair. ``np.bincount`` adds each slot's weights in input order,
    so each slot is summed over its node's rows in order, as the loops would.
    """
    n_nodes, k = features.shape
    rows = np.concatenate(node_rows)  # (n_rows,) the nodes' rows one after the other
    first_slots = (np.arange(n_nodes)[:, None] * k + np.arange(k)) * N_SLOTS  # (n_nodes, k) of (node, feature)
    keys = np.concatenate([first + binned[r][:, f] for first, r, f in zip(first_slots, node_rows, features)])
    keys = keys.ravel()  # (n_rows * k,) (node * k + j) * 256 + bin
    hist = np.empty((n_nodes, 3, k, N_SLOTS))  # (n_nodes, 3, k, 256)
    for stat, per_row in enumerate((gradients[rows], hessians[rows], None)):  # None: count rows
        weights = None if per_row is None else np.repeat(per_row, k)  # (n_rows * k,)
        sums = np.bincount(keys, weights=weights, minlength=n_nodes * k * N_SLOTS)  # (n_nodes * k * 256,)
        hist[:, stat] = sums.reshape(n_nodes, k, N_SLOTS)
    return hist

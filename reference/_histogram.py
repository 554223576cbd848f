r"""Histograms of the reference grower: per feature and bin, the sums of $g$, $h$ and 1 (``np.bincount``)."""
from __future__ import annotations

import numpy as np

from .constants import N_SLOTS

PAIRS_PER_BLOCK = 1 << 16  # (row, feature) pairs per np.bincount: 0.5 MiB of keys, 0.5 MiB of weights


def build_histogram(binned, gradients, hessians, rows) -> np.ndarray:
    r"""Per feature and bin, the sums over ``rows`` of $g$, $h$ and 1.

    A row listed twice counts twice. O(len(rows) * n_features).

    Returns
    -------
    float64 array (n_features, 256, 3): ``[..., 0]`` sum of gradients, ``[..., 1]``
    sum of hessians, ``[..., 2]`` row count; slot ``MISSING_BIN`` holds the missing rows.
    (The grower keeps the statistics first: ``node_histograms``.)
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
    so each slot is summed over its node's rows in order, as the loops would. The features
    go through in blocks of about ``PAIRS_PER_BLOCK`` (row, feature) pairs (a root's 6,000
    rows: 10 features at a time), so that the keys and weights of a block stay in the
    processor's cache; a block's keys count its features from 0. A slot's sum is the same
    in any block size.
    """
    n_nodes, k = features.shape
    rows = np.concatenate(node_rows)  # (n_rows,) the nodes' rows one after the other
    bins = [binned[r][:, f] for r, f in zip(node_rows, features)]  # (len(r), k) of each node
    per_row = (gradients[rows], hessians[rows], None)  # (n_rows,) each; None: count rows
    hist = np.empty((n_nodes, 3, k, N_SLOTS))  # (n_nodes, 3, k, 256)
    width = max(1, PAIRS_PER_BLOCK // max(1, len(rows)))  # features per block
    for start in range(0, k, width):
        block = slice(start, min(start + width, k))  # the block's features j
        kb = block.stop - start
        first_slots = (np.arange(n_nodes)[:, None] * kb + np.arange(kb)) * N_SLOTS  # (n_nodes, kb)
        keys = np.concatenate([first + b[:, block] for first, b in zip(first_slots, bins)])  # (n_rows, kb)
        keys = keys.ravel()  # (n_rows * kb,) (node * kb + j - start) * 256 + bin
        for stat, weights in enumerate(per_row):
            weights = None if weights is None else np.repeat(weights, kb)  # (n_rows * kb,)
            sums = np.bincount(keys, weights=weights, minlength=n_nodes * kb * N_SLOTS)  # (n_nodes * kb * 256,)
            hist[:, stat, block] = sums.reshape(n_nodes, kb, N_SLOTS)
    return hist

"""LightGBM's bin boundaries (``src/io/bin.cpp``: ``GreedyFindBin``, ``FindBinWithZeroAsOneBin``), in NumPy.

A candidate that the defaults benchmark measured and twinrank did not take (``docs/lambdas.md``):
values at least as frequent as a mean bin get a bin of their own, the other values share the
remaining bins in runs of about equal counts, zero is a bin of its own with the negative and
positive values binned apart, and fewer than ``min_data_in_bin`` (3) values never make a bin.
Boundaries are midpoints between neighbouring distinct values, as twinrank's are.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.trees.binning import bin_sample


def bin_thresholds(X, max_bins: int = 255, subsample_for_bin: int | None = None, seed: int = 0, *,
                   min_data_in_bin: int = 3) -> list[np.ndarray]:
    """Per-feature ascending thresholds by LightGBM's rules (NaN ignored), from the rows of
    twinrank's ``bin_sample`` (the engine's signature)."""
    X = np.asarray(X)
    rows = bin_sample(len(X), subsample_for_bin, seed)
    X = X if rows is None else X[rows]
    return [_column(X[:, j], max_bins, min_data_in_bin) for j in range(X.shape[1])]


def _column(column, max_bins, min_data_in_bin):
    values, counts = np.unique(column[~np.isnan(column)].astype(np.float64), return_counts=True)
    if len(values) <= 1:
        return np.empty(0)
    n_negative, start = int(np.sum(values < 0)), int(np.searchsorted(values, 0.0, side="right"))
    nonzero = counts[:n_negative].sum() + counts[start:].sum()
    cuts = []  # i: a boundary between values[i] and values[i + 1]
    if n_negative:
        left_bins = max(1, int(counts[:n_negative].sum() / nonzero * (max_bins - 1)))
        cuts += _greedy(counts[:n_negative], left_bins, min_data_in_bin)
        if n_negative < len(values):
            cuts.append(n_negative - 1)
    if start < len(values):
        right_bins = max_bins - 1 - len(cuts)
        if start > n_negative:  # zero is present: a bin of its own
            cuts.append(start - 1)
        cuts += [start + i for i in _greedy(counts[start:], right_bins, min_data_in_bin)]
    cuts = np.unique(np.asarray(cuts, dtype=np.int64))
    return (0.5 * values[cuts] + 0.5 * values[cuts + 1])[: max_bins - 1]


def _greedy(counts, max_bins, min_data_in_bin):
    """``GreedyFindBin``: the boundaries of at most ``max_bins`` bins of values with ``counts``."""
    if max_bins <= 1:
        return []
    if len(counts) <= max_bins:
        cuts, run = [], 0
        for i in range(len(counts) - 1):
            run += counts[i]
            if run >= min_data_in_bin:
                cuts.append(i)
                run = 0
        return cuts
    total = int(counts.sum())
    max_bins = max(1, min(max_bins, total // min_data_in_bin))
    big = counts >= total / max_bins  # values with a bin of their own
    rest_bins, rest = max_bins - int(big.sum()), total - int(counts[big].sum())
    mean = rest / rest_bins if rest_bins > 0 else np.inf
    cuts, run = [], 0
    for i in range(len(counts) - 1):
        if not big[i]:
            rest -= counts[i]
        run += counts[i]
        if big[i] or run >= mean or (big[i + 1] and run >= max(1.0, mean * 0.5)):
            cuts.append(i)
            if len(cuts) >= max_bins - 1:
                break
            run = 0
            if not big[i]:
                rest_bins -= 1
                mean = rest / rest_bins if rest_bins > 0 else np.inf
    return cuts

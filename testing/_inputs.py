"""The input pieces registry rows share: exact gradients, tied scores, bins, leaf sizes, splits of queries."""
from __future__ import annotations

import importlib

import numpy as np

from twinrank._layout import twin_module

# ---------------------------------------------------------------- shared input pieces

STEP = 2.0**-8  # exact gradients: sums of a few multiples of 2**-8 are exact in any order


def exact_gradients(rng, n_rows: int):
    """Gradients in [-0.5, 0.5] and hessians in [0, 0.25], multiples of 2**-8."""
    return rng.integers(-128, 129, n_rows) * STEP, rng.integers(0, 65, n_rows) * STEP


def tied_scores(rng, n_rows: int) -> np.ndarray:
    """Model-like scores, a third of them on a coarse grid (ties inside queries)."""
    scores = rng.standard_normal(n_rows) * 2.0  # (n_rows,)
    grid = rng.random(n_rows) < 1 / 3
    scores[grid] = np.round(scores[grid] * 2) / 2
    return scores


def _reference(module: str):
    return importlib.import_module(twin_module("reference", module))


def _thresholds(data, max_bins=255):
    return _reference("binning").bin_thresholds(data.X, max_bins)


def _binned(data, max_bins=255):
    thresholds = _thresholds(data, max_bins)
    return _reference("binning").apply_bins(data.X, thresholds), thresholds


def _tree_params(**options):
    return _reference("params").TreeParams(**options)


def _min_rows(n_rows: int) -> int:
    """A leaf size that keeps trees small on big data and still splits tiny data."""
    return int(np.clip(n_rows // 200, 1, 20))


def _model_leaf(n_rows: int) -> int:
    """Estimators' leaf size: 10 to 20 rows, as the estimator agreement tests use (fewer
    near-ties between splits that cut a node into the same rows)."""
    return int(np.clip(n_rows // 100, 10, 20))


def train_test(data, rng, test_fraction=0.25):
    """Split the queries at random into training and test sets (both the whole data if one query)."""
    n = data.n_queries
    if n < 2:
        return data, data
    order = rng.permutation(n)  # (n_queries,)
    n_test = max(1, int(round(test_fraction * n)))
    return data.take_queries(np.sort(order[n_test:])), data.take_queries(np.sort(order[:n_test]))

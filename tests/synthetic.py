"""Small synthetic ranking data made by the tests themselves (no files needed)."""
import numpy as np

from twinrank.reference.io.data import Dataset


def ranking_data(n_queries=30, max_docs=12, n_features=6, *, seed=0, missing=0.0, levels=None):
    """Queries of 1..max_docs documents, labels 0-4 driven by two features plus noise.

    ``levels`` rounds features to that many distinct values (few bins, exact ties);
    ``missing`` is the fraction of feature values set to NaN.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.random((n, n_features))
    if levels is not None:
        X = np.round(X * (levels - 1)) / (levels - 1)
    utility = 2.0 * X[:, 0] + X[:, 1 % n_features] + 0.5 * rng.standard_normal(n)
    y = np.clip(np.floor(utility * 1.5), 0, 4)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    offsets = np.r_[0, np.cumsum(sizes)]
    return Dataset(X.astype(np.float32), y, offsets)

r"""Every random choice of twinrank, drawn in one place.

Randomness lives outside the kernels (docs/agreement.md): each algorithm draws what it
needs from one ``numpy.random.Generator`` through these functions, in an order
its docstring documents, and hands the kernels plain index or mask arrays. So
the same seed gives the same model in both twins, on any number of threads.

Each function draws nothing when there is nothing to choose (e.g. a fraction of
1.0), so turning an option off does not shift the stream of later draws.
"""
from __future__ import annotations

import numpy as np


def make_rng(seed) -> np.random.Generator:
    """The generator of a training run: ``numpy.random.default_rng(seed)``."""
    return np.random.default_rng(seed)


def subset_size(n: int, fraction: float) -> int:
    """How many of ``n`` items a ``fraction`` keeps: ``max(1, round(fraction * n))``."""
    return max(1, min(n, int(round(fraction * n))))


def feature_masks(rng: np.random.Generator, n_nodes: int, n_features: int, k: int) -> np.ndarray:
    r"""k random features for each of ``n_nodes`` nodes, as a boolean mask.

    Row ``i`` is the feature subset of node ``i`` (node ids in creation order),
    drawn uniformly without replacement: the ``k`` smallest of ``n_features``
    uniform keys. Returns ``(n_nodes, n_features)`` bool; all True, drawing
    nothing, when ``k >= n_features``.
    """
    if k >= n_features:
        return np.ones((n_nodes, n_features), dtype=bool)
    keys = rng.random((n_nodes, n_features))  # (n_nodes, n_features)
    chosen = np.argsort(keys, axis=1, kind="stable")[:, :k]  # (n_nodes, k)
    mask = np.zeros((n_nodes, n_features), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


def subsample(rng: np.random.Generator, n: int, fraction: float) -> np.ndarray:
    """Sorted indices of ``subset_size(n, fraction)`` of ``range(n)``, without replacement.

    Used for rows (stochastic GBRT) and for whole queries (``query_subsample``).
    Returns ``arange(n)``, drawing nothing, when ``fraction >= 1``.
    """
    if fraction >= 1.0:
        return np.arange(n, dtype=np.int64)
    m = subset_size(n, fraction)
    return np.sort(rng.permutation(n)[:m]).astype(np.int64)


def dropout_set(rng: np.random.Generator, n_trees: int, k: int) -> np.ndarray:
    """Sorted indices of ``k`` of the ensemble's ``n_trees`` trees, uniformly without replacement.

    DART's dropout set $D$ (X-DART, Alg. 1): ``rng.permutation(n_trees)[:k]``, sorted.
    Draws nothing when ``k == 0``.
    """
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(rng.permutation(n_trees)[:k]).astype(np.int64)


def bootstrap(rng: np.random.Generator, n: int) -> np.ndarray:
    """Sorted indices of ``n`` draws from ``range(n)`` with replacement (a bootstrap sample)."""
    return np.sort(rng.integers(0, n, size=n)).astype(np.int64)


def sign_flips(rng: np.random.Generator, n_permutations: int, n: int, chunk_values: int = 1 << 20):
    """``n_permutations`` random sign vectors over ``n`` items, in chunks of rows (a generator).

    Each chunk is a bool array ``(m, n)``, True where the sign is flipped (probability
    1/2): ``rng.random((m, n)) < 0.5``, with ``m * n`` at most ``chunk_values`` (at least
    one row). Doubles use 64 bits of the stream each, so the chunking does not change
    the draws: the rows are those of one ``rng.random((n_permutations, n))``.
    """
    rows = max(1, chunk_values // max(n, 1))
    for start in range(0, n_permutations, rows):
        yield rng.random((min(rows, n_permutations - start), n)) < 0.5

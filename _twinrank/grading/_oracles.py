r"""What grades each exercise: the fast twin's answer, and answers as named arrays.

An exercise whose function is the fast twin's own (``node_histogram`` is
``twinrank.fast.trees.tree.build_histogram``) is graded by that function. Where the library's
function has a larger signature than a student should write (metrics of many queries
under a :class:`~twinrank.reference.evaluation.conventions.Convention`, the split search of every
feature, LambdaRank's options), the oracle here is a thin wrapper: it builds the
library's arguments from the exercise's, calls the fast twin once, and takes out the
part the exercise asks for. Nothing here computes an answer itself.

Every oracle looks the fast function up when it is called (as the twin registry does),
so ``twinrank exercise list`` and ``start`` never load numba.
"""
from __future__ import annotations

import importlib

import numpy as np

from twinrank._layout import twin_module


def fast(module: str, name: str):
    """``twinrank.fast.<module>.<name>``, looked up now."""
    return getattr(importlib.import_module(twin_module("fast", module)), name)


def _one_query(labels) -> np.ndarray:
    return np.array([0, len(labels)], dtype=np.int64)


def _convention(**knobs):
    from twinrank.reference.evaluation.conventions import Convention

    return Convention(**knobs)


# ---------------------------------------------------------------- lesson 1

def dcg(labels, scores, k=None, gain="exp2", discount="log2"):
    """``fast.metrics.dcg`` of one query under ``Convention(gain=gain, discount=discount)``."""
    return fast("metrics", "dcg")(labels, scores, _one_query(labels), k=k,
                                  convention=_convention(gain=gain, discount=discount))[0]


def average_precision(labels, scores, k=None):
    """``fast.metrics.average_precision`` of one query, ``convention="ranklib"``."""
    return fast("metrics", "average_precision")(labels, scores, _one_query(labels), k=k, convention="ranklib")[0]


def err(labels, scores, k=None, max_label=4.0):
    """``fast.metrics.err`` of one query under ``Convention(err_max_label=max_label)``."""
    return fast("metrics", "err")(labels, scores, _one_query(labels), k=k,
                                  convention=_convention(err_max_label=max_label))[0]


# ---------------------------------------------------------------- lesson 2

def bin_thresholds(column, max_bins):
    """``fast.binning.bin_thresholds`` of a one-column matrix."""
    return fast("binning", "bin_thresholds")(np.asarray(column)[:, None], max_bins)[0]


def node_histogram(binned, gradients, hessians, rows):
    """``fast.tree.build_histogram`` itself."""
    return fast("tree", "build_histogram")(binned, gradients, hessians, rows)


def best_split(hist, n_bins, lambda_l2, min_rows):
    """``fast.tree.find_best_split`` of a node with one feature (no cost penalty, no hessian floor)."""
    from twinrank.reference.params import TreeParams

    params = TreeParams(lambda_l2=lambda_l2, min_samples_leaf=min_rows, min_hessian_in_leaf=0.0)
    split = fast("tree", "find_best_split")(hist[None], hist.sum(axis=0), np.array([n_bins]), np.array([True]),
                                            np.zeros(1), params, min_rows)
    return None if split is None else (split.gain, split.bin_threshold, split.missing_left)


# ---------------------------------------------------------------- lesson 3

def newton_leaf_value(gradients, hessians, lambda_l2=0.0):
    """The root value of ``fast.tree.grow_tree`` on one constant feature: a tree of one leaf."""
    from twinrank.reference.params import TreeParams

    n = len(gradients)
    params = TreeParams(max_leaves=2, min_samples_leaf=1, min_hessian_in_leaf=0.0, lambda_l2=lambda_l2)
    tree = fast("tree", "grow_tree")(np.zeros((n, 1), dtype=np.uint8), gradients, hessians,
                                     [np.zeros(0)], params)
    return tree.value[0]


def subsample(seed, n, fraction):
    """``fast.sampling.subsample`` with ``numpy.random.default_rng(seed)``."""
    return fast("sampling", "subsample")(np.random.default_rng(seed), n, fraction)


# ---------------------------------------------------------------- lesson 4

def ndcg_swap_delta(labels, scores, k=None):
    """``|fast.metrics.ndcg`` after the swap ``-`` before``|``, all n^2 swaps in one call (one query each)."""
    labels = np.asarray(labels, dtype=np.float64)
    n = len(labels)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)  # (n,)
    swapped = np.tile(-position.astype(np.float64), (n, n, 1))  # (n, n, n) scores -position: the same ranking
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    swapped[i, j, i], swapped[i, j, j] = -position[j], -position[i]  # documents i and j trade positions
    ndcg = fast("metrics", "ndcg")
    offsets = np.arange(n * n + 1, dtype=np.int64) * n
    after = ndcg(np.tile(labels, n * n), swapped.ravel(), offsets, k=k).reshape(n, n)
    before = ndcg(labels, -position.astype(np.float64), _one_query(labels), k=k)[0]
    return np.abs(after - before)


def lambdarank_lambdas(labels, scores, sigma=1.0):
    """``-g, h`` of ``fast.objectives.lambdarank`` for one query, NDCG, no truncation or normalisation."""
    g, h = fast("objectives", "lambdarank")(labels, scores, _one_query(labels), metric="ndcg", sigma=sigma)
    return -g, h


# ---------------------------------------------------------------- lesson 5

def predict_tree(feature, threshold, left, right, missing, value, X):
    """``fast.predict.predict_tree`` of the Tree these node arrays are."""
    from twinrank.reference.io.model import Tree

    n = len(feature)
    tree = Tree(feature=feature, threshold=threshold, bin_threshold=np.full(n, -1), left=left, right=right,
                missing=missing, value=value, gain=np.zeros(n), count=np.zeros(n), hessian_sum=np.zeros(n))
    return fast("predict", "predict_tree")(tree, X)


def bootstrap_rows(seed, n):
    """``fast.sampling.bootstrap`` with ``numpy.random.default_rng(seed)``."""
    return fast("sampling", "bootstrap")(np.random.default_rng(seed), n)


# ---------------------------------------------------------------- lesson 6

def paired_t_statistic(a, b):
    """``(t_statistic, df)`` of ``fast.stats.paired_t_test``."""
    result = fast("stats", "paired_t_test")(a, b)
    return result.t_statistic, result.df


# ---------------------------------------------------------------- lesson 7

def minmax_per_query(scores, query_offsets):
    """``fast.bag_rules.minmax_per_query`` itself."""
    return fast("bag_rules", "minmax_per_query")(scores, query_offsets)


# ---------------------------------------------------------------- answers as named arrays

def number(result) -> dict:
    """One number."""
    value = np.asarray(result, dtype=np.float64)
    if value.size != 1:
        raise ValueError(f"expected one number, got an array of shape {value.shape}")
    return {"value": value.reshape(1)}


def array(result) -> dict:
    """One array."""
    return {"value": np.asarray(result)}


def split(result) -> dict:
    """None, or ``(gain, bin_threshold, missing_left)``."""
    if result is None:
        return {"found": np.array([False])}
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise ValueError(f"expected None or a tuple (gain, bin_threshold, missing_left), got {result!r}")
    gain, b, missing_left = result
    return {"found": np.array([True]), "gain": number(gain)["value"], "bin_threshold": np.array([int(b)]),
            "missing_left": np.array([bool(missing_left)])}


def statistic_df(result) -> dict:
    """``(t, df)``."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ValueError(f"expected a tuple (t, df), got {type(result).__name__}")
    return {"t": number(result[0])["value"], "df": np.array([int(result[1])])}


def lambdas_hessians(result) -> dict:
    """``(lambdas, hessians)``."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ValueError(f"expected a tuple (lambdas, hessians), got {type(result).__name__}")
    return {"lambdas": np.asarray(result[0]), "hessians": np.asarray(result[1])}

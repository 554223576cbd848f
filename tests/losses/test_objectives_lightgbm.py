"""LambdaRank gradients against LightGBM's own (``objective="lambdarank"``), through one tree.

LightGBM does not expose its lambdarank gradients, but one boosting round shows them:
with ``learning_rate=1``, ``lambda_l2=0`` and no minimum leaf size, each leaf of the
first tree stores ``leaf_weight`` = the sum of the hessians of its rows and
``leaf_value`` = -(sum of gradients) / (sum of hessians). The only feature is the row
index, with one bin per row and ``num_leaves`` = the number of rows, so the tree keeps
splitting until the rows with nonzero hessians have leaves of their own, except rows
with equal g/h (no gain in splitting them) and one row that shares the leaf of the rows
with zero hessian (``min_data_in_leaf=0`` because LightGBM estimates leaf counts from
hessians, which fails when hessians differ widely). ``init_score`` sets the
scores the gradients are taken at; ``pred_leaf`` tells which rows share a leaf. For
every leaf we check both sums against ours: a per-row comparison in all but name.

What differs, and how the tests account for it:

* LightGBM reads $\\rho$ from a table of $2^{20}$ sigmoid values over
  $[-25/\\sigma, 25/\\sigma]$: relative error up to $4.8 \\cdot 10^{-5}$ per pair, and it
  stores gradients as float32. Hence the tolerances below (conventions that differ
  change the sums by factors, not by $10^{-4}$).
* ``lambdarank_truncation_level=T`` keeps the pairs with one document in the top T, as
  our ``truncation=T``, but LightGBM normalises by the ideal DCG@T while discounting
  every position (never cut at T). So LightGBM's lambdas are ours with
  ``k=None, truncation=T`` times $\\mathrm{IDCG}/\\mathrm{IDCG@T}$ of each query.
* ``lambdarank_norm=True`` is our ``normalize=True``.
"""
import numpy as np
import pytest

from twinrank.fast.losses import objectives as fast
from twinrank.reference.losses import objectives as ref

lgb = pytest.importorskip("lightgbm")

H_RTOL = 2e-4
G_RTOL, G_ATOL_OF_MAX = 2e-4, 2e-4  # G can cancel within a leaf: absolute part relative to max |g|


def letor_problem(seed):
    """Labels 0..3 and scores on a 1/4 grid (ties); one query of one document, one with
    a single label, one without relevant document, the others random."""
    rng = np.random.default_rng(seed)
    sizes = np.r_[1, 4, 3, rng.integers(2, 9, 5)]
    y = rng.integers(0, 4, sizes.sum()).astype(np.float64)
    y[1:5] = 2.0
    y[5:8] = 0.0
    scores = rng.integers(-8, 9, sizes.sum()) / 4.0
    return y, scores, sizes


def lightgbm_leaf_sums(y, scores, sizes, weight=None, **params):
    """(leaf of each row, {leaf: (sum g, sum h)}) of LightGBM's first lambdarank tree (rows weighted by ``weight``)."""
    n = len(y)
    X = np.arange(n, dtype=np.float64)[:, None]
    data = lgb.Dataset(X, y, group=sizes, init_score=scores, weight=weight,
                       params={"min_data_in_bin": 1, "max_bin": n + 1, "feature_pre_filter": False,
                               "verbose": -1})
    booster = lgb.train(
        {"objective": "lambdarank", "num_leaves": n, "min_data_in_leaf": 0,
         "min_sum_hessian_in_leaf": 1e-9, "lambda_l2": 0.0, "learning_rate": 1.0,
         "num_threads": 1, "deterministic": True, "verbose": -1, **params},
        data, num_boost_round=1)
    sums = {}

    def walk(node):
        if "leaf_index" in node:
            sums[node["leaf_index"]] = (-node["leaf_value"] * node["leaf_weight"], node["leaf_weight"])
        else:
            walk(node["left_child"])
            walk(node["right_child"])

    walk(booster.dump_model()["tree_info"][0]["tree_structure"])
    return booster.predict(X, pred_leaf=True)[:, 0], sums


def assert_leaf_sums_match(leaf, sums, g, h):
    active_leaves = np.unique(leaf[h > 0])
    assert 2 * len(active_leaves) >= np.sum(h > 0), "the tree should (nearly) isolate the rows"
    for index, (lgb_g, lgb_h) in sums.items():
        rows = leaf == index
        np.testing.assert_allclose(lgb_h, h[rows].sum(), rtol=H_RTOL, atol=1e-12)
        np.testing.assert_allclose(lgb_g, g[rows].sum(), rtol=G_RTOL, atol=G_ATOL_OF_MAX * np.abs(g).max())


def ideal_dcg(labels, k=None):
    gains = np.sort(np.exp2(labels) - 1.0)[::-1][:k]
    return np.sum(gains / np.log2(np.arange(len(gains)) + 2.0))


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_whole_list_ndcg_matches_lightgbm(twin, sigma, normalize, seed):
    """NDCG over the whole list: LightGBM with a truncation level above every query size."""
    y, scores, sizes = letor_problem(seed)
    leaf, sums = lightgbm_leaf_sums(y, scores, sizes, sigmoid=sigma, lambdarank_norm=normalize,
                                    lambdarank_truncation_level=1000)
    g, h = twin.lambdarank(y, scores, np.r_[0, np.cumsum(sizes)], sigma=sigma, normalize=normalize)
    assert_leaf_sums_match(leaf, sums, g, h)


@pytest.mark.parametrize("truncation", [1, 2, 3, 5])
def test_truncation_matches_lightgbm_up_to_ideal_dcg_at_truncation(truncation):
    """LightGBM's truncation = ours with k=None, rescaled by IDCG / IDCG@T per query."""
    y, scores, sizes = letor_problem(2)
    offsets = np.r_[0, np.cumsum(sizes)]
    leaf, sums = lightgbm_leaf_sums(y, scores, sizes, lambdarank_norm=False,
                                    lambdarank_truncation_level=truncation)
    g, h = fast.lambdarank(y, scores, offsets, truncation=truncation)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        if ideal_dcg(y[lo:hi]) > 0:
            ratio = ideal_dcg(y[lo:hi]) / ideal_dcg(y[lo:hi], truncation)
            g[lo:hi] *= ratio
            h[lo:hi] *= ratio
    assert_leaf_sums_match(leaf, sums, g, h)


def test_ndcg_at_k_is_not_lightgbm_truncation():
    """The difference above is real: NDCG@T (discount cut at T) is not what LightGBM computes."""
    y, scores, sizes = letor_problem(2)
    leaf, sums = lightgbm_leaf_sums(y, scores, sizes, lambdarank_norm=False, lambdarank_truncation_level=2)
    g, h = fast.lambdarank(y, scores, np.r_[0, np.cumsum(sizes)], k=2, truncation=2)
    ours = np.array([h[leaf == index].sum() for index in sums])  # (n_leaves,)
    theirs = np.array([lgb_h for _, lgb_h in sums.values()])  # (n_leaves,)
    assert np.max(np.abs(ours - theirs)) > 0.1 * np.max(theirs)


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("normalize", [False, True])
def test_weighted_lambdas_match_lightgbms_weighted_rows(twin, normalize):
    """LightGBM weighs each document's lambda and hessian by its weight, after the query's pairs are
    summed and normalised: the boosting loss's ``weight`` (``LambdaRank(..., weight=)``)."""
    y, scores, sizes = letor_problem(3)
    offsets = np.r_[0, np.cumsum(sizes)]
    w = np.random.default_rng(3).uniform(0.25, 3.0, len(y))
    leaf, sums = lightgbm_leaf_sums(y, scores, sizes, weight=w, lambdarank_norm=normalize,
                                    lambdarank_truncation_level=1000)
    loss = twin.LambdaRank(y, offsets, weight=w, normalize=normalize)
    g, h = np.empty(len(y)), np.empty(len(y))
    loss.gradients(scores, None, g, h)
    assert_leaf_sums_match(leaf, sums, g, h)
    unweighted_g, _ = twin.lambdarank(y, scores, offsets, normalize=normalize)
    np.testing.assert_allclose(g, w * unweighted_g, rtol=1e-12, atol=1e-15)

"""Rows counted on demand (``fast/trees/_counts.py``): the fast grower's histograms sum (g, h) only, so
``min_samples_leaf`` and the missing rows are settled by the hessian proof or by counting. The
trees must stay the reference's exactly where that matters: a best split by gain that isolates
too few rows, hessians that prove nothing (zeros, negatives), missing rows of zero hessian,
three-way missing splits, on one thread or two."""
import numba
import numpy as np
import pytest

from twinrank.fast.trees import binning as fast_binning, tree as fast
from twinrank.fast.trees._counts import PROOF_SLACK, missing_columns, proof_of
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import binning as ref_binning, tree as ref

STEP = 2.0**-8  # multiples of STEP: sums exact in any order, trees comparable bit for bit


def outliers(seed, n_rows=4000, n_features=6, hessians="positive", missing=0.0):
    """Features of few values; five rows at the top of feature 0 carry large gradients, so the
    best split by gain alone cuts them off (fewer rows than a usual ``min_samples_leaf``)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 40, (n_rows, n_features)).astype(np.float32)
    g = rng.integers(-16, 17, n_rows) * STEP
    top = rng.choice(n_rows, 5, replace=False)
    X[top, 0], g[top] = 100.0, 40.0
    if hessians == "positive":
        h = rng.integers(1, 9, n_rows) * STEP
    elif hessians == "zeros":  # most rows 0 (queries without pairs): the proof holds rarely
        h = np.where(rng.random(n_rows) < 0.8, 0.0, rng.integers(1, 200, n_rows) * STEP)
    else:  # a custom objective's negative hessians: no proof at all
        h = rng.integers(-4, 9, n_rows) * STEP
    h[top] = 8 * STEP
    if missing:
        holes = rng.random(X.shape) < missing
        X[holes] = np.nan
        h[holes.any(axis=1) & (rng.random(n_rows) < 0.7)] = 0.0  # missing rows often of hessian 0
    return X, g, h


def both_twins(X, g, h, params, rows=None):
    thresholds = ref_binning.bin_thresholds(X, 255)
    expected = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, rows=rows)
    binned = fast_binning.apply_bins(X, thresholds)
    old = numba.get_num_threads()
    try:
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            grown = fast.grow_tree(binned, g, h, thresholds, params, rows=rows)
            assert grown.equals(expected), f"{n_threads} thread(s)"
    finally:
        numba.set_num_threads(old)
    return expected


@pytest.mark.parametrize("hessians", ["positive", "zeros", "negative"])
@pytest.mark.parametrize("min_samples_leaf", [1, 6, 20, 300])
def test_min_samples_leaf_decides_as_in_the_reference(hessians, min_samples_leaf):
    X, g, h = outliers(1, hessians=hessians)
    tree = both_twins(X, g, h, TreeParams(max_leaves=12, min_samples_leaf=min_samples_leaf,
                                          min_hessian_in_leaf=0.0 if hessians != "positive" else 1e-3))
    assert tree.count[tree.left == -1].min() >= min_samples_leaf
    root_children = sorted(tree.count[[tree.left[0], tree.right[0]]])
    if min_samples_leaf <= 5:  # the root cuts off the five outliers...
        assert tree.feature[0] == 0 and root_children[0] == 5
    else:  # ...which the rows rule forbids: the best split by gain alone is not taken
        assert root_children[0] >= min_samples_leaf


@pytest.mark.parametrize("missing_split", ["learn", "separate"])
@pytest.mark.parametrize("hessians", ["positive", "zeros"])
def test_missing_rows_of_zero_hessian_are_counted(missing_split, hessians):
    X, g, h = outliers(2, n_rows=3000, hessians=hessians, missing=0.08)
    for min_samples_leaf in (1, 15, 60):
        params = TreeParams(max_leaves=16, min_samples_leaf=min_samples_leaf, min_hessian_in_leaf=0.0,
                            missing_split=missing_split)
        both_twins(X, g, h, params)
        rows = np.sort(np.random.default_rng(min_samples_leaf).choice(len(g), 1700, replace=False))
        both_twins(X, g, h, params, rows=rows)


def test_a_feature_missing_only_in_unsampled_rows():
    """``has_missing`` comes from all rows of the bins; a root of sampled rows without missing
    values has none, and its candidates are those of a feature without missing rows."""
    X, g, h = outliers(3, n_rows=2000)
    X[:40, 1] = np.nan
    both_twins(X, g, h, TreeParams(max_leaves=10, min_samples_leaf=10), rows=np.arange(40, 2000))


def test_the_proof_and_its_margin():
    assert proof_of(2.0, -1e-300, 10.0, 100) == (-1.0, 0.0)  # a negative hessian: no proof
    assert proof_of(0.0, 0.0, 0.0, 100) == (-1.0, 0.0)  # all zero: nothing to prove with
    h_max, slack = proof_of(2.0, 0.0, 10.0, 100)
    assert h_max == 2.0 and slack == PROOF_SLACK * 1124 * 10.0 and 0 < slack < 1e-10


def test_missing_columns_lists_the_features_missing_somewhere():
    X = np.zeros((300, 4), np.float32)
    X[299, 1] = X[0, 3] = np.nan
    binned = fast_binning.apply_bins(X, ref_binning.bin_thresholds(X, 255))
    np.testing.assert_array_equal(missing_columns(binned), [False, True, False, True])

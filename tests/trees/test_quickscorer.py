"""The fast twin's QuickScorer gives the reference's scores bit for bit, whatever the tree shapes,
on raw features (``predict_ensemble``) and on bins (``predict_tree_binned``).

Trees are made at random, not grown: any split order, three-way missing splits,
missing rows sent left, right or to a third child, up to 64 leaves (32- and 64-bit
masks) and beyond (the walking fallback). Rows hit the thresholds exactly, sit
between neighbouring float32 values of a float64 threshold, or are NaN or infinite.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.trees import _quickscorer, predict as fast
from twinrank.reference.io.model import LEAF, Ensemble, Tree
from twinrank.reference.trees import predict as ref
from twinrank.reference.trees.binning import MISSING_BIN

N_FEATURES = 5
BIN_GRID = np.array([0, 1, 7, 8, 200, 253])  # bin thresholds; bins 0..254 hold values, 255 missing


def random_tree(rng, n_leaves, grid):
    """A tree of ``n_leaves`` leaves (or up to one more, for three-way splits) split at random."""
    feature, threshold, left, right, missing = [-1], [0.0], [LEAF], [LEAF], [LEAF]
    bin_threshold = [0]
    leaves = [0]
    while len(leaves) < n_leaves:
        k = leaves.pop(rng.integers(len(leaves)))
        three_way = rng.random() < 0.25 and len(leaves) + 3 <= max(n_leaves, 3)
        children = list(range(len(feature), len(feature) + (3 if three_way else 2)))
        for _ in children:
            feature.append(-1), threshold.append(0.0), left.append(LEAF), right.append(LEAF)
            missing.append(LEAF), bin_threshold.append(0)
        feature[k], threshold[k] = int(rng.integers(N_FEATURES)), float(rng.choice(grid))
        bin_threshold[k] = int(rng.choice(BIN_GRID))
        left[k], right[k] = children[0], children[1]
        missing[k] = children[2] if three_way else children[int(rng.integers(2))]
        leaves += children
    n = len(feature)
    return Tree(feature=feature, threshold=threshold, bin_threshold=bin_threshold, left=left,
                right=right, missing=missing, value=rng.standard_normal(n), gain=np.zeros(n),
                count=np.zeros(n), hessian_sum=np.zeros(n))


def grid_and_rows(rng, n_rows, dtype):
    """Thresholds (float64, some between float32 neighbours) and rows that probe them."""
    grid = np.round(rng.standard_normal(6), 1)
    grid = np.r_[grid, np.nextafter(grid.astype(np.float32), np.float32(1)).astype(np.float64) - 1e-12,
                 np.inf]
    pool = np.r_[grid, grid.astype(np.float32), -np.inf, np.inf, np.nan, 1e30, -1e30]
    X = rng.choice(pool, (n_rows, N_FEATURES)).astype(dtype)
    return grid, X


@given(seed=st.integers(0, 2**32 - 1), max_leaves=st.sampled_from([1, 2, 5, 32, 33, 64, 65]),
       dtype=st.sampled_from([np.float32, np.float64]),
       n_rows=st.sampled_from([1, fast.WALK_ROWS - 1, fast.WALK_ROWS, 150, 1100]))
def test_quickscorer_scores_every_tree_shape_like_the_reference(seed, max_leaves, dtype, n_rows):
    """Rows: fewer than ``WALK_ROWS`` (walked), one partial block, and blocks over two tasks (in parallel)."""
    rng = np.random.default_rng(seed)
    grid, X = grid_and_rows(rng, n_rows, dtype)
    trees = [random_tree(rng, int(rng.integers(1, max_leaves + 1)), grid) for _ in range(7)]
    trees[0] = random_tree(rng, max_leaves, grid)
    model = Ensemble(trees=trees, tree_weights=rng.uniform(0.1, 1.0, 7), base_score=0.25,
                     n_features=N_FEATURES)
    assert _quickscorer.fits(model) == (max(t.n_leaves for t in trees) <= 64)
    np.testing.assert_array_equal(fast.predict_ensemble(model, X), ref.predict_ensemble(model, X))


def float64_rows_around_float32(rng, grid, n_rows):
    """float64 rows whose rounding to float32 decides a route: each float32 next to a threshold,
    the midpoints between it and its float32 neighbours (ties round to even) and the float64
    values just beside those midpoints; NaN and infinities."""
    near = grid.astype(np.float32)
    below, above = (np.nextafter(near, np.float32(d)) for d in (-np.inf, np.inf))
    midpoints = np.r_[(near.astype(np.float64) + below) / 2, (near.astype(np.float64) + above) / 2]
    midpoints = midpoints[np.isfinite(midpoints)]
    pool = np.r_[near, midpoints, np.nextafter(midpoints, -np.inf), np.nextafter(midpoints, np.inf),
                 np.nan, np.inf, -np.inf, 1e300]
    return rng.choice(pool, (n_rows, N_FEATURES))


@given(seed=st.integers(0, 2**32 - 1), max_leaves=st.sampled_from([5, 32, 33, 65]),
       n_rows=st.sampled_from([1, fast.WALK_ROWS, 300]))
def test_float64_rows_scored_as_float32_equal_a_float32_copy(seed, max_leaves, n_rows):
    """``as_float32``: QuickScorer rounds float64 values as it reads them, the walk and the reference
    round the rows first; every route is the float32 copy's, bit for bit."""
    rng = np.random.default_rng(seed)
    grid, _ = grid_and_rows(rng, 1, np.float64)
    X = float64_rows_around_float32(rng, grid, n_rows)
    trees = [random_tree(rng, max_leaves, grid) for _ in range(5)]
    model = Ensemble(trees=trees, tree_weights=rng.uniform(0.1, 1.0, 5), base_score=0.25, n_features=N_FEATURES)
    with np.errstate(over="ignore"):  # 1e300 rounds to inf
        expected = ref.predict_ensemble(model, X.astype(np.float32))
        np.testing.assert_array_equal(ref.predict_ensemble(model, X, as_float32=True), expected)
        np.testing.assert_array_equal(fast.predict_ensemble(model, X, as_float32=True), expected)
        np.testing.assert_array_equal(fast.predict_ensemble(model, np.asfortranarray(X), as_float32=True), expected)


@given(seed=st.integers(0, 2**32 - 1), max_leaves=st.sampled_from([2, 5, 32, 33, 64, 65]),
       n_rows=st.sampled_from([150, fast.WALK_ROWS_ALONE]))
def test_binned_scores_of_one_tree_equal_the_reference(seed, max_leaves, n_rows):
    """``predict_tree_binned`` (QuickScorer on bins for trees of <= 64 leaves and at least
    ``WALK_ROWS_ALONE`` rows, else a walk) against the reference."""
    rng = np.random.default_rng(seed)
    grid, _ = grid_and_rows(rng, 1, np.float64)
    binned = rng.choice(np.r_[BIN_GRID, BIN_GRID + 1, 254, MISSING_BIN], (n_rows, N_FEATURES))
    binned = np.asfortranarray(binned.astype(np.uint8))  # the layout apply_bins returns
    tree = random_tree(rng, max_leaves, grid)
    np.testing.assert_array_equal(fast.predict_tree_binned(tree, binned),
                                  ref.predict_tree_binned(tree, binned))


@pytest.mark.parametrize("n_leaves, mask_type", [(32, np.uint32), (33, np.uint64), (64, np.uint64)])
def test_masks_are_as_wide_as_the_largest_tree_needs(n_leaves, mask_type):
    rng = np.random.default_rng(n_leaves)
    grid, _ = grid_and_rows(rng, 1, np.float64)
    tree = random_tree(rng, n_leaves, grid)
    while tree.n_leaves != n_leaves:  # a last three-way split may overshoot by one
        tree = random_tree(rng, n_leaves, grid)
    packed = _quickscorer.pack(Ensemble(trees=[tree], tree_weights=[1.0], n_features=N_FEATURES),
                               np.float64)
    assert packed[3].dtype == mask_type and packed[4].dtype == mask_type
    assert packed[5].shape == (1, np.iinfo(mask_type).bits)


def test_nodes_are_grouped_by_tree_then_by_where_nan_goes():
    """The first tree's root (feature 0) sends NaN right, its left child (feature 2) left, its
    right child (feature 1) to a third child; the second tree is a stump. On bins every node is
    in the last group."""
    tree = Tree(feature=[0, 2, 1, -1, -1, -1, -1, -1], threshold=[0.5, 0.2, 0.1, 0, 0, 0, 0, 0],
                bin_threshold=[5, 2, 1, 0, 0, 0, 0, 0], left=[1, 3, 5, -1, -1, -1, -1, -1],
                right=[2, 4, 6, -1, -1, -1, -1, -1], missing=[2, 3, 7, -1, -1, -1, -1, -1],
                value=np.arange(8.0), gain=np.zeros(8), count=np.zeros(8), hessian_sum=np.zeros(8))
    stump = random_tree(np.random.default_rng(0), 2, np.array([0.3]))
    model = Ensemble(trees=[tree, stump], tree_weights=[1.0, 1.0], n_features=N_FEATURES)
    bounds, feature, threshold, *_, used = _quickscorer.pack(model, np.float64)
    assert bounds.tolist()[0] == [0, 1, 2, 3] and bounds[1, 3] == 4
    np.testing.assert_array_equal(feature[:3], [2, 0, 1])  # NaN left, NaN right; the third child
    np.testing.assert_array_equal(threshold[:3], [0.2, 0.5, 0.1])
    assert used[[0, 1, 2]].all() and used.sum() == len(set([0, 1, 2, feature[3]]))
    bounds, *_ = _quickscorer.pack(model, np.uint8)
    assert bounds.tolist()[0] == [0, 0, 0, 3]


def test_float32_thresholds_round_down_so_routes_stay_exact():
    t = 0.1  # not a float32: float32(0.1) > 0.1
    assert np.float64(np.float32(t)) > t
    rounded = _quickscorer._thresholds_for(np.array([t, np.inf, -np.inf, 1.5]), np.float32)
    assert rounded.dtype == np.float32
    assert rounded[0] == np.nextafter(np.float32(t), np.float32(0)) and rounded[0] < t
    np.testing.assert_array_equal(rounded[1:], [np.inf, -np.inf, 1.5])


def test_leaf_bits_follow_left_third_right_order():
    """Root splits three ways; its left child splits again: leaves in order 3, 4, 2 (third), 1 (right)."""
    tree = Tree(feature=[0, 1, -1, -1, -1, -1], threshold=[0.0, 0.0, 0, 0, 0, 0], bin_threshold=np.zeros(6),
                left=[1, 4, -1, -1, -1, -1], right=[3, 5, -1, -1, -1, -1], missing=[2, 4, -1, -1, -1, -1],
                value=np.arange(6.0), gain=np.zeros(6), count=np.zeros(6), hessian_sum=np.zeros(6))
    nodes, gt, nan, leaf_order = _quickscorer._tree_masks(tree.left, tree.right, tree.missing)
    np.testing.assert_array_equal(leaf_order, [4, 5, 2, 3])
    by_node = dict(zip(nodes.tolist(), zip(gt.tolist(), nan.tolist())))
    full = 2**64 - 1
    assert by_node[0] == (full ^ 0b0111, full ^ 0b0011)  # right: clear left + third; NaN: clear left
    assert by_node[1] == (full ^ 0b0001, full)  # NaN goes left at node 1: nothing cleared

"""Room for a tree's nodes follows its rows, not max_leaves: a max_leaves of 2^31 - 1 costs what the rows can fill."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, strategies as st
from test_tree import TWIN_IDS, TWINS, binned_for, make_problem

from twinrank.reference.errors import ParameterError
from twinrank.reference.params import TreeParams
from twinrank.reference.rankers import forest as ref_forest, lambdamart as ref_lambdamart

HUGE = 2**31 - 1


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(seed=st.integers(0, 2**16), n_rows=st.integers(1, 80),
       min_samples_leaf=st.sampled_from([1, 2, 3, 7, 0.1]), missing_split=st.sampled_from(["learn", "separate"]))
def test_room_for_the_leaves_the_rows_can_fill_grows_the_same_tree(twin, seed, n_rows, min_samples_leaf,
                                                                   missing_split):
    """A tree given room for ``leaves_for(n_rows)`` leaves is the tree given room for 2^31 - 1, which
    is the tree given room for exactly as many leaves as the rows can fill, plus one."""
    X, thresholds, g, h = make_problem(seed, n_rows, 3)
    binned = binned_for(twin, X, thresholds)
    options = dict(min_samples_leaf=min_samples_leaf, min_hessian_in_leaf=0.0, missing_split=missing_split)
    huge = TreeParams(max_leaves=HUGE, **options)
    room = huge.leaves_for(n_rows)
    assert room <= max(2, n_rows // huge.min_rows_in_leaf(n_rows) + 1)
    trees = [twin.grow_tree(binned, g, h, thresholds, TreeParams(max_leaves=m, **options))
             for m in (HUGE, room, room + 5)]
    assert trees[0].n_leaves < room or room == 2
    assert trees[0].equals(trees[1]) and trees[0].equals(trees[2])


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_a_huge_max_leaves_costs_what_the_rows_fill(twin):
    X, thresholds, g, h = make_problem(1, 300, 10)
    binned = binned_for(twin, X, thresholds)
    tracemalloc.start()
    try:
        tree = twin.grow_tree(binned, g, h, thresholds, TreeParams(max_leaves=HUGE, min_samples_leaf=1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tree.n_leaves > 2
    assert peak < 64 * 2**20  # room for 2^31 leaves: a (2^32 - 1, 10) mask of 40 GiB, histograms of TiB


@pytest.mark.parametrize("estimator", [ref_lambdamart.LambdaMART, ref_forest.RandomForest])
def test_fits_with_a_huge_max_leaves_and_feature_sampling_stay_small(estimator):
    """Each node's feature subset is drawn for the nodes the rows can fill: a forest's bootstrap,
    a boosting round's subsample."""
    rng = np.random.default_rng(0)
    X, y = rng.random((300, 10)).astype(np.float32), rng.integers(0, 3, 300).astype(float)
    extra = {"bootstrap": True} if estimator is ref_forest.RandomForest else {"query_subsample": 0.5}
    tracemalloc.start()
    try:
        model = estimator(n_trees=3, max_leaves=HUGE, min_samples_leaf=5, feature_fraction=0.5, **extra).fit(
            X, y, np.repeat(np.arange(10), 30)).model_
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert model.n_trees == 3 and peak < 64 * 2**20


def test_max_leaves_beyond_int32_node_ids_is_refused():
    TreeParams(max_leaves=HUGE)
    with pytest.raises(ParameterError, match=r"max_leaves must be <= 2147483647, got 2147483648"):
        TreeParams(max_leaves=HUGE + 1)

"""Three-way splits (``missing_split="separate"``): twins, oracle by hand, routing, budget, estimators."""
import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given
from synthetic import ranking_data
from test_missing import ESTIMATORS
from test_tree import TWIN_IDS, TWINS, binned_for, grow_with, tree_jobs

from twinrank.cli import main
from twinrank.fast.rankers import forest as fast_forest
from twinrank.fast.trees import predict as fast_predict, tree as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import LEAF
from twinrank.reference.params import TreeParams
from twinrank.reference.rankers import forest
from twinrank.reference.trees import binning as ref_binning, predict as ref_predict, tree as ref
from twinrank.reference.trees.binning import MISSING_BIN

nan = np.nan
# x0: three rows in bin 0 (g = -1), three in bin 1 (g = +1), two missing (g = +2); h = 1.
X_HAND = np.array([[1], [1], [1], [2], [2], [2], [nan], [nan]], dtype=np.float32)
G_HAND = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 2.0, 2.0])


def separate(job):
    """A ``tree_jobs`` problem grown in separate mode."""
    X, thresholds, g, h, params, options = job
    return X, thresholds, g, h, dataclasses.replace(params, missing_split="separate"), options


def grow_hand(twin, **params):
    thresholds = ref_binning.bin_thresholds(X_HAND)
    return twin.grow_tree(binned_for(twin, X_HAND, thresholds), G_HAND, np.ones(8), thresholds,
                          TreeParams(missing_split="separate", **{"min_samples_leaf": 1, **params}))


def test_missing_split_is_validated():
    with pytest.raises(ParameterError, match="missing_split"):
        TreeParams(missing_split="third")
    assert TreeParams().missing_split == "learn"


@given(tree_jobs())
def test_trees_identical_in_both_twins_in_separate_mode(job):
    job = separate(job)
    tree = grow_with(ref, job)
    assert tree.equals(grow_with(fast, job))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_three_way_oracle_by_hand(twin):
    """Root candidates of x0 (G = 4, H = 8, parent score 16/8):
    three-way b = 0: 9/3 + 9/3 + 16/2 - 16/8 = 12; the best two-way one, b = 0 missing right:
    9/3 + 49/5 - 16/8 = 10.8. So left = {x0 <= 1.5}, right = {x0 > 1.5}, NaN -> node 3."""
    tree = grow_hand(twin, max_leaves=3)
    np.testing.assert_array_equal(tree.left, [1, LEAF, LEAF, LEAF])
    np.testing.assert_array_equal(tree.right, [2, LEAF, LEAF, LEAF])
    np.testing.assert_array_equal(tree.missing, [3, LEAF, LEAF, LEAF])
    assert tree.gain[0] == (-3) ** 2 / 3 + 3**2 / 3 + 4**2 / 2 - 4**2 / 8
    np.testing.assert_array_equal(tree.value, [-4 / 8, 3 / 3, -3 / 3, -4 / 2])
    np.testing.assert_array_equal(tree.count, [8, 3, 3, 2])
    X = np.array([[0.5], [1.7], [nan], [9.0]], dtype=np.float32)
    thresholds = ref_binning.bin_thresholds(X_HAND)
    for predict in (ref_predict, fast_predict):
        np.testing.assert_array_equal(predict.predict_tree(tree, X), [1.0, -1.0, -2.0, -1.0])
        np.testing.assert_array_equal(predict.predict_tree_binned(tree, binned_for(twin, X, thresholds)),
                                      predict.predict_tree(tree, X))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@pytest.mark.parametrize("params", [dict(max_leaves=2), dict(max_leaves=3, min_samples_leaf=3),
                                    dict(max_leaves=3, min_hessian_in_leaf=2.5)],
                         ids=["one-leaf-left", "missing-too-few-rows", "missing-too-little-hessian"])
def test_falls_back_to_the_two_way_split(twin, params):
    """With one leaf left in the budget, or a missing child below min rows / min hessian
    (left 3 rows, missing 2 rows of hessian 2), the root takes the best two-way candidate:
    b = 0 with missing right, gain 9/3 + 49/5 - 16/8."""
    tree = grow_hand(twin, **params)
    assert tree.left[0] == 1 and tree.right[0] == 2 and tree.missing[0] == 2
    assert tree.gain[0] == (-3) ** 2 / 3 + 7**2 / 5 - 4**2 / 8
    assert tree.n_leaves <= params["max_leaves"]


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_the_last_split_of_the_budget_is_two_way(twin):
    """Both trees split the root three-way, then node 3 (the root's missing child): three-way
    with five leaves allowed, two-way with four (one leaf left in the budget)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (12, 2)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = nan
    g = rng.integers(-4, 5, 12).astype(float)
    thresholds = ref_binning.bin_thresholds(X)
    trees = [twin.grow_tree(binned_for(twin, X, thresholds), g, np.ones(12), thresholds,
                            TreeParams(max_leaves=leaves, min_samples_leaf=1, missing_split="separate"))
             for leaves in (4, 5)]
    for tree, second_is_three_way in zip(trees, (False, True)):
        assert tree.missing[0] == 3 and tree.left[3] == 4  # root three-way, then node 3
        assert (tree.missing[3] == 6) == second_is_three_way
        assert tree.missing[3] in (4, 5, 6)
    assert trees[0].n_leaves == 4 and trees[0].n_nodes == 6
    assert trees[1].n_leaves == 5 and trees[1].n_nodes == 7


@given(tree_jobs())
def test_separate_equals_learn_without_missing_values(job):
    X, thresholds, g, h, params, options = separate(job)
    X = np.nan_to_num(X, nan=1.0)
    thresholds = ref_binning.bin_thresholds(X, 6)
    learn = (X, thresholds, g, h, dataclasses.replace(params, missing_split="learn"), options)
    assert grow_with(fast, (X, thresholds, g, h, params, options)).equals(grow_with(ref, learn))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(job=tree_jobs())
def test_separate_tree_invariants(twin, job):
    """Counts and sums add up over 2 or 3 children; ids in creation order; only nodes whose rows
    miss the split feature split three-way, the missing child holding exactly those rows."""
    X, thresholds, g, h, params, options = job = separate(job)
    tree = grow_with(twin, job)
    rows = np.arange(len(g)) if options["rows"] is None else options["rows"]
    binned = ref_binning.apply_bins(X, thresholds)[rows]
    internal = np.flatnonzero(~tree.is_leaf)
    three_way = (tree.missing[internal] != tree.left[internal]) & (tree.missing[internal] != tree.right[internal])
    assert tree.n_leaves <= params.max_leaves
    assert tree.n_nodes == 2 * tree.n_leaves - 1 - three_way.sum() <= 2 * params.max_leaves - 1
    assert np.all(tree.right[internal] == tree.left[internal] + 1)
    assert np.all(tree.missing[internal][three_way] == tree.left[internal][three_way] + 2)
    assert np.all(tree.count[1:] >= params.min_rows_in_leaf(len(rows)))
    reach = np.zeros((tree.n_nodes, len(rows)), dtype=bool)  # (n_nodes, len(rows))
    reach[0] = True
    for k in internal:
        b = binned[:, tree.feature[k]]
        is_missing = b == MISSING_BIN
        goes = np.where(is_missing, tree.missing[k], np.where(b <= tree.bin_threshold[k],
                                                              tree.left[k], tree.right[k]))
        for child in {tree.left[k], tree.right[k], tree.missing[k]}:
            reach[child] = reach[k] & (goes == child)
        if tree.missing[k] not in (tree.left[k], tree.right[k]):
            assert tree.count[tree.missing[k]] == np.count_nonzero(reach[k] & is_missing) > 0
    np.testing.assert_array_equal(tree.count, reach.sum(axis=1))
    np.testing.assert_array_equal(tree.hessian_sum, reach @ h[rows])
    np.testing.assert_array_equal(tree.count[0], tree.count[tree.is_leaf].sum())


def has_three_way_split(trees):
    return any(np.any((t.left >= 0) & (t.missing != t.left) & (t.missing != t.right)) for t in trees)


def trees_of(model):
    """Every tree of a fitted model (a McRank model: of every classifier; IGBRT: its forest's too)."""
    models = getattr(model, "classifiers", [model])
    trees = [t for m in models for t in m.trees]
    for m in models:
        if m.init_model is not None:
            trees += m.init_model.trees
    return trees


@pytest.mark.parametrize("ref_cls, fast_cls, kw", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_estimator_trains_saves_loads_and_scores_in_separate_mode(ref_cls, fast_cls, kw,
                                                                        tmp_path):
    train = ranking_data(n_queries=12, n_features=4, seed=5, missing=0.25, levels=5)
    test = ranking_data(n_queries=4, n_features=4, seed=6, missing=0.25, levels=5)
    for cls in (ref_cls, fast_cls):
        est = cls(missing="separate", **kw).fit(train)
        model = est.model_
        assert has_three_way_split(trees_of(model))
        if cls in (forest.IGBRT, fast_forest.IGBRT):
            assert has_three_way_split(model.init_model.trees)  # the forest grows three-way too
        est.save(tmp_path / "model.json")
        for other in (ref_cls, fast_cls):  # cross-feeding: each twin scores each twin's file
            loaded = other.load(tmp_path / "model.json")
            assert loaded.missing == "separate"
            np.testing.assert_array_equal(loaded.predict(test), est.predict(test))


def test_cli_missing_separate(tmp_path):
    data = ranking_data(n_queries=10, n_features=4, seed=1, missing=0.3, levels=5)
    write_letor(data, tmp_path / "train.txt")
    model = tmp_path / "m.json"
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(model),
                 "--algorithm", "gbrt", "--trees", "3", "--min-samples-leaf", "2",
                 "--missing", "separate", "--quiet"]) == 0
    stored = json.loads(model.read_text())
    assert "missing" not in stored and stored["params"]["missing"] == "separate"

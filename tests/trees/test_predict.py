"""Prediction: raw and binned routes agree, the twins score each other's trees, JSON round trips."""
import numba
import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.trees import binning as fast_binning, predict as fast, tree as fast_tree
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import binning as ref_binning, predict as ref, tree as ref_tree

TWINS = [ref, fast]
TWIN_IDS = ["reference", "fast"]


def grown_trees(seed, n_rows=120, n_features=4, n_trees=3, max_leaves=6):
    """Raw features with NaNs, their thresholds, and trees grown by BOTH twins on them."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n_rows, n_features)), 1).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    thresholds = ref_binning.bin_thresholds(X, 12)
    trees = []
    for t in range(n_trees):
        g = rng.integers(-128, 129, n_rows) / 256.0
        params = TreeParams(max_leaves=max_leaves, min_samples_leaf=3)
        trees.append(ref_tree.grow_tree(ref_binning.apply_bins(X, thresholds), g, np.ones(n_rows),
                                        thresholds, params))
        trees.append(fast_tree.grow_tree(fast_binning.apply_bins(X, thresholds), -g, np.ones(n_rows),
                                         thresholds, params))
    return X, thresholds, trees


def probe_rows(X, thresholds, seed):
    """New rows made of the thresholds themselves (x == t routes left), NaNs and far values."""
    rng = np.random.default_rng(seed)
    pool = [np.r_[t, -1e30, 1e30, np.nan] for t in thresholds]
    return np.column_stack([rng.choice(p, 200) for p in pool]).astype(X.dtype)


@given(seed=st.integers(0, 2**32 - 1))
def test_twins_score_each_others_trees_identically(seed):
    X, thresholds, trees = grown_trees(seed)
    for rows in (X, probe_rows(X, thresholds, seed), probe_rows(X, thresholds, seed).astype(np.float64)):
        for tree in trees:
            np.testing.assert_array_equal(ref.apply_tree(tree, rows.copy()), fast.apply_tree(tree, rows.copy()))
            np.testing.assert_array_equal(ref.predict_tree(tree, rows.copy()), fast.predict_tree(tree, rows.copy()))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(seed=st.integers(0, 2**32 - 1))
def test_raw_and_binned_predictions_agree_on_training_data(twin, seed):
    X, thresholds, trees = grown_trees(seed)
    binned = {ref: ref_binning, fast: fast_binning}[twin].apply_bins(X, thresholds)
    for tree in trees:
        np.testing.assert_array_equal(twin.predict_tree(tree, X), twin.predict_tree_binned(tree, binned))
        np.testing.assert_array_equal(twin.predict_tree(tree, X), tree.value[twin.apply_tree(tree, X)])
    assert twin.apply_tree(trees[0], X).dtype == np.int32


def ensemble_of(trees, seed):
    rng = np.random.default_rng(seed)
    prior = Ensemble(trees=trees[:1], tree_weights=[0.75], base_score=-0.125, n_features=4)
    return Ensemble(trees=trees[1:], tree_weights=rng.uniform(0.1, 1.0, len(trees) - 1),
                    base_score=0.3, n_features=4, init_model=prior)


@given(seed=st.integers(0, 2**32 - 1))
def test_ensemble_scores_identical_in_both_twins_and_equal_to_the_formula(seed):
    X, thresholds, trees = grown_trees(seed)
    model = ensemble_of(trees, seed)
    scores = ref.predict_ensemble(model, X.copy())
    np.testing.assert_array_equal(fast.predict_ensemble(model, X.copy()), scores)
    prior = model.init_model
    expected = (prior.base_score + prior.tree_weights[0] * ref.predict_tree(prior.trees[0], X)
                + model.base_score)
    for tree, w in zip(model.trees, model.tree_weights):
        expected = expected + w * ref.predict_tree(tree, X)
    np.testing.assert_array_equal(scores, expected)


def test_ensemble_scores_do_not_depend_on_the_thread_count():
    X, thresholds, trees = grown_trees(3, n_rows=3000, n_trees=4, max_leaves=12)
    model = ensemble_of(trees, 3)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fast.predict_ensemble(model, X)
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(fast.predict_ensemble(model, X), one)
    np.testing.assert_array_equal(ref.predict_ensemble(model, X), one)


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_json_round_trip_keeps_predictions(twin, tmp_path):
    X, thresholds, trees = grown_trees(8)
    model = ensemble_of(trees, 8)
    model.save(tmp_path / "model.json")
    loaded = Ensemble.load(tmp_path / "model.json")
    assert all(a.equals(b) for a, b in zip(model.trees, loaded.trees))
    probe = probe_rows(X, thresholds, 8)
    np.testing.assert_array_equal(twin.predict_ensemble(loaded, probe), twin.predict_ensemble(model, probe))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_infinite_threshold_round_trips(twin, tmp_path):
    """A present | missing split has threshold +inf, written to JSON as "inf"."""
    X = np.array([[5.0], [5.0], [np.nan], [np.nan]], dtype=np.float32)
    thresholds = ref_binning.bin_thresholds(X)
    tree = ref_tree.grow_tree(ref_binning.apply_bins(X, thresholds), np.array([1.0, 1, -1, -1]),
                              np.ones(4), thresholds, TreeParams(max_leaves=2, min_samples_leaf=1))
    assert tree.threshold[0] == np.inf
    Ensemble(trees=[tree], tree_weights=[1.0], n_features=1).save(tmp_path / "m.json")
    loaded = Ensemble.load(tmp_path / "m.json")
    np.testing.assert_array_equal(twin.predict_ensemble(loaded, X), [-1.0, -1.0, 1.0, 1.0])


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_an_empty_ensemble_scores_its_base_score(twin):
    model = Ensemble(base_score=0.5, n_features=2)
    np.testing.assert_array_equal(twin.predict_ensemble(model, np.zeros((3, 2), np.float32)), [0.5] * 3)


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_wrong_width_is_a_parameter_error_naming_both_widths(twin):
    X, thresholds, trees = grown_trees(1)
    model = Ensemble(trees=trees, tree_weights=np.ones(len(trees)), n_features=46)
    with pytest.raises(ParameterError, match="X has 50 features but the model was trained on 46"):
        twin.predict_ensemble(model, np.zeros((2, 50), np.float32))
    with pytest.raises(ParameterError, match="2-D"):
        twin.predict_ensemble(model, np.zeros(46, np.float32))
    used = max(int(t.feature.max()) for t in trees)
    with pytest.raises(ParameterError, match=fr"splits on column {used} \(feature f{used + 1}\)"):
        twin.predict_tree(next(t for t in trees if t.feature.max() == used), np.zeros((2, used), np.float32))

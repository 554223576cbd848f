"""The fast twin keeps each model's packed scoring layout; no changed, truncated, copied or loaded
model is ever scored with a layout made for other trees, and a tree cannot change under one."""
import copy
import dataclasses
import gc
import pickle

import numpy as np
import pytest
from test_quickscorer import N_FEATURES, grid_and_rows, random_tree

from twinrank.fast.trees import predict as fast
from twinrank.reference.io.model import TREE_FIELDS, Ensemble, Tree
from twinrank.reference.trees import predict as ref

ROWS = {"walked": fast.WALK_ROWS - 1, "quickscorer": 300}  # fewer than WALK_ROWS rows walk the trees


def model_and_rows(seed, n_trees=12, max_leaves=31, n_rows=300):
    rng = np.random.default_rng(seed)
    grid, X = grid_and_rows(rng, n_rows, np.float32)
    trees = [random_tree(rng, max_leaves, grid) for _ in range(n_trees)]
    return Ensemble(trees=trees, tree_weights=rng.uniform(0.5, 1.0, n_trees), base_score=0.5,
                    n_features=N_FEATURES), X, rng, grid


def assert_scores_like_reference(model, X):
    np.testing.assert_array_equal(fast.predict_ensemble(model, X), ref.predict_ensemble(model, X))


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
def test_a_changed_model_is_packed_again(rows):
    model, X, rng, grid = model_and_rows(1, n_rows=rows)
    assert_scores_like_reference(model, X)  # packs and keeps the layouts
    model.trees[3] = random_tree(rng, 31, grid)  # one tree replaced in the list
    assert_scores_like_reference(model, X)
    model.trees.append(random_tree(rng, 31, grid))  # a tree added, and its weight
    model.tree_weights = np.r_[model.tree_weights, 0.7]
    assert_scores_like_reference(model, X)
    model.trees, model.tree_weights = model.trees[::-1], model.tree_weights[::-1]  # the same trees reordered
    assert_scores_like_reference(model, X)
    model.trees[0] = dataclasses.replace(model.trees[0], value=model.trees[0].value * 3)  # a changed tree
    assert_scores_like_reference(model, X)
    model.tree_weights = model.tree_weights * 2  # weights and base score are never kept
    model.base_score = -1.0
    assert_scores_like_reference(model, X)
    model.trees = model.trees[:1] + [random_tree(rng, 70, grid)]  # a tree too large for QuickScorer
    model.tree_weights = model.tree_weights[:2]
    assert_scores_like_reference(model, X)


def test_a_tree_is_a_value_its_arrays_and_fields_cannot_change():
    model, X, *_ = model_and_rows(2)
    fast.predict_ensemble(model, X)
    tree = model.trees[0]
    with pytest.raises(ValueError, match="read-only"):
        tree.value[0] = 1e9
    with pytest.raises(ValueError, match="read-only"):
        tree.threshold *= 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        tree.left = tree.right
    assert_scores_like_reference(model, X)


def test_a_tree_owns_its_arrays_and_so_do_its_copies():
    model, *_ = model_and_rows(3, n_trees=1)
    fields = {name: np.array(getattr(model.trees[0], name)) for name, _ in TREE_FIELDS}
    tree = Tree(**fields)
    fields["value"][:] = 123.0  # the caller's array, still writable, is not the tree's
    assert not np.any(tree.value == 123.0) and not tree.value.flags.writeable
    for other in (copy.copy(tree), copy.deepcopy(tree), pickle.loads(pickle.dumps(tree))):
        assert other.equals(tree) and not other.value.flags.writeable and not other.left.flags.writeable


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
def test_truncated_copied_and_loaded_models_score_their_own_trees(rows, tmp_path):
    model, X, *_ = model_and_rows(4, n_rows=rows)
    assert_scores_like_reference(model, X)
    for n_trees in (5, 0, 12, 1):
        assert_scores_like_reference(model.truncated(n_trees), X)
    assert_scores_like_reference(copy.deepcopy(model), X)
    model.save(tmp_path / "model.json")
    loaded = Ensemble.load(tmp_path / "model.json")
    assert_scores_like_reference(loaded, X)
    np.testing.assert_array_equal(fast.predict_ensemble(loaded, X), fast.predict_ensemble(model, X))


def test_an_init_model_is_packed_on_its_own():
    model, X, *_ = model_and_rows(5)
    outer = dataclasses.replace(model.truncated(4), init_model=model.truncated(9))
    assert_scores_like_reference(outer, X)
    outer.init_model = model.truncated(2)
    assert_scores_like_reference(outer, X)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, bool])
@pytest.mark.parametrize("n_rows", [0, 1, fast.WALK_ROWS - 1, fast.WALK_ROWS, 300])
def test_every_row_count_and_dtype_scores_like_the_reference(dtype, n_rows):
    model, X, *_ = model_and_rows(6, n_rows=n_rows)
    if np.dtype(dtype).kind != "f":  # whole numbers around the thresholds
        X = np.clip(np.nan_to_num(X), -3, 3).round()
    X = X.astype(dtype)
    scores = fast.predict_ensemble(model, X)
    assert scores.shape == (n_rows,) and scores.dtype == np.float64
    np.testing.assert_array_equal(scores, ref.predict_ensemble(model, X))


def test_one_model_scores_float32_and_float64_rows_with_their_own_layouts():
    """float32 rows compare against thresholds rounded down to float32; float64 rows against the
    thresholds themselves: one model keeps a layout of each."""
    model, X, *_ = model_and_rows(7)
    for rows in (X.astype(np.float64), X, X.astype(np.float64) + 1e-9, X):
        assert_scores_like_reference(model, rows)


def test_a_layout_goes_with_its_model():
    model, X, *_ = model_and_rows(8)
    fast.predict_ensemble(model, X)
    key = id(model)
    assert key in fast._KEPT
    del model
    gc.collect()
    assert key not in fast._KEPT

"""Random forests and IGBRT in both twins: same trees, CART leaves, the draws, IGBRT = forest + boosting."""
import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.rankers import forest as fast_forest
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import TreeParams
from twinrank.reference.rankers import forest as ref_forest
from twinrank.reference.sampling import make_rng
from twinrank.reference.trees.binning import apply_bins, bin_thresholds
from twinrank.reference.trees.predict import apply_tree, predict_tree
from twinrank.reference.trees.tree import grow_tree

FOREST = dict(n_trees=5, max_leaves=64, min_samples_leaf=3, feature_fraction=0.5)
IGBRT = dict(n_trees=4, learning_rate=0.3, max_leaves=6, min_samples_leaf=10, rf_n_trees=4,
             rf_max_leaves=32, rf_min_samples_leaf=3, rf_feature_fraction=0.5)


def same_forest(a: Ensemble, b: Ensemble):
    """Bit-equal trees: forest leaves are means of integer labels, sums exact in both twins."""
    assert a.n_trees == b.n_trees and a.base_score == b.base_score
    np.testing.assert_array_equal(a.tree_weights, b.tree_weights)
    assert all(s.equals(t) for s, t in zip(a.trees, b.trees))


@pytest.mark.parametrize("options", [
    {},
    {"bootstrap": False, "query_subsample": 0.5, "seed": 3},
    {"query_subsample": 0.7, "feature_fraction": 0.2, "seed": 4},
    {"max_depth": 3, "min_samples_leaf": 1},
])
def test_both_twins_grow_the_same_forest(options):
    # Integer labels: every G and H is an exact integer in both twins, so even exact gain ties
    # between features resolve the same way (lowest feature, then lowest bin).
    train = ranking_data(seed=1, n_queries=30, max_docs=20, missing=0.1, levels=6)
    ref = ref_forest.RandomForest(**{**FOREST, **options}).fit(train)
    fast = fast_forest.RandomForest(**{**FOREST, **options}).fit(train)
    same_forest(ref.model_, fast.model_)
    np.testing.assert_array_equal(ref.predict(train), fast.predict(train))


def test_one_tree_without_sampling_is_one_cart_tree_of_mean_labels():
    """RF with T=1, no bootstrap, all features = grow_tree on g = -y, h = 1 (leaf = mean label)."""
    train = ranking_data(seed=2, n_queries=25)
    rf = ref_forest.RandomForest(n_trees=1, max_leaves=40, min_samples_leaf=2, feature_fraction=1.0,
                                 bootstrap=False).fit(train)
    thresholds = bin_thresholds(train.X, 255)
    cart = grow_tree(apply_bins(train.X, thresholds), -train.y, np.ones(train.n_rows), thresholds,
                     TreeParams(max_leaves=40, min_samples_leaf=2, min_hessian_in_leaf=0.0))
    assert rf.model_.trees[0].equals(cart) and rf.model_.tree_weights.tolist() == [1.0]
    leaf = apply_tree(cart, train.X)  # (n_rows,)
    for k in np.unique(leaf):
        assert cart.value[k] == pytest.approx(train.y[leaf == k].mean(), rel=1e-12)


def test_bootstrap_leaves_are_means_over_the_drawn_rows_counting_repeats():
    train = ranking_data(seed=3, n_queries=25)
    est = fast_forest.RandomForest(n_trees=1, max_leaves=16, min_samples_leaf=5, seed=6).fit(train)
    rows, _ = ref_forest.tree_sample(make_rng(6), train, est.forest_params())  # the first draw
    assert len(rows) == train.n_rows and len(np.unique(rows)) < train.n_rows  # repeats
    f = est.model_.trees[0]
    leaf = apply_tree(f, train.X[rows])  # (n_rows,) leaf of every drawn row
    np.testing.assert_allclose(f.value[np.unique(leaf)],
                               [train.y[rows][leaf == k].mean() for k in np.unique(leaf)], rtol=1e-12)
    assert f.count[0] == train.n_rows


def test_query_subsample_draws_whole_queries_per_tree():
    train = ranking_data(seed=4, n_queries=40)
    est = fast_forest.RandomForest(n_trees=3, max_leaves=8, bootstrap=False, query_subsample=0.25,
                                   seed=2).fit(train)
    rng = make_rng(2)
    for f in est.model_.trees:
        rows, _ = ref_forest.tree_sample(rng, train, est.forest_params())
        queries = np.unique(np.searchsorted(train.query_offsets, rows, side="right") - 1)
        assert len(queries) == 10 and len(rows) == train.query_sizes[queries].sum() == f.count[0]


def test_forest_scores_the_mean_of_its_trees():
    train, test = ranking_data(seed=5), ranking_data(seed=6)
    est = fast_forest.RandomForest(**FOREST).fit(train)
    mean = np.mean([predict_tree(f, test.X) for f in est.model_.trees], axis=0)
    np.testing.assert_allclose(est.predict(test), mean, rtol=1e-12, atol=1e-15)
    assert est.model_.base_score == 0.0 and est.model_.algorithm == "random_forest"


def test_same_seed_same_forest_on_any_thread_count_and_trees_at_once(monkeypatch):
    train = ranking_data(seed=7, n_queries=40)
    options = dict(FOREST, n_trees=20, query_subsample=0.8, seed=5)  # more than one batch
    one = fast_forest.RandomForest(**options, n_threads=1).fit(train).model_
    two = fast_forest.RandomForest(**options, n_threads=2).fit(train).model_
    same_forest(one, two)
    monkeypatch.setattr(fast_forest, "trees_at_once", lambda: 3)  # trees grown by a thread pool
    same_forest(one, fast_forest.RandomForest(**options).fit(train).model_)
    other_seed = fast_forest.RandomForest(**dict(options, seed=6)).fit(train).model_
    assert not all(s.equals(t) for s, t in zip(one.trees, other_seed.trees))


def test_history_records_the_forest_of_the_first_t_trees():
    train, valid = ranking_data(seed=8), ranking_data(seed=9)
    seen = []
    est = fast_forest.RandomForest(**FOREST).fit(train, eval_set=[valid],
                                                 callback=lambda i, r: seen.append(i))
    assert seen == [1, 2, 3, 4, 5] and len(est.history_["valid:ndcg@10"]) == 5
    last = fast_forest.metrics.evaluate(["ndcg@10"], valid.y, est.predict(valid), valid.query_offsets)
    assert est.history_["valid:ndcg@10"][-1] == pytest.approx(last["ndcg@10"], rel=1e-12)


def test_igbrt_both_twins_and_cross_feeding():
    train, test = ranking_data(seed=10, n_queries=30, levels=6), ranking_data(seed=11)
    ref = ref_forest.IGBRT(**IGBRT).fit(train)
    fast = fast_forest.IGBRT(**IGBRT).fit(train)
    same_forest(ref.model_.init_model, fast.model_.init_model)
    for s, t in zip(ref.model_.trees, fast.model_.trees):
        np.testing.assert_array_equal(s.feature, t.feature)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast_forest.IGBRT.predict(ref, test), ref.predict(test), rtol=1e-12)
    np.testing.assert_allclose(ref_forest.IGBRT.predict(fast, test), fast.predict(test), rtol=1e-12)


def test_igbrt_without_boosting_rounds_is_its_forest():
    train, test = ranking_data(seed=12), ranking_data(seed=13)
    igbrt = fast_forest.IGBRT(**dict(IGBRT, n_trees=0), seed=4).fit(train)
    forest = fast_forest.RandomForest(n_trees=4, max_leaves=32, min_samples_leaf=3,
                                      feature_fraction=0.5, seed=4).fit(train)
    same_forest(igbrt.model_.init_model, forest.model_)
    assert igbrt.model_.n_trees == 0
    np.testing.assert_array_equal(igbrt.predict(test), forest.predict(test))


def test_igbrt_boosts_the_residuals_of_its_forest():
    """IGBRT's first boosted leaf = eta * mean of y - RF(x) over its rows (no constant F0)."""
    train = ranking_data(seed=14, n_queries=30)
    est = ref_forest.IGBRT(**dict(IGBRT, n_trees=1)).fit(train)
    forest_scores = ref_forest.RandomForest.predict(est, train) - predict_tree(est.model_.trees[0], train.X)
    assert est.model_.base_score == 0.0 and est.model_.algorithm == "igbrt"
    leaf = apply_tree(est.model_.trees[0], train.X)
    residual_means = [np.mean((train.y - forest_scores)[leaf == k]) for k in np.unique(leaf)]
    np.testing.assert_allclose(est.model_.trees[0].value[np.unique(leaf)],
                               0.3 * np.array(residual_means), rtol=1e-9, atol=1e-12)


def test_igbrt_early_stopping_and_callback_count_forest_then_boosted_trees():
    train, valid = ranking_data(seed=15, n_queries=40), ranking_data(seed=16, n_queries=20)
    seen = []
    est = fast_forest.IGBRT(**dict(IGBRT, n_trees=40), early_stopping_rounds=3).fit(
        train, eval_set=[valid], callback=lambda i, r: seen.append(i))
    assert seen == list(range(1, len(seen) + 1)) and len(seen) > 4
    assert est.model_.n_trees == est.best_iteration_
    assert len(est.model_.init_model.history["valid:ndcg@10"]) == 4
    assert est.planned_trees() == 44


def test_save_load_keeps_the_forest_inside_the_model(tmp_path):
    train = ranking_data(seed=17, missing=0.2)
    fast = fast_forest.IGBRT(**IGBRT).fit(train)
    path = tmp_path / "igbrt.json"
    fast.save(path)
    back = ref_forest.IGBRT.load(path)
    assert back.get_params() == fast.get_params()
    assert back.model_.init_model.algorithm == "random_forest"
    np.testing.assert_array_equal(back.predict(train), ref_forest.IGBRT.predict(fast, train))
    rf = fast_forest.RandomForest(**FOREST).fit(train)
    rf.save(tmp_path / "rf.json")
    np.testing.assert_array_equal(ref_forest.RandomForest.load(tmp_path / "rf.json").predict(train),
                                  ref_forest.RandomForest.predict(rf, train))


def test_bad_parameters_are_clear_errors():
    train = ranking_data(seed=18)
    for bad, match in [({"bootstrap": "yes"}, "bootstrap"), ({"query_subsample": 0.0}, "query_subsample"),
                       ({"n_trees": 0}, "n_trees"), ({"feature_fraction": 2.0}, "feature_fraction")]:
        with pytest.raises(ParameterError, match=match):
            fast_forest.RandomForest(**bad).fit(train)
    with pytest.raises(ParameterError, match=r"forest's parameters \(rf_\*\): n_trees"):
        fast_forest.IGBRT(rf_n_trees=0).fit(train)
    with pytest.raises(ParameterError, match="eval_set"):
        fast_forest.IGBRT(early_stopping_rounds=3).fit(train)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_trains_a_random_forest_and_an_igbrt(tmp_path, engine):
    write_letor(ranking_data(seed=19, n_queries=25), tmp_path / "train.txt")
    write_letor(ranking_data(seed=20, n_queries=10), tmp_path / "valid.txt")
    common = ["--train", str(tmp_path / "train.txt"), "--quiet", "--engine", engine]
    assert main(["train", "--algorithm", "random-forest", "--model", str(tmp_path / "rf.json"),
                 "--trees", "3", "--leaves", "16", "--feature-fraction", "0.5", "--bootstrap", "false",
                 "--query-subsample", "0.5", *common]) == 0
    rf = Ensemble.load(tmp_path / "rf.json")
    assert rf.algorithm == "random_forest" and rf.n_trees == 3 and rf.params["bootstrap"] is False
    assert main(["train", "--algorithm", "igbrt", "--model", str(tmp_path / "igbrt.json"),
                 "--valid", str(tmp_path / "valid.txt"), "--trees", "20", "--leaves", "4",
                 "--early-stopping", "2", "--rf-trees", "3", "--rf-leaves", "16",
                 "--rf-feature-fraction", "0.5", "--rf-bootstrap", "true", *common]) == 0
    igbrt = Ensemble.load(tmp_path / "igbrt.json")
    assert igbrt.algorithm == "igbrt" and igbrt.init_model.n_trees == 3
    assert igbrt.params["rf_max_leaves"] == 16


@pytest.mark.parametrize("forest", [ref_forest, fast_forest])
def test_the_first_k_trees_of_a_forest_score_as_the_forest_of_k_trees(forest, tmp_path):
    """A forest is the mean of its trees, so its first k trees are the mean of those k (not k/n of it),
    in predict(n_trees=k), the model's truncated(k) and `twinrank predict --trees k` alike."""
    train, test = ranking_data(seed=2, n_queries=20), ranking_data(seed=3, n_queries=10)
    est = forest.RandomForest(**FOREST).fit(train)
    k = 3
    trees = est.model_.trees[:k]
    mean_of_k = np.mean([predict_tree(t, test.X) for t in trees], axis=0)
    np.testing.assert_allclose(est.predict(test, n_trees=k), mean_of_k, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.model_.truncated(k).tree_weights, np.full(k, 1 / k))
    est.save(tmp_path / "rf.json")
    write_letor(test, tmp_path / "test.txt")
    assert main(["predict", "--model", str(tmp_path / "rf.json"), "--data", str(tmp_path / "test.txt"),
                 "--trees", str(k), "--output", str(tmp_path / "scores.txt")]) == 0
    np.testing.assert_allclose(np.loadtxt(tmp_path / "scores.txt"), est.predict(test, n_trees=k), rtol=1e-12)

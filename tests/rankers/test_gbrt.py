"""GBRT in both twins: same trees, cross-feeding, Friedman's F0 and leaf values, the stochastic variants."""
import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.rankers import gbrt as fast_gbrt
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.rankers import gbrt as ref_gbrt
from twinrank.reference.trees.predict import apply_tree, predict_ensemble

SMALL = dict(n_trees=6, learning_rate=0.3, max_leaves=6, min_samples_leaf=10)


def same_trees(a: Ensemble, b: Ensemble):
    assert a.n_trees == b.n_trees
    np.testing.assert_array_equal(a.tree_weights, b.tree_weights)
    assert a.base_score == b.base_score
    for s, t in zip(a.trees, b.trees):
        for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
            np.testing.assert_array_equal(getattr(s, name), getattr(t, name), err_msg=name)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("options", [
    {},
    {"subsample": 0.6, "feature_fraction": 0.5, "seed": 3},
    {"subsample": 0.5, "subsample_by": "queries", "seed": 4},
    {"max_depth": 2, "max_leaves": 8},
    {"average_runs": 3, "feature_fraction": 0.5, "seed": 5},
])
def test_both_twins_grow_the_same_trees(options):
    # Continuous features and large leaves, as in test_lambdamart: near-tie splits, whose winner
    # hangs on the last bit of sums taken in another order, are unlikely.
    train = ranking_data(seed=1, n_queries=40, max_docs=30, missing=0.1)
    ref = ref_gbrt.GBRT(**{**SMALL, **options}).fit(train)
    fast = fast_gbrt.GBRT(**{**SMALL, **options}).fit(train)
    same_trees(ref.model_, fast.model_)
    np.testing.assert_allclose(ref.predict(train), fast.predict(train), rtol=1e-9, atol=1e-12)


def test_cross_feeding_each_twin_scores_the_others_model():
    train, test = ranking_data(seed=2), ranking_data(seed=3)
    ref = ref_gbrt.GBRT(**SMALL).fit(train)
    fast = fast_gbrt.GBRT(**SMALL).fit(train)
    np.testing.assert_allclose(fast_gbrt.GBRT.predict(ref, test), ref.predict(test), rtol=1e-12)
    np.testing.assert_allclose(ref_gbrt.GBRT.predict(fast, test), fast.predict(test), rtol=1e-12)


def test_same_seed_same_model_on_any_thread_count():
    train = ranking_data(seed=4)
    options = dict(SMALL, subsample=0.5, feature_fraction=0.5, average_runs=2, seed=7)
    one = fast_gbrt.GBRT(**options, n_threads=1).fit(train).model_
    two = fast_gbrt.GBRT(**options, n_threads=2).fit(train).model_
    assert one.n_trees == two.n_trees and all(s.equals(t) for s, t in zip(one.trees, two.trees))
    other_seed = fast_gbrt.GBRT(**dict(options, seed=8)).fit(train).model_
    assert not all(s.equals(t) for s, t in zip(one.trees, other_seed.trees))


def test_f0_is_the_mean_label_and_the_first_tree_fits_mean_residuals_times_the_rate():
    """Friedman 2001, Alg. 2: F0 = mean(y); leaf l of tree 1 = eta * mean of y - F0 over its rows."""
    train = ranking_data(seed=5, n_queries=30)
    eta = 0.3
    model = ref_gbrt.GBRT(n_trees=1, learning_rate=eta, max_leaves=5, min_samples_leaf=5).fit(train).model_
    f0 = train.y.mean()
    assert model.base_score == pytest.approx(f0, rel=1e-15)
    leaf = apply_tree(model.trees[0], train.X)  # (n_rows,) leaf of every row
    leaves = np.unique(leaf)
    mean_residual = np.array([np.mean(train.y[leaf == k] - f0) for k in leaves])
    np.testing.assert_allclose(model.trees[0].value[leaves], eta * mean_residual, rtol=1e-12, atol=1e-15)


def test_subsample_one_is_plain_gbrt_and_less_than_one_is_not():
    train = ranking_data(seed=6)
    plain = fast_gbrt.GBRT(**SMALL).fit(train).model_
    for by in ("rows", "queries"):
        full = fast_gbrt.GBRT(**SMALL, subsample=1.0, subsample_by=by, seed=11).fit(train).model_
        assert full.n_trees == plain.n_trees and all(s.equals(t) for s, t in zip(full.trees, plain.trees))
    stochastic = fast_gbrt.GBRT(**SMALL, subsample=0.5, seed=11).fit(train).model_
    assert stochastic.trees[0].count[0] == round(0.5 * train.n_rows)  # the root holds the round's rows
    assert not all(s.equals(t) for s, t in zip(stochastic.trees, plain.trees))


def test_averaged_with_one_run_is_the_plain_k_stochastic_run():
    train = ranking_data(seed=7)
    options = dict(SMALL, feature_fraction=0.5, subsample=0.7, seed=9)
    plain = fast_gbrt.GBRT(**options).fit(train).model_
    once = fast_gbrt.GBRT(**options, average_runs=1).fit(train).model_
    assert all(s.equals(t) for s, t in zip(once.trees, plain.trees)) and once.n_trees == plain.n_trees
    np.testing.assert_array_equal(once.tree_weights, np.ones(plain.n_trees))
    assert once.history == plain.history


def test_averaged_runs_predict_the_mean_of_the_runs_seeded_seed_plus_i():
    train, test = ranking_data(seed=8), ranking_data(seed=9)
    options = dict(SMALL, feature_fraction=0.5, seed=20, eval_train=True)
    averaged = fast_gbrt.GBRT(**options, average_runs=3).fit(train)
    runs = [fast_gbrt.GBRT(**dict(options, seed=20 + i)).fit(train) for i in range(3)]
    model = averaged.model_
    assert model.n_trees == sum(r.model_.n_trees for r in runs)
    assert all(s.equals(t) for s, t in zip(model.trees, [t for r in runs for t in r.model_.trees]))
    np.testing.assert_array_equal(model.tree_weights, np.full(model.n_trees, 1 / 3))
    mean_of_runs = np.mean([r.predict(test) for r in runs], axis=0)
    np.testing.assert_allclose(averaged.predict(test), mean_of_runs, rtol=1e-12, atol=1e-12)
    assert set(model.history) == {f"run{i}:train:ndcg@10" for i in range(3)}


def test_init_model_replaces_f0_and_is_kept_in_the_model(tmp_path):
    train = ranking_data(seed=10)
    prior = fast_gbrt.GBRT(**dict(SMALL, n_trees=3)).fit(train)
    cont = fast_gbrt.GBRT(**dict(SMALL, n_trees=3), init_model=prior).fit(train)
    assert cont.model_.base_score == 0.0 and cont.model_.init_model is prior.model_
    whole = fast_gbrt.GBRT(**SMALL).fit(train)  # 3 + 3 rounds of the same deterministic loop
    np.testing.assert_allclose(cont.predict(train), whole.predict(train), rtol=1e-9, atol=1e-12)
    path = tmp_path / "m.json"
    cont.save(path)
    np.testing.assert_array_equal(ref_gbrt.GBRT.load(path).predict(train),
                                  predict_ensemble(cont.model_, train.X))


def test_early_stopping_keeps_the_best_trees_of_each_run():
    train, valid = ranking_data(seed=11, n_queries=40), ranking_data(seed=12, n_queries=20)
    est = fast_gbrt.GBRT(n_trees=60, learning_rate=0.5, max_leaves=8, min_samples_leaf=2,
                         early_stopping_rounds=5).fit(train, eval_set=[valid])
    history = est.model_.history["valid:ndcg@10"]
    assert est.model_.n_trees == est.best_iteration_ < 60
    assert len(history) - est.best_iteration_ == 5
    with pytest.raises(ParameterError, match="eval_set"):
        fast_gbrt.GBRT(early_stopping_rounds=5).fit(train)


def test_callback_counts_the_trees_of_every_run():
    train = ranking_data(seed=13)
    seen = []
    fast_gbrt.GBRT(**SMALL, average_runs=2).fit(train, callback=lambda i, record: seen.append(i))
    assert seen == list(range(1, 13))


def test_save_load_round_trip_in_both_directions(tmp_path):
    train = ranking_data(seed=14, missing=0.2)
    fast = fast_gbrt.GBRT(**SMALL, average_runs=2, feature_fraction=0.5).fit(train)
    path = tmp_path / "model.json"
    fast.save(path)
    back = ref_gbrt.GBRT.load(path)
    assert back.get_params() == fast.get_params() and back.model_.algorithm == "gbrt"
    np.testing.assert_array_equal(back.predict(train), ref_gbrt.GBRT.predict(fast, train))


def test_bad_parameters_are_clear_errors():
    train = ranking_data(seed=15)
    for bad, match in [({"average_runs": 0}, "average_runs"), ({"subsample": 1.5}, "subsample"),
                       ({"subsample_by": "docs"}, "subsample_by"), ({"max_depth": 0}, "max_depth")]:
        with pytest.raises(ParameterError, match=match):
            fast_gbrt.GBRT(**bad).fit(train)
    with pytest.raises(TypeError):
        fast_gbrt.GBRT(10)  # keyword-only


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_trains_gbrt_with_the_stochastic_flags(tmp_path, engine, capsys):
    write_letor(ranking_data(seed=16, n_queries=25), tmp_path / "train.txt")
    model = tmp_path / f"{engine}.json"
    assert main(["train", "--algorithm", "gbrt", "--train", str(tmp_path / "train.txt"),
                 "--model", str(model), "--trees", "4", "--leaves", "4", "--min-samples-leaf", "3",
                 "--subsample", "0.7", "--subsample-by", "queries", "--feature-fraction", "0.5",
                 "--average-runs", "2", "--seed", "3", "--quiet", "--engine", engine]) == 0
    loaded = Ensemble.load(model)
    assert loaded.algorithm == "gbrt" and loaded.n_trees == 8
    assert loaded.params["subsample_by"] == "queries" and loaded.params["average_runs"] == 2
    assert main(["train", "--algorithm", "gbrt", "--train", str(tmp_path / "train.txt"),
                 "--model", str(model), "--sigma", "2", "--engine", engine]) == 2
    assert "does not take --sigma" in capsys.readouterr().err


def test_averaged_runs_have_no_model_of_fewer_trees(tmp_path):
    """The mean of b runs keeps their trees one run after another: its first k trees are part of the
    first run, not the average model of k trees, so predict(n_trees=k) and --trees k are refused."""
    train = ranking_data(seed=8)
    est = fast_gbrt.GBRT(**SMALL, average_runs=2).fit(train)
    with pytest.raises(ParameterError, match="mean of 2 boosting runs"):
        est.predict(train, n_trees=2)
    np.testing.assert_array_equal(est.predict(train, n_trees=est.model_.n_trees), est.predict(train))
    est.save(tmp_path / "avg.json")
    write_letor(train, tmp_path / "train.txt")
    assert main(["predict", "--model", str(tmp_path / "avg.json"), "--data", str(tmp_path / "train.txt"),
                 "--trees", "2", "--output", str(tmp_path / "scores.txt")]) != 0

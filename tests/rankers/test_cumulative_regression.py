"""Mohan's classification by regression (RF(C), IGBRT(C)) in both twins: the regressors, the
probabilities from their differences, the least-squares weights, files, CLI, and MQ2008."""
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.engine import FAST
from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers import classification as fast_mc
from twinrank.fast.rankers.forest import IGBRT, RandomForest
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008
from twinrank.reference.io.letor import read_scores, write_letor
from twinrank.reference.io.model import CumulativeRegressionModel, load_model
from twinrank.reference.rankers import classification as ref_mc

FOREST = dict(rf_n_trees=6, rf_max_leaves=16, rf_min_samples_leaf=3, rf_feature_fraction=0.5)
SMALL = dict(FOREST, n_trees=5, learning_rate=0.3, max_leaves=6, min_samples_leaf=3)


def fitted(twin, data=None, **options):
    train, valid = data or (ranking_data(seed=1, n_queries=40), ranking_data(seed=2, n_queries=20))
    params = dict(SMALL if options.get("base", "igbrt") == "igbrt" else FOREST, **options)
    return twin.CumulativeRegression(**params).fit(train, eval_set=[valid]), train, valid


@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
              elements=st.floats(-2.0, 3.0, allow_nan=False)))
def test_probabilities_are_non_negative_and_sum_to_one(estimates):
    p = ref_mc.probabilities_from_estimates(estimates)
    assert p.shape == (estimates.shape[0], estimates.shape[1] + 1)
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_estimates_in_order_give_the_plain_differences():
    G = np.array([[0.9, 0.5, 0.2], [0.3, 0.3, 0.0]])  # P(y > c_j), non-increasing, in [0, 1]
    expected = np.c_[1 - G[:, 0], G[:, 0] - G[:, 1], G[:, 1] - G[:, 2], G[:, 2]]
    np.testing.assert_allclose(ref_mc.probabilities_from_estimates(G), expected, atol=1e-15)


def test_estimates_are_clipped_then_made_monotone_by_a_running_minimum():
    G = np.array([[1.3, 0.4, 0.6], [-0.2, 0.1, 0.0]])  # above 1, crossing; below 0, crossing
    # clipped: [1, .4, .6] and [0, .1, 0]; running minimum: [1, .4, .4] and [0, 0, 0]
    np.testing.assert_allclose(ref_mc.probabilities_from_estimates(G),
                               [[0.0, 0.6, 0.0, 0.4], [1.0, 0.0, 0.0, 0.0]], atol=1e-15)
    with pytest.raises(ParameterError, match="estimates must be"):
        ref_mc.probabilities_from_estimates(np.full((2, 1), np.nan))


@pytest.mark.parametrize("base, member", [("random_forest", RandomForest), ("igbrt", IGBRT)])
def test_each_regressor_is_its_base_estimator_on_the_zero_one_targets(base, member):
    est, train, valid = fitted(fast_mc, base=base)
    assert isinstance(est.model_, CumulativeRegressionModel) and list(est.classes_) == [0, 1, 2, 3, 4]
    for j, (c, regressor) in enumerate(zip(est.classes_[:-1], est.model_.classifiers)):
        targets = Dataset(train.X, (train.y > c).astype(float), train.query_offsets)
        options = {k[3:]: v for k, v in FOREST.items()} if base == "random_forest" else SMALL
        alone = member(**options, seed=ref_mc.classifier_seed(0, j)).fit(targets, eval_set=[valid])
        np.testing.assert_array_equal(FAST.predict_ensemble(regressor, valid.X), alone.predict(valid))


def test_probabilities_are_the_differences_of_the_cumulative_predictions():
    est, train, valid = fitted(ref_mc, base="igbrt", learning_rate=1.0)
    estimates = ref_mc.classifier_scores(est.model_, valid.X)  # (n_rows, 4) predictions of [y > c_j]
    p = est.predict_proba(valid)
    np.testing.assert_array_equal(p, ref_mc.probabilities_from_estimates(estimates))
    inside = ((estimates >= 0) & (estimates <= 1)).all(axis=1) & (np.diff(estimates, axis=1) <= 0).all(axis=1)
    assert inside.any() and not inside.all()  # both cases occur: plain differences, and repaired ones
    G = estimates[inside]
    np.testing.assert_allclose(p[inside], np.c_[1 - G[:, 0], -np.diff(G, axis=1), G[:, -1]], atol=1e-12)
    np.testing.assert_allclose(est.predict(valid), p @ est.relevance_weights_, rtol=1e-12)


@pytest.mark.parametrize("weights_on", ["train+valid", "valid"])
def test_the_weights_are_least_squares_of_the_labels_on_the_probabilities(weights_on):
    est, train, valid = fitted(fast_mc, base="random_forest", weights_on=weights_on)
    rows = [valid] if weights_on == "valid" else [train, valid]
    p = np.vstack([est.predict_proba(data) for data in rows])
    y = np.concatenate([data.y for data in rows])
    np.testing.assert_allclose(est.relevance_weights_, np.linalg.lstsq(p, y, rcond=None)[0], rtol=1e-10)
    residual = y - p @ est.relevance_weights_
    np.testing.assert_allclose(p.T @ residual, 0.0, atol=1e-8)  # the normal equations, no intercept


def test_both_twins_grow_the_same_regressors_and_score_each_others_models():
    train, valid = ranking_data(seed=3, n_queries=40, missing=0.1), ranking_data(seed=4, n_queries=20)
    ref, _, _ = fitted(ref_mc, (train, valid), base="igbrt", subsample=0.7, seed=5)
    fast, _, _ = fitted(fast_mc, (train, valid), base="igbrt", subsample=0.7, seed=5)
    for a, b in zip(ref.model_.classifiers, fast.model_.classifiers):
        for s, t in zip(a.init_model.trees + a.trees, b.init_model.trees + b.trees):
            np.testing.assert_array_equal(s.feature, t.feature)
            np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref.relevance_weights_, fast.relevance_weights_, rtol=1e-9)
    np.testing.assert_allclose(ref.predict(valid), fast.predict(valid), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast_mc.expected_relevance(ref.model_, valid.X),
                               ref_mc.expected_relevance(ref.model_, valid.X), rtol=1e-12)


def test_save_load_round_trip_and_the_model_kind_is_its_own(tmp_path):
    fast, train, valid = fitted(fast_mc, base="random_forest", weights_on="valid")
    path = tmp_path / "model.json"
    fast.save(path)
    doc = json.loads(path.read_text())
    assert (doc["algorithm"], len(doc["classifiers"])) == ("cumulative-regression", 4)
    assert isinstance(load_model(path), CumulativeRegressionModel)
    back = ref_mc.CumulativeRegression.load(path)
    assert back.get_params() == fast.get_params()
    np.testing.assert_allclose(back.predict(valid), fast.predict(valid), rtol=1e-12)
    with pytest.raises(ModelFormatError, match="'cumulative-regression' model is not an McRank model"):
        ref_mc.McRank.load(path)
    fast_mc.McRank(n_trees=2, max_leaves=3, min_samples_leaf=2).fit(train).save(tmp_path / "mc.json")
    with pytest.raises(ModelFormatError, match="'mcrank' model is not a cumulative-regression model"):
        fast_mc.CumulativeRegression.load(tmp_path / "mc.json")


def test_bad_input_is_a_clear_error():
    train, valid = ranking_data(seed=5), ranking_data(seed=6)
    one_label = Dataset(train.X, np.ones(train.n_rows), train.query_offsets)
    cases = [({"base": "gbrt"}, "base must be one of"),
             ({"weights_on": "train"}, "weights_on must be one of"),
             ({"base": "random_forest", "n_trees": 50, "learning_rate": 0.1},
              "n_trees, learning_rate: IGBRT's boosting, which base='random_forest' does not have"),
             ({"rf_n_trees": 0}, "the regressors' parameters: .*n_trees"),
             ({"base": "random_forest", "rf_feature_fraction": 2.0}, "the regressors' parameters: .*feature_fraction")]
    for options, message in cases:
        with pytest.raises(ParameterError, match=message):
            fast_mc.CumulativeRegression(**options).fit(np.zeros((2, 1)), np.zeros(3), np.zeros(1))  # bad data too
    with pytest.raises(ParameterError, match="least-squares relevance weights .* needs validation data"):
        fast_mc.CumulativeRegression(**SMALL).fit(train)
    with pytest.raises(ParameterError, match="two distinct labels"):
        ref_mc.CumulativeRegression(**SMALL).fit(one_label, eval_set=[valid])
    with pytest.raises(ParameterError, match="takes no init_score"):
        fast_mc.CumulativeRegression(**SMALL).fit(train, eval_set=[valid], init_score=np.zeros(train.n_rows))
    est, _, _ = fitted(fast_mc, base="random_forest")
    with pytest.raises(ParameterError, match="RF\\(C\\) scores whole"):
        est.predict(valid, n_trees=2)
    with pytest.raises(ParameterError, match="no early exits"):
        est.predict(valid, exits=object())


def test_igbrt_c_scores_with_its_first_boosted_trees_and_names_the_history_by_threshold():
    seen = []
    train, valid = ranking_data(seed=7), ranking_data(seed=8)
    est = fast_mc.CumulativeRegression(**SMALL).fit(train, eval_set=[valid], callback=lambda i, r: seen.append(r))
    assert set(seen[0]) == {"y>0:train:ndcg@10", "y>0:valid:ndcg@10"}  # the first forest's first tree
    assert set(seen[-1]) == {"y>3:valid:ndcg@10"} and len(seen) == 4 * (SMALL["rf_n_trees"] + SMALL["n_trees"])
    assert {key.split(":")[0] for key in est.history_} == {"y>0", "y>1", "y>2", "y>3"}
    forests = np.stack([FAST.predict_ensemble(c.init_model, valid.X) for c in est.model_.classifiers], axis=1)
    np.testing.assert_allclose(est.predict_proba(valid, n_trees=0),  # IGBRT(C) before boosting: its forests
                               ref_mc.probabilities_from_estimates(forests), rtol=1e-12, atol=1e-15)


def test_it_ranks_mq2008_about_as_well_as_mcrank():
    train, valid, test = load_mq2008(fold=1)
    mcrank = fast_mc.McRank(n_trees=50, learning_rate=0.1, max_leaves=15, seed=0).fit(train)
    ndcg = {"McRank": evaluate("ndcg@10", test.y, mcrank.predict(test), test.query_offsets)["ndcg@10"]}
    for base in ref_mc.BASES:
        est = fast_mc.CumulativeRegression(base=base, rf_n_trees=50, **({"n_trees": 50} if base == "igbrt" else {}))
        est.fit(train, eval_set=[valid])
        ndcg[base] = evaluate("ndcg@10", test.y, est.predict(test), test.query_offsets)["ndcg@10"]
        assert np.all(np.diff(est.relevance_weights_) > 0), est.relevance_weights_  # higher grade, higher weight
    assert ndcg["McRank"] > 0.75
    assert abs(ndcg["random_forest"] - ndcg["McRank"]) < 0.03 and abs(ndcg["igbrt"] - ndcg["McRank"]) < 0.03, ndcg


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_trains_with_valid_predicts_and_refuses_without(tmp_path, engine, capsys):
    for name, seed in (("train", 9), ("valid", 10), ("test", 11)):
        write_letor(ranking_data(seed=seed, n_queries=15), tmp_path / f"{name}.txt")
    model = tmp_path / "model.json"
    args = ["train", "--algorithm", "cumulative-regression", "--train", str(tmp_path / "train.txt"),
            "--model", str(model), "--base", "random_forest", "--rf-trees", "4", "--rf-leaves", "8",
            "--quiet", "--engine", engine]
    assert main(args) == 2
    assert "needs --valid" in capsys.readouterr().err
    assert main(args + ["--valid", str(tmp_path / "valid.txt"), "--weights-on", "valid"]) == 0
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "test.txt"),
                 "--output", str(tmp_path / "scores.txt"), "--engine", engine]) == 0
    est = fast_mc.CumulativeRegression.load(model)
    assert (est.base, est.weights_on, est.rf_n_trees) == ("random_forest", "valid", 4)
    test = ranking_data(seed=11, n_queries=15)
    np.testing.assert_allclose(read_scores(tmp_path / "scores.txt"), est.predict(test), rtol=1e-6)
    assert main(["inspect", "--model", str(model), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["algorithm"], summary["classifiers"], summary["n_trees"]) == ("cumulative-regression", 4, 16)

"""Missing-value strategies: fill values, transforms, both twins, model files, every estimator, CLI."""
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.rankers import (
    classification as fast_classification,
    forest as fast_forest,
    gbrt as fast_gbrt,
    lambdamart as fast_lambdamart,
    missing as fast,
)
from twinrank.fast.trees import predict as fast_predict
from twinrank.reference.engine import REFERENCE
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.rankers import classification, forest, gbrt, lambdamart, missing as ref
from twinrank.reference.trees import predict as ref_predict

nan = np.nan
X_HAND = np.array([[1.0, nan, 4.0, nan],
                   [nan, 2.0, 5.0, nan],
                   [3.0, 6.0, nan, nan],
                   [nan, 7.0, 9.0, nan]], dtype=np.float32)


@pytest.mark.parametrize("strategy, fill", [
    ("zero", [0, 0, 0, 0]),
    ("one", [1, 1, 1, 1]),
    ("mean", [(1 + 3) / 2, (2 + 6 + 7) / 3, (4 + 5 + 9) / 3, 0]),
    ("median", [(1 + 3) / 2, 6, 5, 0]),
])
def test_fill_values_by_hand(strategy, fill):
    for twin in (ref, fast):
        fitted = twin.fit_missing(X_HAND, strategy)
        expected = np.float32(fill).astype(np.float64)  # rounded to float32, as stored
        np.testing.assert_array_equal(fitted.fill, expected)
        filled = fitted.transform(X_HAND)
        np.testing.assert_array_equal(filled, np.where(np.isnan(X_HAND), np.float32(fill), X_HAND))
        assert filled.dtype == np.float32


def test_learn_is_no_transform_and_bad_strategy_is_an_error():
    np.testing.assert_array_equal(ref.fit_missing(X_HAND, "learn").transform(X_HAND), X_HAND)
    with pytest.raises(ParameterError, match="missing must be one of"):
        ref.fit_missing(X_HAND, "average")
    with pytest.raises(ParameterError, match="missing must be one of"):
        lambdamart.LambdaMART(missing="nope").fit(ranking_data(n_queries=3))


@given(seed=st.integers(0, 2**16), strategy=st.sampled_from(["zero", "one", "mean", "median"]),
       rate=st.sampled_from([0.0, 0.3, 1.0]))
def test_transform_only_fills_nan_and_twins_agree(seed, strategy, rate):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (rng.integers(1, 7), 3)).astype(np.float32) / 4
    X[rng.random(X.shape) < rate] = nan
    Z = rng.integers(-3, 4, (5, 3)).astype(np.float32)
    Z[rng.random(Z.shape) < 0.5] = nan
    a, b = ref.fit_missing(X, strategy), fast.fit_missing(X.copy(), strategy)
    np.testing.assert_array_equal(a.fill, b.fill)
    for data in (X, Z):
        filled = a.transform(data)
        observed = ~np.isnan(data)
        np.testing.assert_array_equal(filled[observed], data[observed])
        assert not np.isnan(filled).any()
        np.testing.assert_array_equal(filled, b.transform(data.copy()))


def iterative_problem(blank_every_feature=False):
    """Feature 1 is a step function of feature 0, feature 2 is noise; blanks in features 1 and 2.

    ``blank_every_feature``: feature 0 has blanks too, so no feature is complete.
    """
    rng = np.random.default_rng(3)
    x0 = rng.integers(0, 8, 300).astype(np.float32)
    X = np.stack([x0, np.where(x0 < 4, 1.0, 5.0), rng.integers(0, 4, 300)], axis=1).astype(np.float32)
    blank = rng.random(X.shape) < 0.2
    blank[:, 0] &= blank_every_feature
    return X, np.where(blank, nan, X).astype(np.float32), blank


def after_rounds(fitted, X, rounds):
    """``X`` filled by the first ``rounds`` rounds of a fitted ``"iterative"`` strategy (0: the mean fill)."""
    head = ref.MissingValues(fitted.strategy, fitted.fill, fitted.imputers[:rounds])
    return head.transform(X, ref_predict.predict_ensemble)


def test_alg2_reads_only_the_complete_features_and_stops_after_its_fixed_point():
    X, X_blank, blank = iterative_problem()
    fitted = ref.fit_missing(X_blank, "iterative")
    assert len(fitted.imputers) == 1  # inputs never imputed: round 2 would refit the same forests
    assert [f for f, _ in fitted.imputers[0]] == [1, 2]  # the features with missing and observed values
    for _, forest in fitted.imputers[0]:
        assert forest.algorithm == ref.IMPUTER_ALGORITHM and len(forest.trees) == ref.IMPUTER.n_trees
        assert forest.n_features == 3
        assert {int(f) for t in forest.trees for f in t.feature if f >= 0} == {0}  # feature 0 only
    noisier = X_blank.copy()
    noisier[:, 2] = np.where(blank[:, 2], nan, 3 - X[:, 2])  # an incomplete feature changed
    again = ref.fit_missing(noisier, "iterative").transform(noisier, ref_predict.predict_ensemble)
    filled = fitted.transform(X_blank, ref_predict.predict_ensemble)
    np.testing.assert_array_equal(again[:, 1], filled[:, 1])  # is no input of feature 1's forest
    missing = np.isnan(X_blank)
    for j, forest in fitted.imputers[0]:  # round 2 would refit the same forests on the filled matrix
        again = ref._forest(REFERENCE, filled, missing[:, j], np.array([0]), j)
        assert all(s.equals(t) for s, t in zip(again.trees, forest.trees))
    forced = ref.fit_missing(X_blank, "iterative", tol=0.0, max_rounds=3)
    assert len(forced.imputers) == 1  # the fixed point is not a matter of tolerance


def test_alg2_recovers_a_function_of_a_complete_feature_and_twins_agree():
    X, X_blank, blank = iterative_problem()
    a, b = ref.fit_missing(X_blank, "iterative"), fast.fit_missing(X_blank.copy(), "iterative")
    assert [[f for f, _ in stage] for stage in a.imputers] == [[f for f, _ in stage] for stage in b.imputers]
    with pytest.raises(ParameterError, match="give the twin that scores them"):
        a.transform(X_blank)
    filled = a.transform(X_blank, ref_predict.predict_ensemble)
    np.testing.assert_allclose(filled, b.transform(X_blank.copy(), fast_predict.predict_ensemble), rtol=0,
                               atol=1e-6)
    np.testing.assert_array_equal(filled[~blank], X[~blank])
    mean_error = np.abs(ref.fit_missing(X_blank, "mean").transform(X_blank) - X)[blank[:, 1], 1]
    forest_error = np.abs(filled - X)[blank[:, 1], 1]
    assert forest_error.mean() < 0.1 * mean_error.mean()  # mean fill is off by ~2 on average
    again = ref.MissingValues.from_dict(json.loads(json.dumps(a.to_dict())))
    np.testing.assert_array_equal(again.transform(X_blank, ref_predict.predict_ensemble), filled)


def round_changes(fitted, X, scale, per_round):
    """delta_r of each round of a fitted ``"iterative"`` strategy (``per_round`` stages a round)."""
    n_rounds = len(fitted.imputers) // per_round
    states = [after_rounds(fitted, X, r * per_round) for r in range(n_rounds + 1)]
    return [float(np.max(np.abs(b - a) / scale)) for a, b in zip(states, states[1:])]


def test_alg2_without_a_complete_feature_iterates_until_converged_or_capped():
    X, X_blank, blank = iterative_problem(blank_every_feature=True)
    observed = np.where(blank, nan, X)
    scale = np.nanmax(observed, axis=0) - np.nanmin(observed, axis=0)
    a, b = ref.fit_missing(X_blank, "iterative"), fast.fit_missing(X_blank.copy(), "iterative")
    assert [[f for f, _ in stage] for stage in a.imputers][:3] == [[0], [1], [2]]  # one feature after another
    assert len(b.imputers) == len(a.imputers) and len(a.imputers) % 3 == 0
    for stage in a.imputers:  # the fallback: each feature read from every other feature
        for j, forest in stage:
            assert {int(f) for t in forest.trees for f in t.feature if f >= 0} <= {0, 1, 2} - {j}
    for tol in (ref.ITERATIVE_TOL, 0.4):
        fitted = ref.fit_missing(X_blank, "iterative", tol=tol)
        changes = round_changes(fitted, X_blank, scale, per_round=3)
        assert all(c >= tol for c in changes[:-1])  # it went on while the values moved
        assert changes[-1] < tol or len(changes) == ref.ITERATIVE_MAX_ROUNDS
    assert 1 < len(changes) < ref.ITERATIVE_MAX_ROUNDS  # tol=0.4: stopped by the tolerance
    filled = a.transform(X_blank, ref_predict.predict_ensemble)
    np.testing.assert_allclose(filled, b.transform(X_blank.copy(), fast_predict.predict_ensemble), rtol=0,
                               atol=1e-6)
    mean_error = np.abs(ref.fit_missing(X_blank, "mean").transform(X_blank) - X)[blank[:, 1], 1]
    assert np.abs(filled - X)[blank[:, 1], 1].mean() < 0.5 * mean_error.mean()
    for twin in (ref, fast):
        assert len(twin.fit_missing(X_blank, "iterative", tol=0.0, max_rounds=2).imputers) == 2 * 3  # the cap


@pytest.mark.parametrize("X, kw, message", [
    (X_HAND, dict(tol=-0.1), "tol must be >= 0"),
    (X_HAND, dict(tol=nan), "tol must be a finite number"),
    (X_HAND, dict(max_rounds=0), "max_rounds must be >= 1"),
    (X_HAND, dict(max_rounds=2.5), "max_rounds must be an integer"),
    (X_HAND[0], {}, "X must be a 2-D array of numbers"),
    (np.where(np.isnan(X_HAND), np.inf, X_HAND), {}, r"X\[0, 1\] is infinite; use NaN"),
])
def test_bad_input_to_fit_missing_is_a_parameter_error(X, kw, message):
    for twin in (ref, fast):
        with pytest.raises(ParameterError, match=message):
            twin.fit_missing(X, "iterative", **kw)


OLD_ITERATIVE_MODEL = Path(__file__).parents[1] / "fixtures" / "missing_iterative_gbrt.json"
OLD_ITERATIVE_SCORES = [  # its predictions of duplicated_feature_rows(12, seed=2), when it was saved
    3.747916666666667, 1.0135416666666668, 0.84375, 1.0135416666666668, 1.9979166666666668,
    3.0395833333333333, 1.11125, 0.1489583333333333, 1.0135416666666668, 2.936916666666667,
    3.747916666666667, 2.936916666666667]


def duplicated_feature_rows(n, seed):
    """Features 0 and 1 both the label / 4, feature 2 noise; a quarter of all values blank; six queries."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 5, n) / 4
    X = np.stack([x0, x0, rng.integers(0, 5, n) / 4], axis=1)
    X[rng.random(X.shape) < 0.25] = nan
    return Dataset(X.astype(np.float32), np.round(4 * x0), np.arange(0, n + 1, n // 6))


def test_a_model_file_saved_with_the_old_iterative_strategy_still_loads_and_scores():
    """The file: a GBRT (3 trees) trained on ``duplicated_feature_rows(60, seed=1)`` when
    ``"iterative"`` meant three rounds of 4-tree least-squares GBRTs from the mean fill."""
    test = duplicated_feature_rows(12, seed=2)
    stored = json.loads(OLD_ITERATIVE_MODEL.read_text())["missing"]
    assert stored["strategy"] == "iterative" and len(stored["imputers"]) == 3
    assert {m["algorithm"] for stage in stored["imputers"] for _, m in stage} == {"imputer"}
    for cls in (gbrt.GBRT, fast_gbrt.GBRT):
        model = cls.load(OLD_ITERATIVE_MODEL)
        np.testing.assert_allclose(model.predict(test), OLD_ITERATIVE_SCORES, rtol=1e-12)
    mean_filled = np.where(np.isnan(test.X), np.float32(stored["fill"]), test.X)  # its imputers matter:
    assert not np.allclose(gbrt.GBRT.load(OLD_ITERATIVE_MODEL).predict(mean_filled), OLD_ITERATIVE_SCORES)


def test_model_without_missing_field_still_loads():
    d = Ensemble(n_features=2).to_dict()
    assert "missing" not in d
    assert Ensemble.from_dict(d).missing is None
    d["missing"] = {"strategy": "mean", "fill": [1.0]}
    with pytest.raises(ModelFormatError, match="missing-value strategy"):
        ref_predict.predict_ensemble(Ensemble.from_dict(d), np.zeros((1, 2)))


ESTIMATORS = [
    (lambdamart.LambdaMART, fast_lambdamart.LambdaMART, dict(n_trees=4, min_samples_leaf=3)),
    (gbrt.GBRT, fast_gbrt.GBRT, dict(n_trees=4, min_samples_leaf=3)),
    (forest.RandomForest, fast_forest.RandomForest, dict(n_trees=3, min_samples_leaf=3,
                                                          feature_fraction=0.5)),
    (forest.IGBRT, fast_forest.IGBRT, dict(n_trees=2, rf_n_trees=2, min_samples_leaf=3)),
    (classification.McRank, fast_classification.McRank, dict(n_trees=2, min_samples_leaf=3)),
]


def stored_missing(model):
    """The missing-value strategy a fitted model stores (McRank: on every classifier, the same)."""
    if isinstance(model, Ensemble):
        return model.missing
    assert all(c.missing == model.classifiers[0].missing for c in model.classifiers)
    return model.classifiers[0].missing


@pytest.mark.parametrize("strategy", ["learn", "zero", "median", "iterative"])
@pytest.mark.parametrize("ref_cls, fast_cls, kw", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_estimator_stores_its_strategy_and_cross_feeds(ref_cls, fast_cls, kw, strategy,
                                                             tmp_path):
    train = ranking_data(n_queries=12, n_features=4, seed=5, missing=0.25, levels=5)
    test = ranking_data(n_queries=4, n_features=4, seed=6, missing=0.25, levels=5)
    for cls in (ref_cls, fast_cls):
        est = cls(missing=strategy, **kw).fit(train)
        fitted = stored_missing(est.model_)
        if strategy == "learn":
            assert fitted is None
        else:
            assert fitted["strategy"] == strategy
        est.save(tmp_path / "model.json")
        for other in (ref_cls, fast_cls):  # cross-feeding: each twin scores each twin's file
            np.testing.assert_array_equal(other.load(tmp_path / "model.json").predict(test),
                                          est.predict(test))
    if strategy in ("zero", "median"):
        assert stored_missing(ref_cls(missing=strategy, **kw).fit(train).model_) == fitted


def test_a_filled_model_equals_a_learn_model_trained_on_filled_rows():
    train = ranking_data(n_queries=12, n_features=4, seed=5, missing=0.25, levels=5)
    test = ranking_data(n_queries=4, n_features=4, seed=6, missing=0.25, levels=5)
    fitted = ref.fit_missing(train.X, "median")
    filled_train = dataclasses.replace(train, X=fitted.transform(train.X))
    for cls in (gbrt.GBRT, fast_gbrt.GBRT):
        with_strategy = cls(n_trees=4, min_samples_leaf=3, missing="median").fit(train)
        by_hand = cls(n_trees=4, min_samples_leaf=3).fit(filled_train)
        assert all(s.equals(t) for s, t in zip(with_strategy.model_.trees, by_hand.model_.trees))
        assert with_strategy.model_.missing == fitted.to_dict()
        for twin in (ref_predict, fast_predict):
            np.testing.assert_array_equal(twin.predict_ensemble(with_strategy.model_, test.X),
                                          by_hand.predict(fitted.transform(test.X)))


def test_cli_missing_flag(tmp_path):
    data = ranking_data(n_queries=10, n_features=4, seed=1, missing=0.3, levels=5)
    write_letor(data, tmp_path / "train.txt")
    model = tmp_path / "m.json"
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(model),
                 "--algorithm", "gbrt", "--trees", "3", "--min-samples-leaf", "2",
                 "--missing", "mean", "--quiet"]) == 0
    assert json.loads(model.read_text())["missing"]["strategy"] == "mean"

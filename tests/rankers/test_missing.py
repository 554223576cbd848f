"""Missing-value strategies: fill values, transforms, both twins, model files, every estimator, CLI."""
import dataclasses
import json

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
from twinrank.reference.errors import ModelFormatError, ParameterError
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


def iterative_problem():
    """Feature 1 is a step function of feature 0, feature 2 is noise; blanks in features 1 and 2."""
    rng = np.random.default_rng(3)
    x0 = rng.integers(0, 8, 300).astype(np.float32)
    X = np.stack([x0, np.where(x0 < 4, 1.0, 5.0), rng.integers(0, 4, 300)], axis=1).astype(np.float32)
    blank = rng.random(X.shape) < 0.2
    blank[:, 0] = False
    return X, np.where(blank, nan, X).astype(np.float32), blank


def test_iterative_recovers_a_predictable_feature_and_twins_agree():
    X, X_blank, blank = iterative_problem()
    a, b = ref.fit_missing(X_blank, "iterative"), fast.fit_missing(X_blank.copy(), "iterative")
    assert len(a.imputers) == ref.ITERATIVE_ROUNDS
    assert [f for f, _ in a.imputers[0]] == [1, 2]  # the features with missing and observed values
    with pytest.raises(ParameterError, match="give the twin that scores them"):
        a.transform(X_blank)
    filled = a.transform(X_blank, ref_predict.predict_ensemble)
    np.testing.assert_allclose(filled, b.transform(X_blank.copy(), fast_predict.predict_ensemble), rtol=0,
                               atol=1e-6)
    np.testing.assert_array_equal(filled[~blank], X[~blank])
    mean_error = np.abs(ref.fit_missing(X_blank, "mean").transform(X_blank) - X)[blank[:, 1], 1]
    iterative_error = np.abs(filled - X)[blank[:, 1], 1]
    assert iterative_error.mean() < 0.1 * mean_error.mean()  # mean fill is off by ~2 on average
    again = ref.MissingValues.from_dict(json.loads(json.dumps(a.to_dict())))
    np.testing.assert_array_equal(again.transform(X_blank, ref_predict.predict_ensemble), filled)


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

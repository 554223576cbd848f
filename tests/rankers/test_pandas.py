"""pandas DataFrames: names kept and checked, nullable columns' pd.NA missing, non-numbers refused.

Oracle: a DataFrame is its numbers, so a fit on it is the fit on ``to_numpy()`` (NaN for pd.NA),
bit for bit, in both twins.
"""
import subprocess
import sys
import warnings

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.fast.rankers import (
    bagging as fast_bagging,
    classification as fast_classification,
    lambdamart as fast_lambdamart,
)
from twinrank.reference.errors import ParameterError, TwinrankWarning
from twinrank.reference.rankers import lambdamart as ref_lambdamart

pd = pytest.importorskip("pandas")

SMALL = dict(n_trees=5, learning_rate=0.3, max_leaves=6, min_samples_leaf=2)
NAMES = ["bm25", "tf", "idf", "pagerank", "length", "clicks"]


@pytest.fixture(scope="module")
def data():
    return ranking_data(25, n_features=6, seed=11, missing=0.1)


def frame(data, columns=NAMES):
    return pd.DataFrame(data.X.astype(np.float64), columns=columns)


@pytest.mark.parametrize("cls", [ref_lambdamart.LambdaMART, fast_lambdamart.LambdaMART], ids=["reference", "fast"])
def test_a_dataframe_fit_is_the_array_fit_and_keeps_the_names(cls, data):
    df = frame(data)
    named = cls(**SMALL).fit(df, data.y, data.qid)
    plain = cls(**SMALL).fit(data.X, data.y, data.qid)
    assert list(named.feature_names_in_) == NAMES and named.feature_names_in_.dtype == object
    assert not hasattr(plain, "feature_names_in_")
    np.testing.assert_array_equal(named.predict(df), plain.predict(data.X))
    assert named.score(df, data.y, qid=data.qid) == plain.score(data.X, data.y, qid=data.qid)
    named.fit(data.X, data.y, data.qid)  # a refit on an array forgets the names
    assert not hasattr(named, "feature_names_in_")


@pytest.mark.parametrize("columns, message", [
    (NAMES[1:2] + NAMES[:1] + NAMES[2:], "has column 'tf' at position 0, the fit had 'bm25'"),
    (NAMES[:3] + ["PageRank"] + NAMES[4:], "has column 'PageRank' at position 3, the fit had 'pagerank'"),
    (NAMES + ["extra"], "has column 'extra' at position 6, the fit had no column there"),
    (NAMES[:-1], "has no column at position 5, the fit had 'clicks'"),
])
def test_predict_refuses_reordered_renamed_or_other_columns(columns, message, data):
    est = fast_lambdamart.LambdaMART(**SMALL).fit(frame(data), data.y, data.qid)
    df = frame(data)
    if set(columns) <= set(NAMES):
        df = df[columns]
    else:
        df = pd.DataFrame({c: df[c] if c in NAMES else 0.0 for c in columns})
    with pytest.raises(ParameterError, match="feature names mismatch: X " + message.replace("(", r"\(")):
        est.predict(df)
    with pytest.raises(ParameterError, match="feature names mismatch"):
        est.score(df, data.y, qid=data.qid)
    with pytest.raises(ParameterError, match="feature names mismatch"):
        est.predict_contributions(df)


def test_names_are_saved_checked_after_loading_and_warned_about_for_arrays(tmp_path, data):
    est = fast_lambdamart.LambdaMART(**SMALL).fit(frame(data), data.y, data.qid)
    est.save(tmp_path / "m.json")
    loaded = fast_lambdamart.LambdaMART.load(tmp_path / "m.json")
    assert list(loaded.feature_names_in_) == NAMES
    with pytest.raises(ParameterError, match="feature names mismatch"):
        loaded.predict(frame(data)[NAMES[::-1]])
    with pytest.warns(TwinrankWarning, match="no feature names"):
        scores = loaded.predict(data.X)
    np.testing.assert_array_equal(scores, est.predict(frame(data)))
    plain = fast_lambdamart.LambdaMART(**SMALL).fit(data.X, data.y, data.qid)
    with pytest.warns(TwinrankWarning, match="fitted without them"):
        plain.predict(frame(data))


def test_an_eval_set_with_other_columns_is_refused(data):
    with pytest.raises(ParameterError, match="eval_set 'valid' has column 'tf' at position 0"):
        fast_lambdamart.LambdaMART(**SMALL).fit(frame(data), data.y, data.qid,
                                                eval_set=[(frame(data)[NAMES[1:] + NAMES[:1]], data.y, data.qid)])


def test_nullable_columns_read_pd_na_as_missing(data):
    counts = np.round(np.nan_to_num(data.X[:, 0], nan=-1.0) * 10).astype(int)  # integer counts, -1 where missing
    nullable = pd.DataFrame({"count": pd.array(np.where(counts < 0, None, counts), dtype="Int64"),
                             "score": pd.array(np.where(np.isnan(data.X[:, 1]), None, data.X[:, 1].astype(float)),
                                               dtype="Float64"),
                             "flag": pd.array(np.where(np.isnan(data.X[:, 2]), None, data.X[:, 2] > 0.5),
                                              dtype="boolean")})
    assert nullable.isna().to_numpy().any()
    numbers = np.column_stack([np.where(counts < 0, np.nan, counts), data.X[:, 1],
                               np.where(np.isnan(data.X[:, 2]), np.nan, data.X[:, 2] > 0.5)])
    for cls in (ref_lambdamart.LambdaMART, fast_lambdamart.LambdaMART):
        a = cls(**SMALL, missing="separate").fit(nullable, data.y, data.qid)
        b = cls(**SMALL, missing="separate").fit(numbers, data.y, data.qid)
        np.testing.assert_array_equal(a.predict(nullable), b.predict(numbers))


@pytest.mark.parametrize("column, kind", [
    (["a", "b"], "str"), (pd.Categorical(["a", "b"]), "category"), (np.array([1.0, None], dtype=object), "object"),
    (pd.to_datetime(["2020-01-01", "2020-01-02"]), "datetime64")])
def test_a_column_that_is_not_numbers_is_refused_by_name(column, kind):
    df = pd.DataFrame({"bm25": [0.5, 0.25], "title": column})
    with pytest.raises(ParameterError, match=f"column 'title' \\(position 1\\) is {kind}"):
        fast_lambdamart.LambdaMART(**SMALL).fit(df, [1.0, 0.0], [0, 0])


def test_mcrank_and_blmart_keep_and_check_the_names_too(data):
    df = frame(data)
    for est in (fast_classification.McRank(**SMALL).fit(df, data.y, data.qid),
                fast_bagging.BLMART(n_models=2, **SMALL).fit(df, data.y, data.qid)):
        assert list(est.feature_names_in_) == NAMES
        with pytest.raises(ParameterError, match="feature names mismatch"):
            est.predict(df[NAMES[::-1]], **({"qid": data.qid} if hasattr(est, "predict_members") else {}))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est.score(df, data.y, qid=data.qid)


def test_pandas_is_not_imported_for_arrays():
    code = ("import sys, numpy as np\n"
            "from twinrank.reference.rankers.lambdamart import LambdaMART\n"
            "X = np.random.default_rng(0).random((40, 3)); y = (X[:, 0] > 0.5) * 1.0\n"
            "LambdaMART(n_trees=2, min_samples_leaf=2).fit(X, y, np.repeat(np.arange(4), 10)).predict(X)\n"
            "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

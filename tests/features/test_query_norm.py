"""LETOR's query-level normalisation: a naive loop as the oracle, the twins bit for bit, MQ2008 unchanged.

Hard data throughout: features of a few values (constant within a query), NaN now and then
(whole columns of a query too), empty and one-document queries.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twinrank.fast.features import query_norm as fast
from twinrank.fast.runtime._threads import threads
from twinrank.reference.errors import ParameterError
from twinrank.reference.features import query_norm as ref
from twinrank.reference.io.data import load_mq2008
from twinrank.testing import assert_twins_agree, datasets, get


@st.composite
def features(draw, max_queries=6, max_docs=8, max_features=4):
    """``(X, query_offsets)``: float32 or float64 features of few values, NaN now and then."""
    sizes = draw(st.lists(st.integers(0, max_docs), min_size=1, max_size=max_queries))
    n, d = sum(sizes), draw(st.integers(0, max_features))
    values = st.sampled_from([np.nan, -3.0, 0.0, 0.0, 0.5, 1.0, 2.5, 1e30])
    X = np.array(draw(st.lists(values, min_size=n * d, max_size=n * d)), dtype=np.float64).reshape(n, d)
    if draw(st.booleans()):
        X = X.astype(np.float32)
    return X, np.r_[0, np.cumsum(sizes)].astype(np.int64)


def naive(X, offsets):
    """The definition, one query and one feature at a time."""
    X = np.asarray(X, dtype=np.float64)
    out = np.full(X.shape, np.nan)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        for f in range(X.shape[1]):
            column = X[lo:hi, f]
            present = ~np.isnan(column)
            if not present.any():
                continue
            low, high = column[present].min(), column[present].max()
            out[lo:hi, f][present] = (column[present] - low) / (high - low) if high > low else 0.0
    return out


@given(problem=features())
def test_the_definition(problem):
    X, offsets = problem
    original = X.copy()
    got = ref.query_level_normalize(X, offsets)
    np.testing.assert_array_equal(got, naive(X, offsets))
    assert got.dtype == np.float64 and got.shape == X.shape and got is not X
    np.testing.assert_array_equal(X, original)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(X))  # NaN stays NaN, nothing else becomes NaN
    present = got[~np.isnan(got)]
    assert np.all((present >= 0) & (present <= 1))


@given(problem=features(), n_threads=st.sampled_from([1, 2]))
def test_twins_agree_bit_for_bit(problem, n_threads):
    X, offsets = problem
    with threads(n_threads):
        result = assert_twins_agree(("query_norm", "query_level_normalize"), X, offsets)
    assert result.tolerance_name == "exact" and result.max_abs_diff == 0
    np.testing.assert_array_equal(fast.query_level_normalize(X, offsets), ref.query_level_normalize(X, offsets))


@settings(max_examples=20)
@given(problem=features(max_queries=80, max_docs=30, max_features=6))
def test_many_queries_on_all_threads(problem):
    X, offsets = problem
    np.testing.assert_array_equal(fast.query_level_normalize(X, offsets), ref.query_level_normalize(X, offsets))


@settings(max_examples=30)
@given(data=datasets())
def test_the_registry_rows_agree(data):
    for name in ("query_level_normalize", "query_level_normalize[missing, constant]"):
        assert (get(name).layer, get(name).tolerance) == ("features", "exact")
        assert assert_twins_agree(name, data).passed


def test_constant_features_are_zero_and_each_query_spans_zero_to_one():
    X = np.array([[3.0, 10.0, np.nan], [5.0, 10.0, 2.0], [4.0, 10.0, 6.0], [7.0, 1.0, np.nan]])
    expected = np.array([[0.0, 0.0, np.nan], [1.0, 0.0, 0.0], [0.5, 0.0, 1.0], [0.0, 0.0, np.nan]])
    for twin in (ref, fast):
        np.testing.assert_array_equal(twin.query_level_normalize(X, [0, 3, 3, 4]), expected)


def test_mq2008_is_letor_s_query_level_norm_already():
    train, _, _ = load_mq2008(fold=1)
    for twin in (ref, fast):
        np.testing.assert_array_equal(twin.query_level_normalize(train.X, train.query_offsets), train.X)


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
def test_bad_input_is_a_parameter_error(twin):
    X = np.ones((3, 2))
    with pytest.raises(ParameterError, match="2-D"):
        twin.query_level_normalize(np.ones(3), [0, 3])
    with pytest.raises(ParameterError, match=r"X\[1, 0\] is infinite"):
        twin.query_level_normalize(np.array([[0.0, 1.0], [-np.inf, 2.0], [1.0, 1.0]]), [0, 3])
    with pytest.raises(ParameterError, match="matrix of numbers"):
        twin.query_level_normalize([["a", "b"]], [0, 1])
    for offsets in ([0, 2], [1, 3], [0, 2, 1, 3], []):
        with pytest.raises(ParameterError, match="query_offsets"):
            twin.query_level_normalize(X, offsets)
    assert twin.query_level_normalize(np.zeros((0, 2)), [0, 0]).shape == (0, 2)

"""``ties="expected"`` of DCG and NDCG: the mean over every order of the tied documents."""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.evaluation import metrics as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics as ref

TWINS = [ref, fast]


@st.composite
def tied_queries(draw):
    """A few queries of at most 5 documents, scores from {-1, 0, 1}: ties everywhere."""
    sizes = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.float64)
    scores = np.array(draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n)), dtype=np.float64)
    return y, scores, np.r_[0, np.cumsum(sizes)].astype(np.int64)


def mean_over_tie_orders(function, y, scores, offsets, **kw):
    """Brute force: the metric of every order of each query's tied rows (stable ties), averaged."""
    out = []
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        values = []
        for perm in itertools.permutations(range(hi - lo)):
            perm = np.array(perm, dtype=np.int64)
            # the stable rule ranks ties by input order: permuting rows permutes the tie order
            values.append(function(y[lo:hi][perm], scores[lo:hi][perm], np.array([0, hi - lo]), **kw)[0])
        out.append(np.mean(values) if values else function(y[lo:hi], scores[lo:hi], np.array([0, hi - lo]),
                                                            **kw)[0])
    return np.array(out)


@pytest.mark.parametrize("name", ["dcg", "ndcg"])
@pytest.mark.parametrize("convention", ["lightgbm", "ranklib", "letor", "mslr"])
@given(data=tied_queries(), k=st.sampled_from([None, 1, 2, 4]))
def test_expected_ties_equal_mean_over_all_orders(name, convention, data, k):
    y, scores, offsets = data
    if convention == "letor":
        y = np.minimum(y, 2.0)  # LETOR 4.0's grades: the preset refuses label 3
    want = mean_over_tie_orders(getattr(ref, name), y, scores, offsets, k=k, convention=convention)
    for twin in TWINS:
        got = getattr(twin, name)(y, scores, offsets, k=k, convention=convention, ties="expected")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@given(data=tied_queries())
def test_expected_ties_without_ties_change_nothing(data):
    y, _, offsets = data
    scores = -np.arange(len(y), dtype=np.float64)  # distinct
    for twin in TWINS:
        np.testing.assert_array_equal(twin.ndcg(y, scores, offsets, k=3, ties="expected"),
                                      twin.ndcg(y, scores, offsets, k=3))


def test_expected_ties_by_formula():
    """Three tied documents, gains 3, 0, 0: the relevant one sits at each rank with probability 1/3."""
    y, scores, offsets = np.array([2.0, 0.0, 0.0]), np.zeros(3), np.array([0, 3])
    want = 3.0 * (1 + 1 / np.log2(3) + 1 / np.log2(4)) / 3
    want_at_2 = 3.0 * (1 + 1 / np.log2(3)) / 3
    for twin in TWINS:
        assert twin.dcg(y, scores, offsets, ties="expected")[0] == pytest.approx(want, rel=1e-15)
        assert twin.dcg(y, scores, offsets, k=2, ties="expected")[0] == pytest.approx(want_at_2, rel=1e-15)
        assert twin.ndcg(y, scores, offsets, k=2, ties="expected")[0] == pytest.approx(want_at_2 / 3.0, rel=1e-15)


def test_tie_rule_override_and_bad_value():
    y, scores, offsets = np.array([0.0, 2.0]), np.zeros(2), np.array([0, 2])
    for twin in TWINS:
        assert twin.ndcg(y, scores, offsets, ties="stable")[0] < 1.0
        with pytest.raises(ParameterError, match="ties must be one of"):
            twin.ndcg(y, scores, offsets, ties="random")

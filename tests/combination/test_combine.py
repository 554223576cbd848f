"""The exact line search over alpha: brute force at every breakpoint and midpoint, twins agree."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.combination import combine as fast
from twinrank.reference.combination import combine as ref
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics

TWINS = [ref, fast]


@st.composite
def two_rankers(draw):
    """Small queries (empty and one-document ones too); scores from few integers: tied scores and
    equal lines (equal a and b) in most examples, several lines through one point often."""
    sizes = draw(st.lists(st.integers(0, 7), min_size=1, max_size=4))
    n = sum(sizes)
    ints = st.lists(st.integers(-2, 2), min_size=n, max_size=n)
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.float64)
    a, b = np.array(draw(ints), dtype=np.float64), np.array(draw(ints), dtype=np.float64)
    return a, b, y, np.r_[0, np.cumsum(sizes)].astype(np.int64)


OPTIONS = st.fixed_dictionaries({
    "form": st.sampled_from(["convex", "boosting"]),
    "ties": st.sampled_from(["expected", "stable"]),
    "metric": st.sampled_from(["ndcg@1", "ndcg@3", "ndcg", "dcg@2"]),
    "convention": st.sampled_from(["lightgbm", "ranklib", "letor"]),
    "alpha_range": st.sampled_from([(0.0, 1.0), (-1.0, 2.0), (0.1, 5.0)]),
})


def brute_force(a, b, y, offsets, alpha, options, at_breakpoint=False):
    """The mean metric at one alpha, from the metrics module alone."""
    s = ref.combined_scores(a, b, alpha, options["form"])
    if at_breakpoint:  # lines crossing at alpha tie exactly; undo rounding in the last bits
        s = np.round(s, 9)
    name, k = options["metric"].partition("@")[::2]
    function = getattr(metrics, name)
    return float(np.mean(function(y, s, offsets, k=int(k) if k else None, convention=options["convention"],
                                  ties=options["ties"])))


@given(data=two_rankers(), options=OPTIONS)
def test_path_equals_brute_force_at_every_breakpoint_and_midpoint(data, options):
    a, b, y, offsets = data
    result = ref.optimal_combination(a, b, y, offsets, return_path=True, **options)
    path, (lo, hi) = result.path, options["alpha_range"]
    edges = np.r_[lo, path.breakpoints, hi]
    assert np.all(np.diff(edges) > 0)
    mids = [brute_force(a, b, y, offsets, 0.5 * (edges[t] + edges[t + 1]), options) for t in range(len(edges) - 1)]
    points = [brute_force(a, b, y, offsets, x, options, at_breakpoint=True) for x in path.breakpoints]
    np.testing.assert_allclose(path.values, mids, rtol=0, atol=1e-9)
    np.testing.assert_allclose(path.values_at_breakpoints, points, rtol=0, atol=1e-9)
    assert result.value == pytest.approx(max(mids), abs=1e-9)
    assert brute_force(a, b, y, offsets, result.alpha, options) == pytest.approx(result.value, abs=1e-9)
    assert lo < result.alpha < hi


@given(data=two_rankers(), options=OPTIONS)
def test_twins_agree_on_alpha_and_path(data, options):
    a, b, y, offsets = data
    want = ref.optimal_combination(a, b, y, offsets, return_path=True, **options)
    got = fast.optimal_combination(a, b, y, offsets, return_path=True, **options)
    assert got.alpha == want.alpha
    assert got.value == pytest.approx(want.value, abs=1e-12)
    np.testing.assert_array_equal(got.path.breakpoints, want.path.breakpoints)
    np.testing.assert_allclose(got.path.values, want.path.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.path.values_at_breakpoints, want.path.values_at_breakpoints, rtol=0, atol=1e-12)


@pytest.mark.parametrize("chunk", [1, 7])
def test_fast_windows_change_nothing(monkeypatch, chunk):
    """Windows of a few crossings (many windows) give the same path as one window."""
    rng = np.random.default_rng(3)
    offsets = np.r_[0, np.cumsum(rng.integers(1, 12, 20))]
    y = rng.integers(0, 3, offsets[-1]).astype(float)
    a, b = (np.round(rng.normal(size=offsets[-1]), 1) for _ in range(2))
    want = fast.optimal_combination(a, b, y, offsets, return_path=True)
    monkeypatch.setattr(fast, "CROSSINGS_PER_CHUNK", chunk)
    got = fast.optimal_combination(a, b, y, offsets, return_path=True)
    assert got.alpha == want.alpha and got.value == want.value
    np.testing.assert_array_equal(got.path.breakpoints, want.path.breakpoints)
    np.testing.assert_allclose(got.path.values, want.path.values, rtol=0, atol=1e-12)


def test_three_lines_through_one_point_by_hand():
    """Lines 0, 1, 2 meet at alpha = 1/2 and reverse; expected NDCG there averages 3! orders."""
    a, b, y = np.array([2.0, 1.0, 0.0]), np.array([0.0, 1.0, 2.0]), np.array([2.0, 0.0, 1.0])
    offsets = np.array([0, 3])
    d = 1 / np.log2(np.arange(2, 5))  # discounts of ranks 1..3
    ideal = 3 * d[0] + 1 * d[1]
    for twin in TWINS:
        r = twin.optimal_combination(a, b, y, offsets, metric="ndcg", return_path=True)
        np.testing.assert_array_equal(r.path.breakpoints, [0.5])
        np.testing.assert_allclose(r.path.values, [(3 * d[0] + d[2]) / ideal, (d[0] + 3 * d[2]) / ideal])
        np.testing.assert_allclose(r.path.values_at_breakpoints, [4 * d.mean() / ideal])
        assert r.alpha == 0.25


def test_no_crossing_returns_the_middle_of_the_range():
    a, b, y, offsets = np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([0, 2])
    for twin in TWINS:
        r = twin.optimal_combination(a, b, y, offsets, alpha_range=(0.1, 5.0), form="boosting", return_path=True)
        assert r.alpha == pytest.approx(2.55) and r.value == 1.0 and len(r.path.breakpoints) == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"alpha_range": (1.0, 1.0)}, "range is empty"),
    ({"alpha_range": (0.0, np.inf)}, "finite"),
    ({"metric": "map"}, "dcg"),
    ({"form": "linear"}, "form must be"),
    ({"ties": "trec"}, "ties must be"),
])
def test_bad_parameters(kwargs, message):
    a, y, offsets = np.zeros(2), np.array([1.0, 0.0]), np.array([0, 2])
    for twin in TWINS:
        with pytest.raises(ParameterError, match=message):
            twin.optimal_combination(a, a, y, offsets, **kwargs)


def test_nan_scores_and_lengths():
    y, offsets = np.array([1.0, 0.0]), np.array([0, 2])
    for twin in TWINS:
        with pytest.raises(ParameterError, match=r"scores_b\[1\] is nan"):
            twin.optimal_combination(np.zeros(2), np.array([0.0, np.nan]), y, offsets)
        with pytest.raises(ParameterError, match="one length"):
            twin.optimal_combination(np.zeros(3), np.zeros(2), y, offsets)

"""Kendall's tau-b, Spearman's rho and the footrule per query: SciPy as the oracle, the twins bit for bit.

Hard data throughout: scores from a few values (ties, whole queries tied), empty and
one-document queries, infinite scores. The fast twin is compared through the twin
registry's assertion, on copies of the inputs, on one thread and on two.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from twinrank.fast.evaluation import rank_correlation as fast
from twinrank.fast.runtime._threads import threads
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import rank_correlation as ref
from twinrank.testing import assert_twins_agree, get

NAMES = ["kendall_tau", "spearman_rho", "footrule"]


@st.composite
def two_rankings(draw, max_queries=6, max_docs=9):
    """``(a, b, query_offsets)``: queries of 0..max_docs documents, scores from a few values."""
    sizes = draw(st.lists(st.integers(0, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    values = st.sampled_from([-np.inf, -1.0, 0.0, 0.25, 0.5, 3.0, np.inf]) if draw(st.booleans()) \
        else st.integers(-2, 2).map(float)
    a = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)
    b = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)
    if n and draw(st.booleans()):
        b[: sizes[0]] = a[: sizes[0]]  # a query ranked alike
    return a, b, np.r_[0, np.cumsum(sizes)].astype(np.int64)


def per_query(offsets):
    return zip(offsets[:-1], offsets[1:])


def scipy_values(name, a, b, offsets) -> np.ndarray:
    """The oracle: SciPy's kendalltau (tau-b) and spearmanr; the footrule from rankdata's average ranks."""
    out = []
    for lo, hi in per_query(offsets):
        x, y = a[lo:hi], b[lo:hi]
        if hi - lo < 2:
            out.append(np.nan)
        elif name == "footrule":
            n = hi - lo
            out.append(np.abs(stats.rankdata(x) - stats.rankdata(y)).sum() / (n * n // 2))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SciPy warns on a constant input, then returns NaN
                if name == "kendall_tau":
                    out.append(stats.kendalltau(x, y).statistic)
                else:
                    out.append(stats.spearmanr(x, y).statistic)
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("name", NAMES)
@given(problem=two_rankings())
def test_scipy_is_the_oracle(name, problem):
    a, b, offsets = problem
    finite = np.isfinite(a).all() and np.isfinite(b).all()  # SciPy's ranks of infinities: not an oracle
    got = getattr(ref, name)(a, b, offsets)
    assert got.dtype == np.float64 and got.shape == (len(offsets) - 1,)
    if finite:
        np.testing.assert_allclose(got, scipy_values(name, a, b, offsets), rtol=0, atol=1e-12)
    sizes = np.diff(offsets)
    assert np.isnan(got[sizes < 2]).all()


@pytest.mark.parametrize("name", NAMES)
@given(problem=two_rankings(), n_threads=st.sampled_from([1, 2]))
def test_twins_agree_bit_for_bit(name, problem, n_threads):
    a, b, offsets = problem
    originals = [x.copy() for x in problem]
    with threads(n_threads):
        result = assert_twins_agree(("rank_correlation", name), a, b, offsets)
    assert result.tolerance_name == "exact" and result.max_abs_diff == 0
    np.testing.assert_array_equal(getattr(fast, name)(a, b, offsets), getattr(ref, name)(a, b, offsets))
    for before, after in zip(originals, problem):
        np.testing.assert_array_equal(before, after)


@settings(max_examples=20)
@given(problem=two_rankings(max_queries=60, max_docs=40))
def test_many_queries_on_all_threads(problem):
    a, b, offsets = problem
    for name in NAMES:
        np.testing.assert_array_equal(getattr(fast, name)(a, b, offsets), getattr(ref, name)(a, b, offsets))


def test_long_queries_in_blocks(monkeypatch):
    rng = np.random.default_rng(5)
    offsets = np.array([0, 700, 1900, 1901, 3000])
    a = np.round(rng.standard_normal(3000), 1)  # ties in long queries
    b = a + np.round(rng.standard_normal(3000), 1)
    expected = {name: scipy_values(name, a, b, offsets) for name in NAMES}
    monkeypatch.setattr(ref, "TAU_PAIR_BLOCK", 1000)  # a query's pairs in many blocks of rows
    for name in NAMES:
        np.testing.assert_allclose(getattr(ref, name)(a, b, offsets), expected[name], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(getattr(fast, name)(a, b, offsets), getattr(ref, name)(a, b, offsets))


@given(problem=two_rankings())
def test_properties(problem):
    a, b, offsets = problem
    sizes = np.diff(offsets)
    tau, rho, foot = (getattr(ref, name)(a, b, offsets) for name in NAMES)
    for value in (tau, rho):
        assert np.all((np.abs(value) <= 1) | np.isnan(value))
    assert np.all(((foot >= 0) & (foot <= 1)) | np.isnan(foot))
    assert np.array_equal(np.isnan(foot), sizes < 2)  # the footrule is defined from two documents on
    for name in NAMES:  # symmetric; descending ranks (both negated) change nothing; a monotone map neither
        f = getattr(ref, name)
        np.testing.assert_array_equal(f(b, a, offsets), f(a, b, offsets))
        np.testing.assert_array_equal(f(-a, -b, offsets), f(a, b, offsets))
        np.testing.assert_array_equal(f(np.arctan(a), b, offsets), f(a, b, offsets))
    same = [ref.kendall_tau(a, a, offsets), ref.spearman_rho(a, a, offsets)]
    untied = np.array([len(set(a[lo:hi])) > 1 for lo, hi in per_query(offsets)])  # tau, rho defined
    for value in same:
        np.testing.assert_array_equal(value[untied], 1.0)
        assert np.isnan(value[~untied]).all()
    np.testing.assert_array_equal(ref.footrule(a, a, offsets)[sizes >= 2], 0.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_reversed_ranking_is_the_extreme(n):
    x = np.arange(n, dtype=np.float64)
    offsets = np.array([0, n])
    for twin in (ref, fast):
        assert twin.kendall_tau(x, -x, offsets)[0] == -1.0
        assert twin.spearman_rho(x, -x, offsets)[0] == -1.0
        assert twin.footrule(x, -x, offsets)[0] == 1.0
        assert twin.footrule(x, x[::-1].copy(), offsets)[0] == 1.0


def test_a_worked_query_with_ties():
    # a ranks 3 documents (two tied), b orders all three: average ranks a (1.5, 1.5, 3), b (1, 2, 3)
    a, b, offsets = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 2.0]), np.array([0, 3])
    # tau-b: S = 2 (pairs (1,3), (2,3) concordant; (1,2) tied in a), n0 = 3, n1 = 1, n2 = 0
    assert ref.kendall_tau(a, b, offsets)[0] == pytest.approx(2 / np.sqrt(2 * 3), abs=1e-15)
    assert ref.spearman_rho(a, b, offsets)[0] == pytest.approx(np.sqrt(3) / 2, abs=1e-15)
    assert ref.footrule(a, b, offsets)[0] == 1.0 / 4  # |1.5 - 1| + |1.5 - 2| + 0 over floor(9/2)


def test_the_registry_rows_agree_on_tied_data():
    from twinrank.reference.io.data import Dataset

    rng = np.random.default_rng(0)
    data = Dataset(rng.random((40, 2)), rng.integers(0, 3, 40), [0, 1, 1, 9, 25, 40])
    for name in NAMES:
        row = get(name)
        assert (row.layer, row.module, row.function, row.tolerance) == ("metrics", "rank_correlation", name, "exact")
        assert assert_twins_agree(name, data, seed=3).passed


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_a_parameter_error(twin, name):
    f = getattr(twin, name)
    a = np.array([0.5, 0.25, 1.0])
    with pytest.raises(ParameterError, match="same length"):
        f(a, a[:2], [0, 3])
    with pytest.raises(ParameterError, match="1-D"):
        f(a[None, :], a[None, :], [0, 3])
    with pytest.raises(ParameterError, match=r"scores_b\[1\] is NaN"):
        f(a, np.array([0.0, np.nan, 1.0]), [0, 3])
    for offsets in ([0, 2], [1, 3], [0, 2, 1, 3], []):
        with pytest.raises(ParameterError, match="query_offsets"):
            f(a, a, offsets)
    assert f(np.zeros(0), np.zeros(0), [0]).shape == (0,)

"""Significance tests: the t distribution against SciPy (an oracle nobody here wrote), the
randomization test against exact enumeration, the two twins against each other, bad input."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import twinrank.fast.evaluation.stats as fast
import twinrank.reference.evaluation.stats as ref
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import ndcg
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.sampling import make_rng, sign_flips

scipy_stats = pytest.importorskip("scipy.stats")
TWINS = [ref, fast]


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 119, 1000, 6000])
def test_t_distribution_matches_scipy(twin, df):
    for t in [-80.0, -4.5, -2.0, -0.3, 0.0, 0.01, 1.7, 3.3, 12.0]:
        assert abs(twin.t_cdf(t, df) - scipy_stats.t.cdf(t, df)) <= 1e-10  # the bar: 1e-9
    for q in [1e-6, 0.0005, 0.025, 0.1, 0.5, 0.8, 0.975, 0.9995]:
        expected = scipy_stats.t.ppf(q, df)
        assert abs(twin.t_ppf(q, df) - expected) <= 1e-9 * max(1.0, abs(expected))


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_incomplete_beta_matches_scipy(twin):
    special = pytest.importorskip("scipy.special")
    for a, b, x in [(0.5, 0.5, 0.3), (2.0, 3.0, 0.9), (50.0, 0.5, 0.97), (3000.0, 0.5, 0.999), (1.0, 1.0, 0.25)]:
        assert abs(twin.betainc(a, b, x) - special.betainc(a, b, x)) <= 1e-12


@pytest.fixture(scope="module")
def two_rankers():
    """Per-query NDCG@10 of two real rankers on MQ2008 Fold1's test set: feature 38 (BM25-like) and
    feature 25, each scoring documents on its own."""
    _, _, test = load_mq2008(1)
    return tuple(ndcg(test.y, test.X[:, f].astype(np.float64), test.query_offsets, k=10) for f in (37, 24))


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_t_test_matches_scipy(twin, two_rankers, alternative):
    a, b = two_rankers
    ours = twin.paired_t_test(a, b, alternative=alternative, confidence=0.9)
    theirs = scipy_stats.ttest_rel(a, b, alternative=alternative)
    assert ours.df == theirs.df == len(a) - 1
    assert abs(ours.t_statistic - theirs.statistic) <= 1e-9 and abs(ours.p - theirs.pvalue) <= 1e-9
    if alternative == "two-sided":
        low, high = theirs.confidence_interval(0.9)
        assert abs(ours.ci_low - low) <= 1e-9 and abs(ours.ci_high - high) <= 1e-9


def exact_p(d, alternative):
    """The randomization p-value over all 2^n sign vectors (the test's exact value)."""
    t = np.array([np.dot(s, d) for s in itertools.product([1.0, -1.0], repeat=len(d))])
    observed, eps = d.sum(), 1e-9 * np.abs(d).sum()
    return {"two-sided": np.mean(np.abs(t) >= abs(observed) - eps), "greater": np.mean(t >= observed - eps),
            "less": np.mean(t <= observed + eps)}[alternative]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_randomization_p_is_near_the_exact_enumeration(two_rankers, alternative):
    a, b = (v[:12] for v in two_rankers)
    d = a - b
    p = ref.randomization_test(a, b, n_permutations=20_000, alternative=alternative, seed=3)
    exact = exact_p(d, alternative)
    assert abs(p - exact) <= 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-12


def test_randomization_p_is_near_scipys_permutation_test(two_rankers):
    a, b = two_rankers
    theirs = scipy_stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                          n_resamples=20_000, random_state=0).pvalue
    ours = ref.randomization_test(a, b, n_permutations=20_000, seed=0)
    assert abs(ours - theirs) <= 0.015 and ours < 0.05


@given(st.lists(st.floats(-1, 1).map(lambda v: round(v * 256) / 256), min_size=2, max_size=30),
       st.integers(0, 2**32 - 1), st.sampled_from(["two-sided", "greater", "less"]))
def test_twins_give_the_same_randomization_p(values, seed, alternative):
    a = np.array(values)
    b = np.roll(a, 1) * 0.5
    p = [t.randomization_test(a, b, n_permutations=500, alternative=alternative, seed=seed) for t in TWINS]
    assert p[0] == p[1]


def test_twins_compare_agree_on_real_rankers(two_rankers):
    r, f = (t.compare(*two_rankers, n_permutations=2000, seed=5) for t in TWINS)
    assert r.randomization_p == f.randomization_p and r.mean_a == f.mean_a
    assert abs(r.t_p - f.t_p) <= 1e-13 and abs(r.ci_low - f.ci_low) <= 1e-12


def test_sign_flips_do_not_depend_on_the_chunking():
    whole = np.concatenate(list(sign_flips(make_rng(1), 37, 10)))
    chunked = np.concatenate(list(sign_flips(make_rng(1), 37, 10, chunk_values=30)))
    assert whole.shape == (37, 10) and np.array_equal(whole, chunked)
    assert 0.4 < whole.mean() < 0.6


def test_verdict_and_one_sided_tests():
    a = np.linspace(0.2, 0.8, 40)
    worse = a - 0.05
    assert ref.randomization_test(worse, a, alternative="less", n_permutations=2000) < 0.01
    assert not ref.not_significantly_worse(worse, a, n_permutations=2000)
    assert ref.not_significantly_worse(a, worse, n_permutations=2000)
    assert ref.not_significantly_worse(a, a, n_permutations=2000)  # identical: p = 1
    assert ref.randomization_test(a, a) == 1.0


def test_seed_variance():
    s = ref.seed_variance([0.5, 0.6, 0.7])
    assert (s.n, s.mean) == (3, pytest.approx(0.6)) and s.variance == pytest.approx(0.01)
    assert s.std == pytest.approx(0.1)
    with pytest.raises(ParameterError):
        ref.seed_variance([0.5])


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_bad_input_is_a_clear_error(twin):
    with pytest.raises(ParameterError, match="NaN"):
        twin.compare([0.1, float("nan"), 0.3], [0.1, 0.2, 0.3])
    with pytest.raises(ParameterError, match="3 per-query values but b has 2"):
        twin.randomization_test([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ParameterError, match="alternative"):
        twin.paired_t_test([0.1, 0.2], [0.3, 0.1], alternative="bigger")
    with pytest.raises(ParameterError, match="n_permutations"):
        twin.randomization_test([0.1, 0.2], [0.3, 0.1], n_permutations=0)


def test_differences_without_variance_leave_t_undefined():
    t = ref.paired_t_test([0.5, 0.6, 0.7], [0.4, 0.5, 0.6])
    assert math.isnan(t.t_statistic) and math.isnan(t.p)
    assert ref.compare([0.5, 0.6, 0.7], [0.4, 0.5, 0.6]).as_dict()["t_p"] is None

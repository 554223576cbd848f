"""Bias and variance (pointwise; listwise SRE/VRE): the twins agree on score matrices with ties,
one-document queries and MQ2008; SRE + signed VRE is the mean ranking error; the experiment trains
through the runs layer (in process and on a Dask LocalCluster) and checks its arguments first."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import twinrank.fast.analysis.diagnostics as fast
import twinrank.reference.analysis.diagnostics as reference
from twinrank.executors import DaskExecutor
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008

TWINS = [reference, fast]
ARRAYS = ("bias2_d", "variance_d", "sre_q", "vre_q", "vre_signed_q", "error_q")


@st.composite
def matrices(draw):
    """(P, y, query_offsets): tied scores on a grid of 1/2, one-document and label-free queries."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))
    n = sum(sizes)
    B = draw(st.integers(2, 6))
    P = np.array(draw(st.lists(st.integers(-4, 4), min_size=B * n, max_size=B * n)), float).reshape(B, n) / 2
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), float)
    return P, y, np.r_[0, np.cumsum(sizes)]


def assert_same(a, b, tol=0.0):
    assert a.numbers() == pytest.approx(b.numbers(), rel=tol, abs=tol, nan_ok=True)
    for name in ARRAYS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=tol, atol=tol)
    np.testing.assert_array_equal(a.included, b.included)


@given(matrices(), st.sampled_from(["ndcg", "ndcg@3", "meanndcg"]), st.sampled_from(["lightgbm", "letor"]),
       st.integers(0, 1), st.booleans())
def test_twins_agree_on_tied_scores_and_one_document_queries(m, metric, convention, ddof, include):
    P, y, offsets = m
    a, b = (t.decompose(P, y, offsets, metric=metric, convention=convention, ddof=ddof,
                        include_no_relevant=include) for t in TWINS)
    assert_same(a, b, 1e-12)
    # the signed VRE closes the sum exactly, query by query and on average
    np.testing.assert_allclose(a.sre_q + a.vre_signed_q, a.error_q, rtol=0, atol=1e-12)
    assert a.sre + a.vre_signed == pytest.approx(a.error, abs=1e-12, nan_ok=True)
    assert np.all(a.vre_q >= 0) and np.all(a.vre_q * (P.shape[0] - ddof) >= a.vre_signed_q * P.shape[0] - 1e-12)
    # mse = bias2 + (B - ddof) / B variance, document by document
    B = P.shape[0]
    assert a.mse == pytest.approx(a.bias2 + (B - ddof) / B * a.variance, abs=1e-12)


def test_twins_agree_on_mq2008_and_no_relevant_queries_are_counted():
    test = load_mq2008(1)[2]
    rng = np.random.default_rng(3)
    P = np.round(rng.standard_normal((6, test.n_rows)) * 4) / 4  # ties inside queries
    out = {}
    for include in (False, True):
        a, b = (t.decompose(P, test.y, test.query_offsets, metric="ndcg@10", include_no_relevant=include)
                for t in TWINS)
        assert_same(a, b, 1e-12)
        out[include] = a
    no_relevant = np.array([not np.any(test.y[lo:hi] > 0) for lo, hi in zip(test.query_offsets[:-1],
                                                                            test.query_offsets[1:])])
    assert out[False].n_excluded == out[True].n_excluded == no_relevant.sum() > 0
    np.testing.assert_array_equal(out[False].included, ~no_relevant)
    # under lightgbm's convention such a query scores 1 for every model: SRE 0, VRE 0
    assert np.all(out[True].sre_q[no_relevant] == 0) and np.all(out[True].vre_q[no_relevant] == 0)
    assert out[False].sre == pytest.approx(out[True].sre * len(no_relevant) / (~no_relevant).sum())


def test_identical_models_have_no_variance():
    test = load_mq2008(1)[2]
    P = np.tile(np.arange(test.n_rows, dtype=float) % 7, (4, 1))
    for twin in TWINS:
        d = twin.decompose(P, test.y, test.query_offsets)
        assert d.variance == d.vre == d.vre_signed == 0 and d.sre == pytest.approx(d.error, abs=1e-15)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_bad_matrices_and_metrics(twin):
    y, offsets = np.array([1.0, 0.0]), np.array([0, 2])
    with pytest.raises(ParameterError, match="ddof"):
        twin.decompose(np.zeros((1, 2)), y, offsets)
    with pytest.raises(ParameterError, match="shape"):
        twin.decompose(np.zeros((3, 3)), y, offsets)
    with pytest.raises(ParameterError, match="1 - metric"):
        twin.decompose(np.zeros((3, 2)), y, offsets, metric="map")


# ---------------------------------------------------------------- experiments


@pytest.fixture(scope="module")
def small():
    train, _, test = load_mq2008(1)
    return train.take_queries(range(60)), test.take_queries(range(40))


def forest(twin):
    from twinrank import fast as f, reference as r
    return (r if twin is reference else f).RandomForest


def never_called(**params):
    raise AssertionError("a model was built before the arguments were checked")


@pytest.mark.parametrize("bad, match", [
    (dict(n_models=1), "n_models"), (dict(method="twofold", n_repeats=0), "n_repeats"),
    (dict(fraction=0.0), "fraction"), (dict(fraction=1.5), "fraction"), (dict(method="jackknife"), "method"),
    (dict(metric="err"), "1 - metric"), (dict(ddof=10, n_models=3), "ddof")])
def test_bad_arguments_fail_before_training(small, bad, match):
    for twin in TWINS:
        with pytest.raises(ParameterError, match=match):
            twin.bias_variance(never_called, *small, **bad)


def test_a_test_set_of_another_width_fails_before_training(small):
    train, test = small
    narrow = Dataset(test.X[:, :10], test.y, test.query_offsets)
    for twin in TWINS:
        with pytest.raises(ParameterError, match="10 features but the training set has 46"):
            twin.bias_variance(never_called, train, narrow)


def test_training_sets_and_seeds():
    boot = reference.draw_training_sets(50, method="bootstrap", n_models=4, fraction=0.3, seed=2)
    assert [len(s) for s in boot] == [15] * 4 and all(np.all(np.diff(s) > 0) for s in boot)
    two = reference.draw_training_sets(51, method="twofold", n_repeats=3, seed=2)
    for a, b in zip(two[::2], two[1::2]):
        assert sorted(np.r_[a, b]) == list(range(51)) and len(a) == 25
    assert not np.array_equal(two[0], two[2])


@pytest.mark.slow
@pytest.mark.parametrize("method", ["bootstrap", "twofold"])
def test_the_twins_estimators_give_the_same_numbers(small, method):
    kwargs = dict(method=method, n_models=3, n_repeats=1, fraction=0.5, seed=4, metric="ndcg@5",
                  params=dict(n_trees=3, min_samples_leaf=20, query_subsample=0.5))
    a, b = (t.bias_variance(forest(t), *small, **kwargs) for t in TWINS)
    assert a.scores.scores.shape == (3 if method == "bootstrap" else 2, small[1].n_rows)
    np.testing.assert_allclose(a.scores.scores, b.scores.scores, rtol=1e-9, atol=1e-12)
    assert_same(a, b, 1e-9)
    # the result is the decomposition of its own score matrix
    assert_same(a, reference.decompose(a.scores.scores, a.scores.y, a.scores.query_offsets, metric="ndcg@5"))
    # model seeds are not the samples' seeds: the models of one setting differ
    assert len({tuple(row) for row in a.scores.scores}) == a.scores.scores.shape[0]


def test_twofold_averages_the_repeats_estimates_as_eqs_16_17(small):
    """Each repeat's two models decomposed around their own mean, 1/(2-1), then averaged over
    the repeats; ``pooled`` decomposes all 2J models around one mean, 1/(2J-1)."""
    kwargs = dict(method="twofold", n_repeats=3, seed=3, params=dict(n_trees=2, min_samples_leaf=20))
    paper = fast.bias_variance(forest(fast), *small, **kwargs)
    pooled = fast.bias_variance(forest(fast), *small, pooled=True, **kwargs)
    P, y, offsets = paper.scores.scores, paper.scores.y, paper.scores.query_offsets
    np.testing.assert_array_equal(P, pooled.scores.scores)  # the same models, in repeat order
    repeats = [reference.decompose(P[2 * j:2 * j + 2], y, offsets) for j in range(3)]
    for name in ("bias2", "variance", "mse", "sre", "vre", "vre_signed", "error"):
        by_hand = np.mean([getattr(r, name) for r in repeats])
        assert getattr(paper, name) == pytest.approx(by_hand, rel=1e-12, abs=1e-15), name
    by_hand_variance = np.mean([((P[2 * j:2 * j + 2] - P[2 * j:2 * j + 2].mean(axis=0)) ** 2).sum(axis=0)
                                for j in range(3)], axis=0).mean()
    assert paper.variance == pytest.approx(by_hand_variance, rel=1e-12)
    assert_same(pooled, reference.decompose(P, y, offsets))
    assert pooled.pooled and not paper.pooled and paper.vre != pytest.approx(pooled.vre)


def test_the_bootstrap_samples_hold_63_percent_of_the_queries_by_default():
    samples = reference.draw_training_sets(100, method="bootstrap", n_models=2)
    assert [len(s) for s in samples] == [63, 63]


@pytest.fixture(scope="module")
def swept(small):
    calls = []
    out = fast.sweep(forest(fast), *small, "query_subsample", [0.2, 1.0], n_models=3, seed=5,
                     params=dict(n_trees=4, min_samples_leaf=10), progress=lambda *a: calls.append(a[:2]))
    return out, calls


def test_sweep_trains_every_setting_and_reports_progress(swept):
    out, calls = swept
    assert [r.params["query_subsample"] for r in out] == [0.2, 1.0]
    assert [c for c in calls] == [(i, 6) for i in range(1, 7)]
    assert not np.array_equal(out[0].scores.scores, out[1].scores.scores)


def test_dask_local_cluster_gives_the_same_numbers(small, swept):
    pytest.importorskip("distributed")
    executor = DaskExecutor(workers=2)
    try:
        out = fast.sweep(forest(fast), *small, "query_subsample", [0.2, 1.0], n_models=3, seed=5,
                         params=dict(n_trees=4, min_samples_leaf=10), executor=executor)
    finally:
        executor.close()
    for a, b in zip(out, swept[0]):
        np.testing.assert_array_equal(a.scores.scores, b.scores.scores)
        assert_same(a, b)


@pytest.mark.slow
def test_pointwise_variance_grows_with_the_per_tree_subsample_on_mq2008():
    """The paper's pointwise trade-off (Figs. 5-6) on MQ2008 Fold 1: trees that see more queries vary
    more across training sets. 40 trees (few trees add their own randomness to every p), 4 samples.

    With 4 samples the ratio of the two variances is itself noisy: 1.37, 1.43, 1.87 and 2.02 for
    seeds 0-3 (measured), so the test asks for the direction with a margin of 1.25, not for one
    seed's ratio."""
    train, _, test = load_mq2008(1)
    low, high = fast.sweep(forest(fast), train, test, "query_subsample", [0.05, 1.0], n_models=4, seed=0,
                           params=dict(n_trees=40, bootstrap=False))
    assert high.variance > 1.25 * low.variance
    assert high.bias2 < low.bias2

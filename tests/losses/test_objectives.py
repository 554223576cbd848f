"""Objectives: reference vs fast agreement, a plain pairwise oracle, properties, bad input.

The oracle recomputes every $|\\Delta Z_{ij}|$ by swapping two documents and evaluating
NDCG@k, AP or ERR@k from scratch with the textbook formulas below, so it shares no
code and no algebra with either twin's O(1)-per-pair deltas.
"""
import functools
import itertools
import math

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from twinrank.fast.losses import objectives as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.losses import objectives as ref

TWINS = pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
RTOL = 1e-10  # fast vs reference: sums in another order, e^{x_a - x_b} as a product


# ---------------------------------------------------------------- strategies

@st.composite
def ranking_problems(draw, max_queries=4, max_docs=7, far_scores=True):
    """(y, scores, query_offsets): tiny queries (empty, one document, all one label are
    common), scores on a 1/4 grid (ties), now and then scores +-512 apart."""
    sizes = draw(st.lists(st.integers(0, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    grades = draw(st.sampled_from([(0.0, 1.0, 2.0, 3.0), (0.0, 1.0), (0.0, 0.5, 1.5, 4.0)]))
    y = np.array(draw(st.lists(st.sampled_from(grades), min_size=n, max_size=n)), dtype=np.float64)
    score = st.integers(-8, 8).map(lambda v: v / 4.0)
    if far_scores:
        score = score | st.sampled_from([-512.0, 512.0])
    scores = np.array(draw(st.lists(score, min_size=n, max_size=n)), dtype=np.float64)
    return y, scores, np.r_[0, np.cumsum(sizes)].astype(np.int64)


@st.composite
def lambdarank_options(draw, n_queries):
    metric = draw(st.sampled_from(ref.LAMBDA_METRICS))
    options = {
        "metric": metric,
        "sigma": draw(st.sampled_from([0.5, 1.0, 2.0])),
        "truncation": draw(st.none() | st.integers(1, 8)),
        "normalize": draw(st.booleans()),
        "queries": draw(st.none() | st.lists(st.integers(0, n_queries - 1), unique=True).map(np.array)),
    }
    if metric != "map":
        options["k"] = draw(st.none() | st.integers(1, 9))
    if metric == "ndcg":
        options["gain"] = draw(st.sampled_from(ref.GAINS))
    return options


def copies(*arrays):
    return [np.array(a, copy=True) for a in arrays]


def assert_twins_agree(reference, fast_result):
    for r, f in zip(reference, fast_result):
        np.testing.assert_allclose(f, r, rtol=RTOL, atol=RTOL * (1.0 + np.abs(r).max(initial=0.0)))


# ---------------------------------------------------------------- the oracle

def dcg(labels, k, gain):
    value = lambda label: 2.0**label - 1.0 if gain == "exp2" else label  # noqa: E731
    return sum(value(label) / math.log2(rank + 1) for rank, label in enumerate(labels[:k], start=1))


def ndcg(labels, k=None, gain="exp2"):
    ideal = dcg(sorted(labels, reverse=True), k, gain)
    return dcg(labels, k, gain) / ideal if ideal > 0 else 0.0


def average_precision(labels):
    hits, total = 0, 0.0
    for rank, label in enumerate(labels, start=1):
        if label > 0:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def err(labels, k=None, l_max=0.0):
    reach, total = 1.0, 0.0
    for rank, label in enumerate(labels[:k], start=1):
        stop = (2.0**label - 1.0) / 2.0**l_max
        total += reach * stop / rank
        reach *= 1.0 - stop
    return total


def pairwise_delta_z(y, scores, metric, k, gain, l_max):
    """{(i, j): |Delta Z_ij|} of one query, by swapping i and j in the ranking and recomputing."""
    ranking = sorted(range(len(y)), key=lambda i: -scores[i])  # Python's sort is stable
    metric_of = {"ndcg": lambda labels: ndcg(labels, k, gain), "map": average_precision,
                 "err": lambda labels: err(labels, k, l_max)}[metric]
    before = metric_of([y[i] for i in ranking])
    deltas = {}
    for i in range(len(y)):
        for j in range(len(y)):
            swapped = [j if d == i else i if d == j else d for d in ranking]
            deltas[i, j] = abs(metric_of([y[d] for d in swapped]) - before)
    return deltas, {d: position for position, d in enumerate(ranking)}


def pairwise_lambdarank(y, scores, query_offsets, metric="ndcg", k=None, sigma=1.0, truncation=None,
                        gain="exp2", normalize=False, queries=None):
    """LambdaRank written as the papers write it: a double loop over the pairs with y_i > y_j.

    A query whose scores all tie has no ranking yet; for NDCG its un-normalised lambdas are
    their mean over every order of its documents (each order a permutation of the input)."""
    g, h = np.zeros(len(y)), np.zeros(len(y))
    queries = range(len(query_offsets) - 1) if queries is None else queries
    for q in queries:
        lo, hi = query_offsets[q], query_offsets[q + 1]
        yq, sq = list(y[lo:hi]), list(scores[lo:hi])
        options = (metric, k, sigma, truncation, gain, normalize, max(y, default=0.0))
        if metric == "ndcg" and len(yq) > 1 and max(sq) == min(sq):
            orders = list(itertools.permutations(range(len(yq))))
            lambdas, hessians, total = np.zeros(len(yq)), np.zeros(len(yq)), 0.0
            for order in orders:  # the documents in this order, then the sums back to their rows
                lam, hess, tot = query_pairs([yq[d] for d in order], sq, *options)
                lambdas[list(order)] += np.array(lam) / len(orders)
                hessians[list(order)] += np.array(hess) / len(orders)
                total += tot / len(orders)
        else:
            lambdas, hessians, total = query_pairs(yq, sq, *options)
        scale = math.log2(1 + total) / total if normalize and total > 0 else 1.0
        g[lo:hi] = [-scale * lam for lam in lambdas]
        h[lo:hi] = [scale * hess for hess in hessians]
    return g, h


def query_pairs(yq, sq, metric, k, sigma, truncation, gain, normalize, l_max):
    """One query's un-normalised lambdas and hessians (lists) and S, the sum of its pairs' 2 lambda_ij."""
    deltas, position = pairwise_delta_z(yq, sq, metric, k, gain, l_max)
    lambdas, hessians, total = [0.0] * len(yq), [0.0] * len(yq), 0.0
    for i in range(len(yq)):
        for j in range(len(yq)):
            if yq[i] <= yq[j] or (truncation is not None and min(position[i], position[j]) >= truncation):
                continue
            delta = deltas[i, j]
            if normalize and max(sq) != min(sq):
                delta /= float(np.float32(0.01)) + abs(sq[i] - sq[j])  # LightGBM's 0.01f
            rho = 1.0 / (1.0 + math.exp(sigma * (sq[i] - sq[j])))
            lambdas[i] += sigma * delta * rho
            lambdas[j] -= sigma * delta * rho
            hessians[i] += sigma**2 * delta * rho * (1 - rho)
            hessians[j] += sigma**2 * delta * rho * (1 - rho)
            total += 2 * sigma * delta * rho
    return lambdas, hessians, total


# ---------------------------------------------------------------- agreement

@given(data=st.data())
def test_lambdarank_twins_agree(data):
    y, scores, offsets = data.draw(ranking_problems())
    options = data.draw(lambdarank_options(len(offsets) - 1))
    expected = ref.lambdarank(*copies(y, scores, offsets), **options)
    assert_twins_agree(expected, fast.lambdarank(*copies(y, scores, offsets), **options))


@pytest.mark.parametrize("metric, k", [("ndcg", None), ("ndcg", 10), ("map", None), ("err", None),
                                       ("err", 5)])
@pytest.mark.parametrize("truncation, normalize", [(None, False), (20, False), (None, True)])
def test_lambdarank_twins_agree_on_long_queries(metric, k, truncation, normalize):
    """Queries of up to 150 documents, grades 0..4, one query with scores too far apart for
    the fast twin's factored exponentials (it then takes one exponential per pair)."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 151, 30)
    y = rng.choice(5, sizes.sum(), p=[0.5, 0.3, 0.12, 0.05, 0.03]).astype(np.float64)
    scores = rng.normal(size=sizes.sum()) * 3
    scores[:sizes[0]] *= 300.0
    offsets = np.r_[0, np.cumsum(sizes)]
    options = dict(metric=metric, k=k, truncation=truncation, normalize=normalize)
    assert_twins_agree(ref.lambdarank(*copies(y, scores, offsets), **options),
                       fast.lambdarank(*copies(y, scores, offsets), **options))


def test_fast_lambdarank_does_not_depend_on_thread_count():
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 40, 300)  # several blocks of 64 queries
    y = rng.integers(0, 5, sizes.sum()).astype(np.float64)
    scores = rng.normal(size=sizes.sum())
    offsets = np.r_[0, np.cumsum(sizes)]
    before = numba.get_num_threads()
    try:
        results = []
        for threads in {1, before}:
            numba.set_num_threads(threads)
            results.append(fast.lambdarank(y, scores, offsets, truncation=10))
    finally:
        numba.set_num_threads(before)
    for g, h in results[1:]:
        np.testing.assert_array_equal(g, results[0][0])
        np.testing.assert_array_equal(h, results[0][1])


@given(data=st.data(), start=st.sampled_from(["earlier order", "reversed", "garbage"]))
def test_the_fast_loss_warm_start_changes_nothing_and_keeps_the_new_order(data, start):
    """The fast boosting loss sorts each query from its last round's order (``LambdaRank.ranking``):
    from an earlier round's order, the reverse of one (the most swaps: the insertion sort gives up)
    or garbage (not a permutation: it sorts afresh), the gradients are those of a fresh sort."""
    y, scores, offsets = data.draw(ranking_problems() | ranking_problems(max_queries=2, max_docs=70))
    options = data.draw(lambdarank_options(len(offsets) - 1))
    queries = options.pop("queries")
    loss = fast.LambdaRank(y, offsets, **options)
    earlier = scores + data.draw(st.sampled_from([0.0, 0.25, -1.0]))
    earlier[::3] = -earlier[::3]
    loss.ranking[:] = ref.rank_order(earlier, offsets)
    if start == "reversed":
        for lo, hi in zip(offsets[:-1], offsets[1:]):
            loss.ranking[lo:hi] = loss.ranking[lo:hi][::-1].copy()
    elif start == "garbage":
        loss.ranking[:] = np.arange(len(y))[::-1] * 7 - 3
    before = loss.ranking.copy()
    g, h = np.empty(len(y)), np.empty(len(y))
    loss.gradients(scores.copy(), None if queries is None else np.asarray(queries, np.int64), g, h)
    expected_g, expected_h = fast.lambdarank(*copies(y, scores, offsets), queries=queries, **options)
    np.testing.assert_array_equal(g, expected_g)
    np.testing.assert_array_equal(h, expected_h)
    computed = range(len(offsets) - 1) if queries is None else queries
    order = ref.rank_order(scores, offsets)
    for q in range(len(offsets) - 1):
        rows = slice(offsets[q], offsets[q + 1])
        np.testing.assert_array_equal(loss.ranking[rows], order[rows] if q in computed else before[rows])


@given(problem=ranking_problems() | ranking_problems(max_queries=2, max_docs=70))
def test_rank_order_twins_agree(problem):
    """Long queries too: the fast merge sort starts with insertion-sorted runs of 16."""
    _, scores, offsets = problem
    order = ref.rank_order(scores, offsets)
    np.testing.assert_array_equal(fast.rank_order(*copies(scores, offsets)), order)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        np.testing.assert_array_equal(order[lo:hi], lo + np.argsort(-scores[lo:hi], kind="stable"))


@given(y=st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=0, max_size=20),
       s=st.lists(st.floats(-800, 800), min_size=20, max_size=20))
def test_pointwise_twins_agree(y, s):
    y, s = np.array(y), np.array(s[:len(y)])
    for name in ("squared_error", "logistic"):
        expected = getattr(ref, name)(*copies(y, s))
        assert_twins_agree(expected, getattr(fast, name)(*copies(y, s)))


# ---------------------------------------------------------------- oracles

@TWINS
@given(data=st.data())
def test_lambdarank_matches_pairwise_oracle(twin, data):
    y, scores, offsets = data.draw(ranking_problems(max_docs=6, far_scores=False))
    options = data.draw(lambdarank_options(len(offsets) - 1))
    g, h = twin.lambdarank(y, scores, offsets, **options)
    expected_g, expected_h = pairwise_lambdarank(y, scores, offsets, **options)
    np.testing.assert_allclose(g, expected_g, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, expected_h, rtol=1e-9, atol=1e-12)


TIED_Y = np.array([2.0, 0.0, 1.0, 0.0, 3.0, 1.0, 0.0, 1.0, 0.0, 0.0, 2.0])
TIED_OFFSETS = np.array([0, 7, 8, 11])


@functools.cache
def tied_query_oracle(truncation, k, normalize):
    """The oracle's lambdas of the tied query (its 7! orders: seconds), computed once for both twins."""
    g, h = pairwise_lambdarank(TIED_Y, np.zeros(len(TIED_Y)), TIED_OFFSETS, k=k, truncation=truncation,
                               normalize=normalize)
    g.flags.writeable = h.flags.writeable = False
    return g, h


@TWINS
@pytest.mark.parametrize("truncation, k", [(None, None), (3, None), (None, 2), (30, 10), (1, 4)])
@pytest.mark.parametrize("normalize", [False, True])
def test_tied_query_takes_the_mean_over_every_order(twin, truncation, k, normalize):
    """A query whose scores all tie: its NDCG lambdas are those of a random order, in expectation
    (all 7! orders), with a one-document query and a query of one label beside it."""
    y, offsets = TIED_Y.copy(), TIED_OFFSETS.copy()
    g, h = twin.lambdarank(y, np.zeros(len(y)), offsets, k=k, truncation=truncation, normalize=normalize)
    expected_g, expected_h = tied_query_oracle(truncation, k, normalize)
    np.testing.assert_allclose(g, expected_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, expected_h, rtol=1e-12, atol=1e-15)
    assert np.all(g[7:8] == 0.0) and np.any(g[8:] != 0.0)


@TWINS
def test_tied_lambdas_do_not_depend_on_the_input_order(twin):
    """Round one of boosting (every score 0): permuting a query's documents permutes the lambdas."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, 300).astype(np.float64)
    offsets = np.array([0, 120, 121, 300])
    permutation = np.r_[rng.permutation(120), 120, 121 + rng.permutation(179)]
    for options in ({}, {"k": 10}, {"k": 30, "normalize": True}, {"truncation": 30, "gain": "linear"}):
        g, h = twin.lambdarank(y, np.zeros(300), offsets, **options)
        gp, hp = twin.lambdarank(y[permutation], np.zeros(300), offsets, **options)
        np.testing.assert_allclose(gp, g[permutation], rtol=1e-13, atol=1e-16)
        np.testing.assert_allclose(hp, h[permutation], rtol=1e-13, atol=1e-16)


def test_delta_ndcg_by_hand():
    """Labels (0, 2, 1) ranked in this order; swap positions 1 and 2 (0-based 0 and 1):
    |(2^0 - 1) - (2^2 - 1)| * |1/log2(2) - 1/log2(3)| / IDCG, IDCG = 3 + 1/log2(3)."""
    g, _ = ref.lambdarank(np.array([0.0, 2.0, 1.0]), np.array([3.0, 2.0, 1.0]), np.array([0, 3]), sigma=1.0)
    delta_01 = 3 * (1 - 1 / math.log2(3)) / (3 + 1 / math.log2(3))
    delta_02 = 1 * (1 - 1 / math.log2(4)) / (3 + 1 / math.log2(3))
    rho = lambda gap: 1 / (1 + math.exp(gap))  # noqa: E731
    assert g[0] == pytest.approx(delta_01 * rho(2.0 - 3.0) + delta_02 * rho(1.0 - 3.0), rel=1e-14)


@TWINS
def test_pointwise_formulas(twin):
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.5])
    s = np.array([-800.0, 40.0, -40.0, 3.0, 0.0, 1.5])
    g, h = twin.squared_error(y, s)
    np.testing.assert_array_equal(g, s - y)
    np.testing.assert_array_equal(h, np.ones(6))
    g, h = twin.logistic(y, s)
    p = np.array([math.exp(-800), 1 / (1 + math.exp(-40)), 1 / (1 + math.exp(40)),
                  1 / (1 + math.exp(-3)), 0.5, 1 / (1 + math.exp(-1.5))])
    one_minus_p = np.array([1.0, math.exp(-40) / (1 + math.exp(-40)), 1 / (1 + math.exp(-40)),
                            1 / (1 + math.exp(3)), 0.5, 1 / (1 + math.exp(1.5))])
    np.testing.assert_allclose(g, (1 - y) * p - y * one_minus_p, rtol=1e-14)  # g[1] = -4e-18, not 0
    np.testing.assert_allclose(h, p * one_minus_p, rtol=1e-14)


# ---------------------------------------------------------------- properties

@TWINS
@given(data=st.data())
def test_lambdas_sum_to_zero_per_query_and_hessians_are_nonnegative(twin, data):
    y, scores, offsets = data.draw(ranking_problems())
    g, h = twin.lambdarank(y, scores, offsets, **data.draw(lambdarank_options(len(offsets) - 1)))
    sizes = np.diff(offsets)
    per_query = np.add.reduceat(np.r_[g, 0.0], offsets[:-1])[sizes > 0]  # (n_nonempty,)
    scale = np.add.reduceat(np.r_[np.abs(g), 0.0], offsets[:-1])[sizes > 0]
    np.testing.assert_allclose(per_query, 0.0, atol=1e-12 * (1 + scale.max(initial=0)))
    assert np.all(h >= 0)


@TWINS
@given(data=st.data())
def test_sigma_scales_like_the_scores(twin, data):
    """rho depends on sigma * (s_i - s_j) only: g(sigma=2, s) = 2 g(sigma=1, 2 s), h with 4."""
    y, scores, offsets = data.draw(ranking_problems())
    options = data.draw(lambdarank_options(len(offsets) - 1)) | {"normalize": False}
    g2, h2 = twin.lambdarank(y, scores, offsets, **options | {"sigma": 2.0})
    g1, h1 = twin.lambdarank(y, 2 * scores, offsets, **options | {"sigma": 1.0})
    np.testing.assert_array_equal(g2, 2 * g1)
    np.testing.assert_array_equal(h2, 4 * h1)


@TWINS
@given(data=st.data())
@settings(suppress_health_check=[HealthCheck.filter_too_much])  # ties are common in the drawn scores
def test_permuting_documents_permutes_lambdas(twin, data):
    """With distinct scores, the input order of a query's documents does not matter."""
    y, scores, offsets = data.draw(ranking_problems())
    assume(len(np.unique(scores)) == len(scores))
    permutation = np.concatenate([lo + data.draw(st.permutations(range(hi - lo))) if hi > lo else []
                                  for lo, hi in zip(offsets[:-1], offsets[1:])]).astype(np.int64)
    options = data.draw(lambdarank_options(len(offsets) - 1))
    g, h = twin.lambdarank(y, scores, offsets, **options)
    gp, hp = twin.lambdarank(y[permutation], scores[permutation], offsets, **options)
    np.testing.assert_array_equal(gp, g[permutation])
    np.testing.assert_array_equal(hp, h[permutation])


@TWINS
@given(data=st.data())
def test_queries_subset_is_the_full_result_masked(twin, data):
    y, scores, offsets = data.draw(ranking_problems())
    options = data.draw(lambdarank_options(len(offsets) - 1))
    queries = options.pop("queries")
    assume(queries is not None)
    g, h = twin.lambdarank(y, scores, offsets, **options)
    gs, hs = twin.lambdarank(y, scores, offsets, queries=queries, **options)
    chosen = np.isin(np.repeat(np.arange(len(offsets) - 1), np.diff(offsets)), queries)  # (n_rows,)
    np.testing.assert_array_equal(gs, np.where(chosen, g, 0.0))
    np.testing.assert_array_equal(hs, np.where(chosen, h, 0.0))


@TWINS
@pytest.mark.parametrize("metric", ref.LAMBDA_METRICS)
def test_lambdas_are_the_gradient_of_the_frozen_ranknet_cost(twin, metric):
    r"""With the |Delta Z| frozen at the current ranking, g and h are the first and second
    derivatives of $C(s) = \sum_{y_i > y_j} |\Delta Z_{ij}| \log(1 + e^{-\sigma(s_i - s_j)})$:
    central finite differences."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 4, 9).astype(np.float64)
    scores = rng.normal(size=9)
    sigma = 1.5
    deltas, _ = pairwise_delta_z(list(y), list(scores), metric, None, "exp2", y.max())

    def cost(s):
        return sum(deltas[i, j] * math.log1p(math.exp(-sigma * (s[i] - s[j])))
                   for i in range(9) for j in range(9) if y[i] > y[j])

    g, h = twin.lambdarank(y, scores, np.array([0, 9]), metric=metric, sigma=sigma)
    eps = 1e-4
    for i in range(9):
        step = eps * np.eye(9)[i]
        up, mid, down = cost(scores + step), cost(scores), cost(scores - step)
        assert g[i] == pytest.approx((up - down) / (2 * eps), rel=1e-6, abs=1e-9)
        assert h[i] == pytest.approx((up - 2 * mid + down) / eps**2, rel=1e-4, abs=1e-7)


# ---------------------------------------------------------------- bad input

BAD_LAMBDARANK = [
    ({"metric": "mrr"}, "metric must be one of"),
    ({"gain": "log"}, "gain must be one of"),
    ({"metric": "err", "gain": "linear"}, "gain applies to metric='ndcg' only"),
    ({"metric": "map", "k": 5}, "no cutoff"),
    ({"k": 0}, "k must be >= 1"),
    ({"k": 2.5}, "k must be an integer"),
    ({"truncation": 0}, "truncation must be >= 1"),
    ({"sigma": 0.0}, "sigma must be > 0"),
    ({"sigma": float("nan")}, "sigma must be a finite number"),
    ({"normalize": "yes"}, "normalize must be True or False"),
    ({"queries": [0, 0]}, "must not repeat"),
    ({"queries": [2]}, r"indices in \[0, 2\)"),
    ({"queries": [0.5]}, "integer array"),
]


@TWINS
@pytest.mark.parametrize("options, message", BAD_LAMBDARANK)
def test_bad_lambdarank_options_are_rejected(twin, options, message):
    with pytest.raises(ParameterError, match=message):
        twin.lambdarank(np.array([0.0, 1.0, 2.0]), np.zeros(3), np.array([0, 2, 3]), **options)


@TWINS
@pytest.mark.parametrize("y, scores, offsets, message", [
    ([0.0, 1.0], [0.0, np.nan], [0, 2], r"scores\[1\] is not finite"),
    ([0.0, np.inf], [0.0, 0.0], [0, 2], r"y\[1\] is not finite"),
    ([0.0, -1.0], [0.0, 0.0], [0, 2], "labels must be >= 0"),
    ([0.0, 1.0], [0.0], [0, 2], "one length"),
    ([0.0, 1.0], [0.0, 0.0], [0, 1], "end at n_rows=2"),
    ([0.0, 1.0], [0.0, 0.0], [0, 2, 1, 2], "never decrease"),
    ([0.0, 1.0], [0.0, 0.0], [0.0, 2.0], "integer array"),
])
def test_bad_lambdarank_arrays_are_rejected(twin, y, scores, offsets, message):
    with pytest.raises(ParameterError, match=message):
        twin.lambdarank(np.array(y), np.array(scores), np.array(offsets))


@TWINS
def test_bad_pointwise_input_is_rejected(twin):
    with pytest.raises(ParameterError, match=r"logistic labels must be in \[0, 1\], got y\[1\] = 2.0"):
        twin.logistic(np.array([0.0, 2.0]), np.zeros(2))
    with pytest.raises(ParameterError, match="one length"):
        twin.squared_error(np.zeros(3), np.zeros(2))

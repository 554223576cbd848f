"""Weighted losses: every row's gradient and hessian times its weight, the baseline the weighted one;
both twins alike (the LightGBM oracle of the weighted lambdas is in ``test_objectives_lightgbm``)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.losses import objectives as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.losses import objectives as ref


@st.composite
def weighted_problem(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=6))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.float64)
    scores = np.array(draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n)), dtype=np.float64) / 4.0
    w = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    w[0] = 1.0
    return y, scores, np.r_[0, np.cumsum(sizes)], w


def gradients(loss, scores):
    g, h = np.empty(len(scores)), np.empty(len(scores))
    loss.gradients(scores, None, g, h)
    return g, h


@given(weighted_problem())
def test_weights_multiply_every_rows_gradient_and_hessian_in_both_twins(problem):
    y, scores, offsets, w = problem
    for twin in (ref, fast):
        for make in (lambda **k: twin.SquaredError(y, **k), lambda **k: twin.Logistic((y > 1).astype(float), **k),
                     lambda **k: twin.LambdaRank(y, offsets, normalize=True, **k)):
            g, h = gradients(make(weight=w), scores)
            g1, h1 = gradients(make(), scores)
            np.testing.assert_array_equal(g, g1 * w)
            np.testing.assert_array_equal(h, h1 * w)
    for ref_cls, fast_cls, labels in ((ref.SquaredError, fast.SquaredError, y),
                                      (ref.Logistic, fast.Logistic, (y > 1).astype(float))):
        np.testing.assert_array_equal(gradients(ref_cls(labels, weight=w), scores),
                                      gradients(fast_cls(labels, weight=w), scores))


def test_the_baselines_are_the_weighted_mean_and_the_weighted_log_odds():
    y = np.array([0.0, 1.0, 1.0, 3.0])
    w = np.array([2.0, 1.0, 0.0, 1.0])
    assert ref.SquaredError(y, weight=w).baseline() == pytest.approx((0.0 * 2 + 1.0 + 3.0) / 4.0)
    assert ref.SquaredError(y, weight=w).constant_hessian is False and ref.SquaredError(y).constant_hessian
    t = (y > 0).astype(float)
    assert ref.Logistic(t, weight=w).baseline() == pytest.approx(np.log(2.0 / 2.0))
    assert fast.Logistic(t, weight=np.ones(4)).baseline() == ref.Logistic(t).baseline()


@pytest.mark.parametrize("weight, message", [(np.ones(3), "one weight per row"), (np.r_[1.0, np.nan, 1, 1], "finite"),
                                             (np.zeros(4), "every weight is 0")])
def test_bad_weights_are_refused_by_both_twins_alike(weight, message):
    for twin in (ref, fast):
        with pytest.raises(ParameterError, match=message):
            twin.SquaredError(np.arange(4.0), weight=weight)

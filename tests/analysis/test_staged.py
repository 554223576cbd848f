"""Staged evaluation: the running sums equal predicting with the first m trees, bit for bit, in both
twins; the metrics at each size equal evaluating those predictions."""
import numpy as np
import pytest

import twinrank.fast.analysis.staged as fast
import twinrank.reference.analysis.staged as ref
from twinrank.fast import LambdaMART as FastLambdaMART
from twinrank.reference import LambdaMART
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import evaluate
from twinrank.reference.io.data import load_mq2008


@pytest.fixture(scope="module")
def fitted():
    train, _, test = load_mq2008(1)
    train, test = train.take_queries(range(40)), test.take_queries(range(30))
    model = LambdaMART(n_trees=12, max_leaves=5, missing="mean").fit(train)
    return model, test


@pytest.mark.parametrize("twin, estimator", [(ref, LambdaMART), (fast, FastLambdaMART)], ids=["reference", "fast"])
def test_staged_scores_equal_truncated_predictions(fitted, twin, estimator):
    model, test = fitted
    est = estimator()
    est._set_fitted(model.model_)
    seen = list(twin.staged_scores(model.model_, test.X, every=5))
    assert [m for m, _ in seen] == [5, 10, 12]
    for m, scores in seen:
        np.testing.assert_array_equal(scores, est.predict(test.X, n_trees=m))


def test_staged_metrics_of_both_twins(fitted):
    model, test = fitted
    names = ["ndcg@3", "map"]
    r = ref.staged_metrics(model.model_, test, names, sizes=[0, 1, 4, 12])
    f = fast.staged_metrics(model.model_, test, names, sizes=[0, 1, 4, 12])
    assert r["n_trees"].tolist() == [0, 1, 4, 12]
    for name in names:
        np.testing.assert_array_equal(r[name], f[name])
        for i, m in enumerate(r["n_trees"]):
            assert r[name][i] == evaluate(name, test.y, model.predict(test, n_trees=int(m)), test.query_offsets)[name]
    assert r["ndcg@3"][-1] != r["ndcg@3"][0]


def test_staged_bad_input(fitted):
    model, test = fitted
    with pytest.raises(ParameterError, match="sizes must lie in 0..12"):
        list(ref.staged_scores(model.model_, test.X, sizes=[13]))
    with pytest.raises(ParameterError, match="every"):
        list(ref.staged_scores(model.model_, test.X, every=0))

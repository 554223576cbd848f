"""Transfer learning (Mohan 2010, Ch. 5): domain scores, augmentation by documents and by queries,
the source model as features; both twins, on MQ2008 with an injected shift."""
import dataclasses
import importlib

import numpy as np
import pytest

from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008, query_folds, query_rows
from twinrank.reference.rankers.classification import class_probabilities, expected_relevance
from twinrank.reference.trees.predict import predict_ensemble

TWINS = ("reference", "fast")


@pytest.fixture(scope="module")
def domains():
    train, _, _ = load_mq2008(fold=1)
    target, source = train.take_queries(np.arange(30)), train.take_queries(np.arange(30, 130))
    X = source.X.copy()
    shifted = source.qid % 2 == 1  # every other source query drifts on feature 1
    X[shifted, 0] += 0.5
    return target, Dataset(X, source.y, source.query_offsets, qids=source.qids), shifted


def twin(name):
    return importlib.import_module(f"twinrank.{name}.transfer")


def small_classifier(name):
    McRank = importlib.import_module(f"twinrank.{name}.classification").McRank
    return lambda: McRank(n_trees=8, max_leaves=4)


def test_domain_scores_find_the_shifted_source_documents_and_the_twins_agree(domains):
    target, source, shifted = domains
    scores = [twin(n).domain_scores(source, target, small_classifier(n), n_folds=3) for n in TWINS]
    np.testing.assert_allclose(scores[1], scores[0], rtol=0, atol=1e-9)
    assert scores[0].shape == (source.n_rows,) and ((0 < scores[0]) & (scores[0] < 1)).all()
    assert scores[0][~shifted].mean() > scores[0][shifted].mean() + 0.1  # unshifted look like the target


def test_augment_by_documents_adds_the_top_fraction_in_source_order(domains):
    target, source, _ = domains
    scores = np.random.default_rng(0).random(source.n_rows)
    out = twin("fast").augment(target, source, 0.25, scores=scores)
    n = round(0.25 * source.n_rows)
    assert out.n_rows == target.n_rows + n
    np.testing.assert_array_equal(out.X[:target.n_rows], target.X)
    top = np.sort(np.argsort(-scores, kind="stable")[:n])
    np.testing.assert_array_equal(out.X[target.n_rows:], source.X[top])
    assert out.n_queries == target.n_queries + len(np.unique(source.qid[top]))
    assert twin("reference").augment(target, source, 0.0, scores=scores).n_rows == target.n_rows


def test_augment_by_queries_adds_whole_queries_of_highest_mean_score(domains):
    target, source, _ = domains
    scores = np.repeat(np.arange(source.n_queries, dtype=float), source.query_sizes)  # later = better
    out = twin("reference").augment(target, source, 0.1, scores=scores, by="queries")
    assert out.n_queries == target.n_queries + 10
    np.testing.assert_array_equal(out.qids[target.n_queries:], source.qids[-10:])


@pytest.mark.parametrize("bad", [dict(top_fraction=1.5), dict(by="rows"), dict(scores=np.zeros(3))])
def test_augment_refuses_bad_arguments(domains, bad):
    target, source, _ = domains
    args = {**dict(top_fraction=0.5, scores=np.zeros(source.n_rows)), **bad}
    with pytest.raises(ParameterError):
        twin("reference").augment(target, source, args.pop("top_fraction"), **args)


def test_model_features_append_q_p_c_and_the_twins_agree(domains):
    from twinrank.reference import GBRT, McRank
    target, source, _ = domains
    mcrank = McRank(n_trees=5, max_leaves=4).fit(source).model_
    out = [twin(n).model_features(mcrank, target) for n in TWINS]
    K = len(mcrank.labels)
    assert out[0].n_features == target.n_features + 1 + K + (K - 1)
    np.testing.assert_allclose(out[1].X, out[0].X, rtol=1e-6, atol=1e-7)
    d = target.n_features
    p = class_probabilities(mcrank, target.X)
    np.testing.assert_allclose(out[0].X[:, d], expected_relevance(mcrank, target.X), rtol=1e-6)
    np.testing.assert_allclose(out[0].X[:, d + 1:d + 1 + K], p, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out[0].X[:, -1], p[:, 0] + p[:, 1], rtol=1e-6, atol=1e-7)
    gbrt = GBRT(n_trees=3, max_leaves=4).fit(source).model_
    q = twin("fast").model_features(gbrt, target.X, kinds=("Q",))
    np.testing.assert_allclose(q[:, -1], predict_ensemble(gbrt, target.X), rtol=1e-6)
    with pytest.raises(ParameterError, match="McRank"):
        twin("reference").model_features(gbrt, target, kinds=("Q", "P"))
    GBRT(n_trees=2, max_leaves=4).fit(out[0])  # the estimators train on the result


def test_estimators_train_on_an_augmented_set(domains):
    from twinrank.fast import LambdaMART
    target, source, _ = domains
    scores = np.linspace(0, 1, source.n_rows)
    out = twin("fast").augment(target, source, 0.3, scores=scores, by="queries")
    assert LambdaMART(n_trees=2, max_leaves=4).fit(out).model_.n_trees == 2


# ----------------------------------------------------------------------------- weighted rows


def weighted(data: Dataset, seed: int) -> Dataset:
    return dataclasses.replace(data, weight=np.random.default_rng(seed).uniform(0.5, 2.0, data.n_rows))


class Recording:
    """A domain classifier that keeps the data sets it is fitted on and scores every row 0.5."""

    def __init__(self, fitted: list):
        self.fitted = fitted

    def fit(self, data):
        self.fitted.append(data)
        return self

    def predict(self, X):
        return np.full(len(X), 0.5)


@pytest.mark.parametrize("name", TWINS)
def test_the_domain_classifier_trains_on_the_rows_weights(domains, name):
    target, source, _ = domains
    target, source = weighted(target, 1), weighted(source, 2)
    fitted = []
    twin(name).domain_scores(source, target, lambda: Recording(fitted), n_folds=3, seed=4)
    assert len(fitted) == 3
    for data, (train_queries, _) in zip(fitted, query_folds(source.n_queries, 3, seed=4)):
        np.testing.assert_array_equal(data.y, np.r_[np.ones(target.n_rows), np.zeros(data.n_rows - target.n_rows)])
        np.testing.assert_array_equal(data.weight, np.r_[target.weight, source.take_queries(train_queries).weight])


def test_weighted_domain_scores_differ_from_unweighted_and_the_twins_agree(domains):
    target, source, _ = domains
    target, heavy = weighted(target, 1), weighted(source, 2)
    scores = [twin(n).domain_scores(heavy, target, small_classifier(n), n_folds=3) for n in TWINS]
    np.testing.assert_allclose(scores[1], scores[0], rtol=0, atol=1e-9)
    plain = twin("fast").domain_scores(source, dataclasses.replace(target, weight=None), small_classifier("fast"),
                                       n_folds=3)
    assert np.max(np.abs(scores[1] - plain)) > 1e-3  # the weights matter


@pytest.mark.parametrize("by", ["documents", "queries"])
def test_augment_keeps_each_rows_weight_and_weighs_an_unweighted_part_1(domains, by):
    target, source, _ = domains
    source = weighted(source, 2)
    scores = np.random.default_rng(0).random(source.n_rows)
    if by == "documents":
        added = np.sort(np.argsort(-scores, kind="stable")[:round(0.3 * source.n_rows)])
    else:
        means = np.add.reduceat(scores, source.query_offsets[:-1]) / source.query_sizes
        top = np.sort(np.argsort(-means, kind="stable")[:round(0.3 * source.n_queries)])
        added = query_rows(source.query_offsets, top)
    out = twin("reference").augment(target, source, 0.3, scores=scores, by=by)
    np.testing.assert_array_equal(out.X[target.n_rows:], source.X[added])
    np.testing.assert_array_equal(out.weight, np.r_[np.ones(target.n_rows), source.weight[added]])
    heavy = weighted(target, 1)
    both = twin("fast").augment(heavy, source, 0.3, scores=scores, by=by)
    np.testing.assert_array_equal(both.weight, np.r_[heavy.weight, source.weight[added]])
    unweighted = twin("fast").augment(target, dataclasses.replace(source, weight=None), 0.3, scores=scores, by=by)
    assert unweighted.weight is None


def test_model_features_keep_the_rows_weights(domains):
    from twinrank.reference import GBRT
    target, source, _ = domains
    gbrt = GBRT(n_trees=2, max_leaves=4).fit(source).model_
    heavy = weighted(target, 1)
    for name in TWINS:
        np.testing.assert_array_equal(twin(name).model_features(gbrt, heavy, kinds=("Q",)).weight, heavy.weight)

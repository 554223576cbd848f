"""LambdaMART in both twins: same model from the same seed, cross-feeding, LambdaSMART, save/load."""
import json

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.fast.rankers import lambdamart as fast_lm
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.model import Ensemble
from twinrank.reference.rankers import lambdamart as ref_lm

SMALL = dict(n_trees=8, learning_rate=0.3, max_leaves=6, min_samples_leaf=3)


def same_structure(a: Ensemble, b: Ensemble):
    assert a.n_trees == b.n_trees
    for s, t in zip(a.trees, b.trees):
        for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
            np.testing.assert_array_equal(getattr(s, name), getattr(t, name), err_msg=name)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("options", [
    {},
    {"query_subsample": 0.6, "feature_fraction": 0.5, "seed": 3},
    {"target": "map"},
    {"target": "err@5", "truncation": 4},
    {"subsample_for_bin": 150, "seed": 2},
])
def test_both_twins_grow_the_same_trees(options):
    # Random data; exact split ties on real data (features that cut a node into the same rows)
    # are resolved by the tie rule of reference.tree and tested in test_agreement_real.py.
    train = ranking_data(seed=1, n_queries=40, max_docs=30, missing=0.1)
    params = dict(SMALL, min_samples_leaf=10)
    ref = ref_lm.LambdaMART(**params, **options).fit(train)
    fast = fast_lm.LambdaMART(**params, **options).fit(train)
    same_structure(ref.model_, fast.model_)
    np.testing.assert_allclose(ref.predict(train), fast.predict(train), rtol=1e-9, atol=1e-12)


def test_cross_feeding_each_twin_scores_the_others_model():
    train, test = ranking_data(seed=2), ranking_data(seed=3)
    ref = ref_lm.LambdaMART(**SMALL).fit(train)
    fast = fast_lm.LambdaMART(**SMALL).fit(train)
    np.testing.assert_allclose(fast_lm.LambdaMART.predict(ref, test), ref.predict(test), rtol=1e-12)
    np.testing.assert_allclose(ref_lm.LambdaMART.predict(fast, test), fast.predict(test), rtol=1e-12)


def test_same_seed_same_model_on_any_thread_count():
    train = ranking_data(seed=4)
    options = dict(SMALL, query_subsample=0.5, feature_fraction=0.5, seed=7, subsample_for_bin=200)
    one = fast_lm.LambdaMART(**options, n_threads=1).fit(train).model_
    two = fast_lm.LambdaMART(**options, n_threads=2).fit(train).model_
    assert all(s.equals(t) for s, t in zip(one.trees, two.trees)) and one.n_trees == two.n_trees
    other_seed = fast_lm.LambdaMART(**dict(options, seed=8)).fit(train).model_
    assert not all(s.equals(t) for s, t in zip(one.trees, other_seed.trees))


def test_bin_thresholds_from_a_sample_only_above_subsample_for_bin_rows():
    """At most ``subsample_for_bin`` rows: the model of all rows; fewer: thresholds of a sample
    (other bins, so other trees); the parameter is recorded in the model file."""
    train = ranking_data(seed=5)
    every_row = fast_lm.LambdaMART(**SMALL, subsample_for_bin=None).fit(train).model_
    at_most = fast_lm.LambdaMART(**SMALL, subsample_for_bin=train.n_rows).fit(train).model_
    sampled = fast_lm.LambdaMART(**SMALL, subsample_for_bin=train.n_rows // 4).fit(train).model_
    assert all(s.equals(t) for s, t in zip(every_row.trees, at_most.trees))
    assert not all(s.equals(t) for s, t in zip(every_row.trees, sampled.trees))
    assert sampled.params["subsample_for_bin"] == train.n_rows // 4
    with pytest.raises(ParameterError, match="subsample_for_bin"):
        fast_lm.LambdaMART(subsample_for_bin=0).fit(train)


def test_lambdasmart_continues_a_prior_model():
    """3 trees on top of a 5-tree prior are the last 3 trees of an 8-tree run (no sampling)."""
    train = ranking_data(seed=5)
    prior = fast_lm.LambdaMART(**dict(SMALL, n_trees=5)).fit(train)
    cont = fast_lm.LambdaMART(**dict(SMALL, n_trees=3), init_model=prior).fit(train)
    whole = fast_lm.LambdaMART(**dict(SMALL, n_trees=8)).fit(train)
    last_three = Ensemble(trees=whole.model_.trees[5:], tree_weights=np.ones(3), n_features=train.n_features)
    same_structure(cont.model_, last_three)
    np.testing.assert_allclose(cont.predict(train), whole.predict(train), rtol=1e-9, atol=1e-12)


def test_raw_initial_scores_shift_the_start():
    train = ranking_data(seed=6)
    start = train.X[:, 0].astype(np.float64) * 3
    with_scores = ref_lm.LambdaMART(**SMALL).fit(train, init_score=start)
    plain = ref_lm.LambdaMART(**SMALL).fit(train)
    assert not np.allclose(with_scores.predict(train), plain.predict(train))
    with pytest.raises(ParameterError, match="initial scores"):
        ref_lm.LambdaMART(**SMALL).fit(train, init_score=start[:-1])


def test_early_stopping_keeps_the_best_iteration_and_history():
    train, valid = ranking_data(seed=7, n_queries=40), ranking_data(seed=8, n_queries=20)
    est = fast_lm.LambdaMART(n_trees=60, learning_rate=0.5, max_leaves=8, min_samples_leaf=2,
                             early_stopping_rounds=5).fit(train, eval_set=[valid])
    history = est.model_.history["valid:ndcg@10"]
    assert est.model_.n_trees == est.best_iteration_
    assert len(history) < 60 and len(history) - est.best_iteration_ == 5
    assert history[est.best_iteration_ - 1] == max(history)


def test_save_load_round_trip_in_both_directions(tmp_path):
    train = ranking_data(seed=9, missing=0.2)
    fast = fast_lm.LambdaMART(**SMALL).fit(train)
    path = tmp_path / "model.json"
    fast.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temporary file left
    back = ref_lm.LambdaMART.load(path)
    assert back.get_params() == fast.get_params()
    np.testing.assert_array_equal(back.predict(train), ref_lm.LambdaMART.predict(fast, train))


def test_wrong_model_version_is_a_clear_error(tmp_path):
    train = ranking_data(seed=10)
    path = tmp_path / "model.json"
    fast_lm.LambdaMART(**SMALL).fit(train).save(path)
    doc = json.loads(path.read_text())
    doc["version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="version 99"):
        fast_lm.LambdaMART.load(path)


def test_parameters_follow_scikit_learn_conventions():
    est = fast_lm.LambdaMART(n_trees=3)
    assert est.get_params()["n_trees"] == 3
    assert est.set_params(learning_rate=0.2).learning_rate == 0.2
    with pytest.raises(ParameterError):
        est.set_params(no_such_thing=1)
    with pytest.raises(TypeError):
        fast_lm.LambdaMART(3)  # keyword-only
    with pytest.raises(ParameterError, match="not fitted"):
        est.predict(np.zeros((2, 3)))
    with pytest.raises(ParameterError, match="optimises"):
        fast_lm.LambdaMART(metric="auc").fit(ranking_data(seed=11))


def test_fit_accepts_arrays_with_qid():
    data = ranking_data(seed=12)
    a = fast_lm.LambdaMART(**SMALL).fit(data.X, data.y, qid=data.qid).predict(data.X)
    b = fast_lm.LambdaMART(**SMALL).fit(data).predict(data)
    np.testing.assert_array_equal(a, b)


def test_a_prior_model_must_be_a_sum_of_trees():
    """A McRank model or a bag cannot start LambdaSMART: one clear error, not a TypeError."""
    from twinrank.reference.io.data import load_mq2008
    from twinrank.reference.rankers.classification import McRank

    train = load_mq2008(1)[0].take_queries(np.arange(40))
    prior = McRank(n_trees=2, max_leaves=4).fit(train)
    for given in (prior, prior.model_):
        with pytest.raises(ModelFormatError, match="mcrank model cannot be a prior model"):
            ref_lm.LambdaMART(n_trees=2, init_model=given).fit(train)
    with pytest.raises(ParameterError, match="init_model must be a model file"):
        ref_lm.LambdaMART(n_trees=2, init_model=[1, 2]).fit(train)


@pytest.mark.parametrize("missing", ["learn", "median"])
def test_float64_rows_score_as_their_float32_copy(missing):
    """``predict`` rounds float64 rows to float32 (the fast twin as QuickScorer reads them; with a
    missing-value strategy, in a copy first): the scores of the float32 copy, bit for bit; near
    thresholds too."""
    train = ranking_data(seed=4, n_queries=30, max_docs=30, missing=0.1)
    rng = np.random.default_rng(4)
    X = train.X.astype(np.float64) * (1 + rng.choice([-1, 1], train.X.shape) * 2.0**-25)  # half a float32 step
    for module in (ref_lm, fast_lm):
        est = module.LambdaMART(**SMALL, missing=missing).fit(train)
        for rows in (X, X[:3], np.asfortranarray(X)):  # QuickScorer, the walk, a copy first
            np.testing.assert_array_equal(est.predict(rows), est.predict(rows.astype(np.float32)))

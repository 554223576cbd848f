"""Several eval sets and several metrics in ``history_`` / ``evals_result_``, and callbacks that stop.

Oracles: a set's recorded values equal the metric of the model's own predictions on it (staged by
``n_trees``), a second set changes nothing of the first set's record or of the model, and a fit
stopped by its callback after ``k`` trees is the fit of ``n_trees=k``.
"""
import numpy as np
import pytest
from synthetic import ranking_data
from twins import FAST, REFERENCE, TWINS

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import evaluate

SMALL = dict(n_trees=6, learning_rate=0.3, max_leaves=6, min_samples_leaf=3)


@pytest.fixture(scope="module")
def data():
    return (ranking_data(30, seed=1), ranking_data(20, seed=2), ranking_data(15, seed=3))


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_every_set_and_metric_is_recorded_and_equals_the_staged_metric(twin, data):
    train, valid, other = data
    est = TWINS[twin].LambdaMART(**SMALL, metric=["ndcg@5", "map"], eval_train=True)
    est.fit(train, eval_set=[valid, other])
    assert list(est.history_) == ["train:ndcg@5", "train:map", "valid:ndcg@5", "valid:map",
                                  "valid_1:ndcg@5", "valid_1:map"]
    assert est.evals_result_ == {"train": {"ndcg@5": est.history_["train:ndcg@5"], "map": est.history_["train:map"]},
                                 "valid": {"ndcg@5": est.history_["valid:ndcg@5"], "map": est.history_["valid:map"]},
                                 "valid_1": {"ndcg@5": est.history_["valid_1:ndcg@5"],
                                             "map": est.history_["valid_1:map"]}}
    for name, dataset in (("train", train), ("valid", valid), ("valid_1", other)):
        for t in (1, est.model_.n_trees):
            values = evaluate(["ndcg@5", "map"], dataset.y, est.predict(dataset, n_trees=t), dataset.query_offsets)
            for metric in ("ndcg@5", "map"):
                assert est.evals_result_[name][metric][t - 1] == pytest.approx(values[metric], abs=1e-12)


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_a_second_set_changes_neither_the_model_nor_the_first_sets_record(twin, data):
    train, valid, other = data
    one = TWINS[twin].LambdaMART(**dict(SMALL, n_trees=40), early_stopping_rounds=3).fit(train, eval_set=[valid])
    two = TWINS[twin].LambdaMART(**dict(SMALL, n_trees=40), early_stopping_rounds=3).fit(
        train, eval_set=[valid, other], eval_names=["dev", "test"])
    assert one.best_iteration_ == two.best_iteration_ < 40  # early stopping watched the first set only
    assert one.history_["valid:ndcg@10"] == two.history_["dev:ndcg@10"]
    assert len(two.history_["test:ndcg@10"]) == len(two.history_["dev:ndcg@10"])
    np.testing.assert_array_equal(one.predict(other), two.predict(other))


def test_a_comma_list_is_a_list_and_the_first_metric_drives_early_stopping(data):
    train, valid, _ = data
    listed = FAST.LambdaMART(**dict(SMALL, n_trees=30), metric=["map", "ndcg@3"], early_stopping_rounds=2)
    commas = FAST.LambdaMART(**dict(SMALL, n_trees=30), metric="map, ndcg@3", early_stopping_rounds=2)
    alone = FAST.LambdaMART(**dict(SMALL, n_trees=30), metric="map", early_stopping_rounds=2)
    for est in (listed, commas, alone):
        est.fit(train, eval_set=[valid])
    assert listed.history_ == commas.history_
    assert listed.best_iteration_ == alone.best_iteration_
    assert listed.history_["valid:map"] == alone.history_["valid:map"]


@pytest.mark.parametrize("name", ["DART", "XDART", "RandomForest", "GBRT", "IGBRT", "McRank"])
def test_every_loop_records_every_set_and_metric_alike_in_both_twins(name, data):
    train, valid, other = data
    params = {"DART": dict(SMALL, drop_rate=0.3), "XDART": dict(SMALL, drop_rate=0.3),
              "RandomForest": dict(n_trees=4, max_leaves=16, feature_fraction=0.5),
              "GBRT": dict(SMALL), "IGBRT": dict(SMALL, rf_n_trees=3, rf_max_leaves=8, rf_feature_fraction=0.5),
              "McRank": dict(SMALL, n_trees=3)}[name]
    metrics = ("ndcg@10",) if name == "McRank" else ("ndcg@5", "map")  # McRank records NDCG@10
    if name != "McRank":
        params["metric"] = ",".join(metrics)
    fits = [getattr(twin, name)(**params).fit(train, eval_set=[valid, other]) for twin in (REFERENCE, FAST)]
    for est in fits:
        result = est.evals_result_
        assert {s.split(":")[-1] for s in result} >= {"valid", "valid_1"}
        for series in result.values():
            assert set(series) == set(metrics)
    ref, fst = (est.history_ for est in fits)
    assert ref.keys() == fst.keys()
    if name == "McRank":  # a classifier's first trees tie many documents, whose last bits differ between twins
        return
    for key in ref:
        if ":" in key:
            np.testing.assert_allclose(ref[key], fst[key], rtol=1e-9, atol=1e-12, err_msg=key)


def test_dart_keeps_its_own_history_fields_with_several_sets(data):
    train, valid, other = data
    est = FAST.XDART(**SMALL, drop_rate=0.3).fit(train, eval_set=[valid, other])
    assert {"size", "dropped", "branch", "valid_loss", "best_loss", "valid:ndcg@10", "valid_1:ndcg@10"} \
        <= set(est.history_)
    assert 1.0 - np.array(est.history_["valid:ndcg@10"]) == pytest.approx(est.history_["valid_loss"])


def test_history_of_several_sets_is_saved_and_loaded(tmp_path, data):
    train, valid, other = data
    est = FAST.LambdaMART(**SMALL, metric=["ndcg@5", "map"]).fit(train, eval_set=[valid, other])
    est.save(tmp_path / "m.json")
    loaded = FAST.LambdaMART.load(tmp_path / "m.json")
    assert loaded.history_ == est.history_ and loaded.evals_result_ == est.evals_result_
    assert loaded.metric == ["ndcg@5", "map"] or loaded.metric == ("ndcg@5", "map")


@pytest.mark.parametrize("eval_names, message", [
    (["a"], "2 eval sets"), (["a", "a"], "twice"), (["train", "b"], "'train'"), (["a:b", "c"], "without ':'"),
    (["a", ""], "non-empty")])
def test_bad_eval_names_are_refused(eval_names, message, data):
    train, valid, other = data
    with pytest.raises(ParameterError, match=message):
        REFERENCE.LambdaMART(**SMALL).fit(train, eval_set=[valid, other], eval_names=eval_names)


@pytest.mark.parametrize("metric, message", [([], "at least one"), ("ndcg@5,,map", "no empty"),
                                             (["map", "map"], "twice"), (5, "metric name")])
def test_bad_metric_lists_are_refused(metric, message):
    with pytest.raises(ParameterError, match=message):
        REFERENCE.LambdaMART(metric=metric).validated_params()


def stop_after(k):
    seen = []

    def callback(iteration, record):
        seen.append(iteration)
        return iteration >= k
    return callback, seen


STOPPED = {  # estimator name: (parameters, the parameters of the same model grown to the stopping point)
    "LambdaMART": (dict(SMALL, n_trees=20), dict(SMALL, n_trees=4)),
    "GBRT": (dict(SMALL, n_trees=20), dict(SMALL, n_trees=4)),
    "DART": (dict(SMALL, n_trees=20, drop_rate=0.3), dict(SMALL, n_trees=4, drop_rate=0.3)),
    "RandomForest": (dict(n_trees=20, max_leaves=16, feature_fraction=0.5),
                     dict(n_trees=4, max_leaves=16, feature_fraction=0.5)),
}


@pytest.mark.parametrize("twin", sorted(TWINS))
@pytest.mark.parametrize("name", sorted(STOPPED))
def test_a_callback_returning_true_stops_and_keeps_the_model_so_far(twin, name, data):
    train, valid, _ = data
    stopped_params, short_params = STOPPED[name]
    callback, seen = stop_after(4)
    cls = getattr(TWINS[twin], name)
    stopped = cls(**stopped_params).fit(train, eval_set=[valid], callback=callback)
    short = cls(**short_params).fit(train, eval_set=[valid])
    assert seen == [1, 2, 3, 4]
    assert stopped.history_ == short.history_
    np.testing.assert_array_equal(stopped.predict(valid), short.predict(valid))


def test_a_stop_ends_every_later_phase_too(data):
    train, valid, _ = data
    callback, seen = stop_after(2)
    gbrt = FAST.GBRT(**SMALL, average_runs=3).fit(train, callback=callback)
    assert seen == [1, 2] and gbrt.model_.n_trees == 2  # run 0 stopped, runs 1 and 2 never started
    callback, seen = stop_after(2)
    igbrt = FAST.IGBRT(**SMALL, rf_n_trees=5, rf_max_leaves=8).fit(train, callback=callback)
    assert seen == [1, 2] and igbrt.model_.n_trees == 0 and igbrt.model_.init_model.n_trees == 2
    callback, seen = stop_after(2)
    mcrank = FAST.McRank(**SMALL).fit(train, callback=callback)
    assert seen == [1, 2]
    assert [c.n_trees for c in mcrank.model_.classifiers] == [2] + [0] * (len(mcrank.classes_) - 2)
    assert np.all(np.isfinite(mcrank.predict(valid)))
    callback, seen = stop_after(1)
    cumulative = FAST.CumulativeRegression(base="random_forest", rf_n_trees=3, rf_max_leaves=8).fit(
        train, eval_set=[valid], callback=callback)
    assert seen == [1] and [r.n_trees for r in cumulative.model_.classifiers][:2] == [1, 0]
    assert np.all(np.isfinite(cumulative.predict(valid)))


def test_blmart_stops_after_a_member_and_refuses_a_second_eval_set(data):
    train, valid, other = data
    bag = FAST.BLMART(n_models=3, n_trees=3, max_leaves=4, min_samples_leaf=3)
    bag.fit(train, eval_set=[valid], callback=lambda member, row: True)
    assert len(bag.model_.members) == 1
    with pytest.raises(ParameterError, match="one eval_set"):
        bag.fit(train, eval_set=[valid, other])

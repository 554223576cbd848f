"""Feature costs on every tree estimator (Mohan 2010, Ch. 6): the costs file, free after use tree by
tree (boosting) and batch by batch (forests), the model file, and both twins on MQ2008."""
import dataclasses
import importlib

import numpy as np
import pytest

from twinrank.reference._feature_costs import feature_cost_array, features_used
from twinrank.reference.engine import REFERENCE
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.model import load_model
from twinrank.reference.rankers._estimator import all_trees

GROUPS = np.repeat([1.0, 2, 4, 8, 16], [10, 9, 9, 9, 9])  # MQ2008's 46 features in five cost groups
ESTIMATORS = {"LambdaMART": ("lambdamart", dict(n_trees=6, max_leaves=8)),
              "GBRT": ("gbrt", dict(n_trees=6, max_leaves=8)),
              "RandomForest": ("forest", dict(n_trees=6, max_leaves=16, cost_batch_size=2)),
              "IGBRT": ("forest", dict(n_trees=3, max_leaves=8, rf_n_trees=3, rf_max_leaves=16,
                                       rf_cost_lambda=1.0)),
              "McRank": ("classification", dict(n_trees=3, max_leaves=8))}


@pytest.fixture(scope="module")
def mq2008():
    train, valid, test = load_mq2008(fold=1)
    return train.take_queries(np.arange(120)), test.take_queries(np.arange(60))


def estimator(twin, name):
    module, params = ESTIMATORS[name]
    return getattr(importlib.import_module(f"twinrank.{twin}.{module}"), name), params


def every_tree(model) -> list:
    if hasattr(model, "classifiers"):
        return [t for c in model.classifiers for t in c.trees]
    return all_trees(model)


def write(tmp_path, text, name="costs.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_costs_file_gives_one_cost_per_feature_in_letor_ids(tmp_path):
    path = write(tmp_path, "# feature cost\n2 4.5\n1 1\n\n3 0  # free\n")
    np.testing.assert_array_equal(feature_cost_array(path, 3), [1.0, 4.5, 0.0])
    np.testing.assert_array_equal(feature_cost_array(str(path), 3), [1.0, 4.5, 0.0])


@pytest.mark.parametrize("text, line, words", [
    ("1 1\n2 abc\n", 2, "'abc' is not a number"),
    ("1 1\n2 -3\n", 2, ">= 0"),
    ("1 1\nx 3\n", 2, "not a feature id"),
    ("1 1\n1 2\n", 2, "already"),
    ("1 1\n2 2 2\n", 2, "expected 'feature cost'"),
    ("1 1\n2 2\n4 1\n", 3, "the data have 3 features"),
    ("1 1\n3 2\n", None, "no cost for feature 2"),
])
def test_a_bad_costs_file_is_refused_naming_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError, match=words) as error:
        feature_cost_array(path, 3)
    assert error.value.path == str(path) and error.value.line == line
    assert str(path) in str(error.value)


@pytest.mark.parametrize("costs", [[1.0, -1.0, 0.0], [1.0, np.nan, 0.0], "no/such/file.txt"])
def test_bad_costs_are_refused_before_any_data_work(costs):
    from twinrank.reference import GBRT
    with pytest.raises((ParameterError, DataFormatError)):
        GBRT(feature_costs=costs).validated_params() and GBRT(feature_costs=costs).cost_params()


def test_costs_of_the_wrong_width_are_refused(mq2008):
    from twinrank.reference import GBRT
    with pytest.raises(ParameterError, match="45 costs but the data have 46 features"):
        GBRT(n_trees=1, feature_costs=np.ones(45), cost_lambda=1.0).fit(mq2008[0])


class Recording:
    """An engine whose growers record the feature costs each tree is grown with."""

    def __init__(self, engine=REFERENCE):
        self.seen = []
        grow_tree, grow_trees = engine.grow_tree, engine.grow_trees

        def one(*args, feature_cost=None, **kwargs):
            self.seen.append(None if feature_cost is None else feature_cost.copy())
            return grow_tree(*args, feature_cost=feature_cost, **kwargs)

        def batch(*args, feature_cost=None, **kwargs):
            trees = grow_trees(*args, feature_cost=feature_cost, **kwargs)
            self.seen.extend([None if feature_cost is None else feature_cost.copy()] * len(trees))
            return trees
        self.engine = dataclasses.replace(engine, grow_tree=one, grow_trees=batch)


@pytest.mark.parametrize("free_after_use", [True, False])
@pytest.mark.parametrize("name", ["GBRT", "LambdaMART", "McRank"])
def test_boosting_pays_for_a_feature_after_the_tree_that_used_it(mq2008, name, free_after_use):
    cls, params = estimator("reference", name)
    recording = Recording()
    est = type("Recorded", (cls,), {"engine": recording.engine})(
        **params, cost_lambda=1.0, feature_costs=GROUPS, free_after_use=free_after_use).fit(mq2008[0])
    trees = every_tree(est.model_)
    assert len(recording.seen) >= len(trees) > 1
    expected = GROUPS.copy()
    for t, tree in enumerate(trees):
        np.testing.assert_array_equal(recording.seen[t], expected, err_msg=f"tree {t}")
        if free_after_use:
            expected[features_used([tree], 46)] = 0.0
    assert free_after_use == (recording.seen[len(trees) - 1] < GROUPS).any()


def test_a_forest_pays_batch_by_batch(mq2008):
    cls, params = estimator("reference", "RandomForest")
    recording = Recording()
    est = type("Recorded", (cls,), {"engine": recording.engine})(
        **{**params, "n_trees": 7, "cost_batch_size": 3}, cost_lambda=0.01, feature_costs=GROUPS
    ).fit(mq2008[0])
    trees, seen = est.model_.trees, recording.seen
    assert len(seen) == 7
    for batch in ([0, 1, 2], [3, 4, 5], [6]):
        for t in batch:
            np.testing.assert_array_equal(seen[t], seen[batch[0]])
        paid = GROUPS.copy()
        paid[features_used(trees[:batch[0]], 46)] = 0.0
        np.testing.assert_array_equal(seen[batch[0]], paid)


def test_igbrt_boosts_with_the_forests_features_paid(mq2008):
    cls, params = estimator("reference", "IGBRT")
    recording = Recording()
    est = type("Recorded", (cls,), {"engine": recording.engine})(
        **params, cost_lambda=1.0, feature_costs=GROUPS).fit(mq2008[0])
    forest_used = features_used(est.model_.init_model.trees, 46)
    first_boosted = recording.seen[est.model_.init_model.n_trees]
    assert forest_used.any() and (first_boosted[forest_used] == 0).all()
    assert (first_boosted[~forest_used] == GROUPS[~forest_used]).all()


def test_cost_awareness_steers_splits_to_cheap_features(mq2008):
    from twinrank.reference import GBRT
    blind = GBRT(n_trees=10, max_leaves=8).fit(mq2008[0])
    aware = GBRT(n_trees=10, max_leaves=8, cost_lambda=1.0, feature_costs=GROUPS * 100).fit(mq2008[0])
    cost = [GROUPS[features_used(m.model_.trees, 46)].sum() for m in (blind, aware)]
    assert cost[1] < cost[0]


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_model_file_keeps_the_costs_and_both_twins_agree(mq2008, tmp_path, name):
    train, test = mq2008
    path = write(tmp_path, "".join(f"{f + 1} {c:g}\n" for f, c in enumerate(GROUPS)))
    fitted = []
    for twin in ("reference", "fast"):
        cls, params = estimator(twin, name)
        est = cls(**params, cost_lambda=1.0, feature_costs=str(path)).fit(train)
        est.save(tmp_path / f"{twin}.json")
        fitted.append(est)
        loaded = load_model(tmp_path / f"{twin}.json")
        assert loaded.params["feature_costs"] == GROUPS.tolist()
        assert loaded.params["cost_lambda"] == 1.0 and loaded.params["free_after_use"] is True
    ref, fast = fitted
    used = [features_used(every_tree(e.model_), 46) for e in fitted]
    np.testing.assert_array_equal(used[0], used[1])
    np.testing.assert_allclose(fast.predict(test), ref.predict(test), rtol=0, atol=1e-9)


def test_a_fast_forest_does_not_depend_on_the_thread_count(mq2008):
    from twinrank.fast import RandomForest
    params = dict(n_trees=8, max_leaves=32, cost_batch_size=3, cost_lambda=0.05, feature_costs=GROUPS)
    one, two = (RandomForest(**params, n_threads=n).fit(mq2008[0]) for n in (1, 2))
    for a, b in zip(one.model_.trees, two.model_.trees):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.value, b.value)


def test_the_cli_trains_with_a_costs_file(tmp_path, capsys):
    from twinrank.cli import main
    train = "reference/io/datasets/mq2008/S1.txt.gz"
    costs = write(tmp_path, "".join(f"{f + 1} {c:g}\n" for f, c in enumerate(GROUPS)))
    model = tmp_path / "m.json"
    assert main(["train", "--train", train, "--model", str(model), "--algorithm", "gbrt",
                 "--trees", "3", "--feature-costs", str(costs), "--cost-lambda", "1",
                 "--free-after-use", "false", "--quiet"]) == 0
    params = load_model(model).params
    assert params["feature_costs"] == GROUPS.tolist() and params["free_after_use"] is False
    bad = write(tmp_path, "1 1\n2 x\n", "bad.txt")
    assert main(["train", "--train", train, "--model", str(model), "--algorithm", "gbrt",
                 "--trees", "1", "--feature-costs", str(bad), "--quiet"]) == 2
    assert f"{bad}:2: cost 'x' is not a number" in capsys.readouterr().err


def test_cost_aware_gbrt_keeps_the_ndcg_at_half_the_feature_cost_on_mq2008():
    """The issue's bar: >= 98% of the cost-blind test NDCG@10 at <= half its mean feature cost
    (five feature groups, costs 1, 2, 4, 8, 16; the per-tree cost not counted)."""
    from twinrank.fast import GBRT, evaluate
    from twinrank.fast.analysis.cost import model_cost
    train, _, test = load_mq2008(fold=1)
    results = []
    for cost_lambda in (0.0, 1.0):
        est = GBRT(n_trees=100, max_leaves=8, cost_lambda=cost_lambda, feature_costs=GROUPS).fit(train)
        ndcg = evaluate("ndcg@10", test.y, est.predict(test), test.query_offsets)["ndcg@10"]
        results.append((ndcg, model_cost(est.model_, test, GROUPS, tree_cost=0.0).mean_cost))
    (blind_ndcg, blind_cost), (aware_ndcg, aware_cost) = results
    assert aware_ndcg >= 0.98 * blind_ndcg
    assert aware_cost <= 0.5 * blind_cost

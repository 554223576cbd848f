"""BL-MART: the combination rules (twinned, exact), the bag (twins agree, any executor), files and errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twinrank import cli
from twinrank.fast.combination import bag_rules as fast_rules
from twinrank.fast.rankers.bagging import BLMART
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.combination import bag_rules as reference_rules
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import BagModel, load_model
from twinrank.reference.rankers import bagging as reference_bagging

RULES = reference_rules.RULES
SMALL = dict(n_models=3, n_trees=6, max_leaves=6, min_samples_leaf=5, seed=2)


@st.composite
def member_scores(draw):
    """A (B, n) score matrix with ties (a coarse grid), and query offsets with one-document queries."""
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=8))
    n, members = sum(sizes), draw(st.integers(1, 5))
    grid = draw(st.sampled_from([0.5, 1.0, 1e-3]))
    values = draw(st.lists(st.integers(-4, 4), min_size=n * members, max_size=n * members))
    return np.array(values, dtype=float).reshape(members, n) * grid, np.concatenate([[0], np.cumsum(sizes)])


@given(member_scores(), st.sampled_from(RULES))
def test_the_twins_combine_bit_for_bit(case, rule):
    scores, offsets = case
    np.testing.assert_array_equal(reference_rules.combine_scores(scores, offsets, rule),
                                  fast_rules.combine_scores(scores, offsets, rule))


@given(member_scores())
def test_minmax_maps_each_query_to_the_unit_interval_and_constants_to_one_half(case):
    scores, offsets = case
    normalised = reference_rules.minmax_per_query(scores, offsets)
    for start, stop in zip(offsets[:-1], offsets[1:]):
        block = normalised[:, start:stop]
        constant = np.ptp(scores[:, start:stop], axis=1) == 0
        assert np.all(block[constant] == 0.5)
        assert np.all(block[~constant].min(axis=1) == 0) and np.all(block[~constant].max(axis=1) == 1)


@given(member_scores())
def test_borda_points_share_each_query_s_pairs_and_split_ties(case):
    scores, offsets = case
    points = reference_rules.borda_points(scores, offsets)
    for start, stop in zip(offsets[:-1], offsets[1:]):
        n = stop - start
        np.testing.assert_array_equal(points[:, start:stop].sum(axis=1), np.full(len(scores), n * (n - 1) / 2))
        block = scores[:, start:stop]
        expected = ((block[:, :, None] > block[:, None, :]).sum(axis=2)
                    + 0.5 * ((block[:, :, None] == block[:, None, :]).sum(axis=2) - 1))
        np.testing.assert_array_equal(points[:, start:stop], expected)


def test_rules_on_real_feature_columns_with_ties():
    """MQ2008's features as 'members': many exact ties, queries of every size."""
    _, _, test = load_mq2008(1)
    scores = test.X[:, :12].T.astype(np.float64)
    for rule in RULES:
        np.testing.assert_array_equal(reference_rules.combine_scores(scores, test.query_offsets, rule),
                                      fast_rules.combine_scores(scores, test.query_offsets, rule))


def test_a_single_member_under_minmax_ranks_as_that_member():
    scores = np.array([[3.0, 1.0, 2.0, 5.0, 5.0]])
    np.testing.assert_array_equal(reference_rules.combine_scores(scores, [0, 3, 5], "minmax"),
                                  [1.0, 0.0, 0.5, 0.5, 0.5])


@pytest.fixture(scope="module")
def mq2008():
    train, valid, test = load_mq2008(1)
    return train.take_queries(np.arange(120)), valid.take_queries(np.arange(40)), test


@pytest.mark.parametrize("combine", RULES)
def test_the_twins_grow_the_same_bag_on_mq2008(mq2008, combine):
    train, valid, test = mq2008
    params = dict(SMALL, combine=combine, query_subsample=0.8, feature_fraction=0.7)
    reference = reference_bagging.BLMART(**params).fit(train, eval_set=[valid])
    fast = BLMART(**params).fit(train, eval_set=[valid])
    for a, b in zip(reference.model_.members, fast.model_.members):
        assert [t.n_nodes for t in a.trees] == [t.n_nodes for t in b.trees]
        for s, t in zip(a.trees, b.trees):
            np.testing.assert_array_equal(s.feature, t.feature)
            np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(reference.predict(test), fast.predict(test), rtol=1e-9, atol=1e-9)


def test_members_are_lambdamart_on_query_samples_drawn_from_their_seeds(mq2008):
    train, _, test = mq2008
    bag = BLMART(**SMALL).fit(train)
    for m, seed in enumerate(reference_bagging.member_seeds(SMALL["seed"], SMALL["n_models"])):
        queries = reference_bagging.member_queries(seed, train.n_queries, 0.67)
        assert len(queries) == round(0.67 * train.n_queries) and len(set(queries)) == len(queries)
        single = LambdaMART(**{k: v for k, v in SMALL.items() if k not in ("n_models", "seed")}, seed=seed)
        single.fit(train.take_queries(queries))
        np.testing.assert_array_equal(bag.predict_members(test)[m], single.predict(test))


@pytest.mark.slow
def test_the_same_bag_in_processes_and_on_dask(mq2008):
    train, valid, test = mq2008
    in_process = BLMART(**SMALL).fit(train, eval_set=[valid]).predict(test)
    np.testing.assert_array_equal(BLMART(**SMALL, n_jobs=2).fit(train, eval_set=[valid]).predict(test), in_process)
    np.testing.assert_array_equal(BLMART(**SMALL, workers=2).fit(train, eval_set=[valid]).predict(test), in_process)


def test_save_load_and_kinds(mq2008, tmp_path):
    train, _, test = mq2008
    bag = BLMART(**SMALL, combine="borda").fit(train)
    bag.save(tmp_path / "bag.json")
    loaded = reference_bagging.BLMART.load(tmp_path / "bag.json")
    assert isinstance(load_model(tmp_path / "bag.json"), BagModel) and loaded.combine == "borda"
    np.testing.assert_allclose(loaded.predict(test), bag.predict(test), rtol=1e-12, atol=1e-12)
    with pytest.raises(ModelFormatError, match="'bl-mart' model, not a 'lambdamart' model"):
        LambdaMART.load(tmp_path / "bag.json")
    LambdaMART(n_trees=2).fit(train).save(tmp_path / "single.json")
    with pytest.raises(ModelFormatError, match="'lambdamart' model, not a 'bl-mart' model"):
        BLMART.load(tmp_path / "single.json")


@pytest.mark.parametrize("params, message", [
    (dict(query_fraction=0.0), "query_fraction must be in"), (dict(query_fraction=1.5), "query_fraction must be in"),
    (dict(n_models=0), "n_models"), (dict(combine="max"), "combine must be one of minmax, mean, borda"),
    (dict(n_jobs=2, workers=2), "at most one of"), (dict(max_leaves=1), "max_leaves"),
])
def test_bad_parameters_are_refused_before_training(mq2008, params, message):
    calls = []
    with pytest.raises(ParameterError, match=message):
        BLMART(**{**SMALL, **params}).fit(mq2008[0], callback=lambda *a: calls.append(a))
    assert not calls


def test_predict_needs_the_queries(mq2008):
    train, _, test = mq2008
    bag = BLMART(**SMALL).fit(train)
    with pytest.raises(ParameterError, match="pass a Dataset or qid="):
        bag.predict(test.X)
    np.testing.assert_array_equal(bag.predict(test.X, qid=test.qid), bag.predict(test))


def test_cli_trains_and_predicts_a_bag(mq2008, tmp_path, capsys):
    train, valid, test = mq2008
    paths = {name: tmp_path / f"{name}.txt" for name in ("train", "valid", "test")}
    for name, data in zip(paths, mq2008):
        write_letor(data, paths[name])
    model, scores = tmp_path / "bag.json", tmp_path / "scores.txt"
    assert cli.main(["train", "--algorithm", "bl-mart", "--train", str(paths["train"]), "--valid",
                     str(paths["valid"]), "--model", str(model), "--n-models", "3", "--n-trees", "6",
                     "--max-leaves", "6"]) == 0
    assert "member 3/3" in capsys.readouterr().err
    assert cli.main(["predict", "--model", str(model), "--data", str(paths["test"]), "--output", str(scores)]) == 0
    expected = BLMART(n_models=3, n_trees=6, max_leaves=6).fit(train, eval_set=[valid]).predict(test)
    np.testing.assert_allclose(np.loadtxt(scores), expected, rtol=1e-12)
    assert cli.main(["predict", "--model", str(model), "--data", str(paths["test"]), "--output", str(scores),
                     "--trees", "2"]) == 2
    assert "scored whole" in capsys.readouterr().err


# ---------------------------------------------------------------- pools and the variance experiment

def test_a_pool_keeps_both_stopping_points_and_its_full_bag_is_the_bag(mq2008):
    from twinrank.reference.analysis.pools import ModelPool, bag_curve

    train, valid, test = mq2008
    bag = BLMART(**dict(SMALL, n_trees=40), overfit_tolerance=0.01, overfit_extra_trees=5).fit(
        train, eval_set=[valid])
    pool = ModelPool.from_bag(bag, valid, test)
    for m, member in enumerate(bag.model_.members):
        best = member.truncated(member.best_iteration)
        np.testing.assert_array_equal(pool.scores["non-overfitted"]["test"][m],
                                      bag.engine.predict_ensemble(best, test.X))
        np.testing.assert_array_equal(pool.scores["overfitted"]["test"][m], bag.predict_members(test)[m])
    means, stds = bag_curve(pool, [3], draws=2, metric="map", split="test")
    whole = bag.engine.evaluate("map", test.y, bag.predict(test), test.query_offsets, convention="letor")["map"]
    assert means[0] == pytest.approx(whole, abs=1e-12) and stds[0] == pytest.approx(0, abs=1e-12)
    with pytest.raises(ParameterError, match="bag size must be in 1..3"):
        bag_curve(pool, [4])


def test_the_variance_experiment_table(mq2008):
    from twinrank.reference.analysis.pools import variance_experiment

    train, _, test = mq2008
    table = variance_experiment({"LambdaMART": lambda s: LambdaMART(n_trees=5, max_leaves=6, seed=s),
                                 "BL-MART": lambda s: BLMART(n_models=2, n_trees=5, max_leaves=6, seed=s)},
                                train, test, samples=3, metrics=("ndcg@10", "map"))
    assert table.reduction["LambdaMART"] == {"ndcg@10": 0.0, "map": 0.0}
    assert set(table.variance["BL-MART"]) == {"ndcg@10", "map"} and "reduction BL-MART" in table.to_text()
    with pytest.raises(ParameterError, match="at least 2 samples"):
        variance_experiment({}, train, test, samples=1)


def test_cli_variance_experiment(mq2008, tmp_path, capsys):
    import json

    paths = {name: tmp_path / f"{name}.txt" for name in ("train", "valid", "test")}
    for name, data in zip(paths, mq2008):
        write_letor(data, paths[name])
    argv = ["experiment", "variance", "--train", str(paths["train"]), "--test", str(paths["test"]),
            "--set", "n_trees=4", "--set", "max_leaves=6", "--models", "2", "--samples", "2", "--json", "--quiet"]
    assert cli.main(argv) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["reduction"]["LambdaMART"]["map"] == 0.0 and "BL-MART (B=2)" in table["variance"]
    assert cli.main(argv[:-4] + ["--samples", "1", "--quiet"]) == 2
    assert "--samples >= 2" in capsys.readouterr().err

"""Model cost and early exits (Mohan 2010, Sec. 6.1, Eqs. 6.2-6.4): an independent cost from the model
file, the exits' rules, both twins with and without exits, curves, the CLI and bad input."""
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.cli import main
from twinrank.fast.analysis import cost as fast_cost
from twinrank.fast.costs import exits as fast_exits
from twinrank.reference.analysis import cost as ref_cost
from twinrank.reference.costs import exits as ref_exits
from twinrank.reference.costs.exits import EarlyExit
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import evaluate
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import read_letor
from twinrank.reference.trees.predict import predict_ensemble

GROUPS = np.repeat([1.0, 2, 4, 8, 16], [10, 9, 9, 9, 9])
TEST_FILE = "reference/io/datasets/mq2008/S5.txt.gz"  # fold 1's test queries
EXITS = [EarlyExit(every=5, fraction=0.2), EarlyExit(every=3, fraction=0.5, scope="global"),
         EarlyExit(every=4, fraction=0.1, exited="keep")]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from twinrank.reference import GBRT, IGBRT, RandomForest
    train, _, _ = load_mq2008(fold=1)
    train = train.take_queries(np.arange(200))
    folder = tmp_path_factory.mktemp("models")
    costs = folder / "costs.txt"
    costs.write_text("".join(f"{f + 1} {c:g}\n" for f, c in enumerate(GROUPS)))
    fitted = {"gbrt": GBRT(n_trees=20, max_leaves=8, cost_lambda=1.0, feature_costs=GROUPS).fit(train),
              "forest": RandomForest(n_trees=10, max_leaves=128, seed=1).fit(train),
              "igbrt": IGBRT(n_trees=6, rf_n_trees=4, rf_max_leaves=16).fit(train)}
    paths = {}
    for name, est in fitted.items():
        paths[name] = folder / f"{name}.json"
        est.save(paths[name])
    return {name: est.model_ for name, est in fitted.items()}, paths, costs


@pytest.fixture(scope="module")
def test_data():
    return read_letor(TEST_FILE)


def independent_cost(path, costs, tree_cost=1.0) -> list:
    """The cumulative mean cost per tree, from the JSON alone (no exits: every document, every tree)."""
    model = json.loads(open(path).read())
    chain = []
    while model is not None:
        chain.insert(0, model)
        model = model["init_model"]
    paid, total, per_tree = set(), 0.0, []
    for m in chain:
        for tree in m["trees"]:
            new = {f for f in tree["feature"] if f >= 0} - paid
            total += tree_cost + sum(costs[f] for f in new)
            paid |= new
            per_tree.append(total)
    return per_tree


@pytest.mark.parametrize("name", ["gbrt", "forest", "igbrt"])
def test_twinrank_cost_equals_an_independent_computation_from_the_model_file(models, test_data, name,
                                                                             capsys):
    _, paths, costs = models
    assert main(["cost", "--model", str(paths[name]), "--data", TEST_FILE, "--feature-costs",
                 str(costs), "--tree-cost", "0.5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = independent_cost(paths[name], GROUPS, 0.5)
    np.testing.assert_allclose(report["cost_per_tree"], expected, rtol=1e-12)
    assert report["mean_cost"] == pytest.approx(expected[-1], rel=1e-12)
    assert report["mean_feature_cost"] == pytest.approx(expected[-1] - 0.5 * len(expected), rel=1e-12)


def test_the_model_cost_is_the_mean_over_documents_of_each_ones_exit_cost(models, test_data):
    model = models[0]["gbrt"]
    result = ref_cost.model_cost(model, test_data, GROUPS, exits=EXITS[0])
    C = ref_cost.cumulative_cost(ref_cost.model_trees(model), GROUPS)[0]
    np.testing.assert_array_equal(result.per_document, C[result.exit_tree])
    assert result.mean_cost == pytest.approx(result.per_document.mean())
    for t in (1, 5, 6, 20):
        assert result.cost_per_tree[t - 1] == pytest.approx(C[np.minimum(t, result.exit_tree)].mean())
    blind = ref_cost.model_cost(model, test_data, GROUPS)
    assert result.mean_cost < blind.mean_cost and (np.diff(blind.cost_per_tree) > 0).all()
    stored = ref_cost.model_cost(model, test_data)  # the model stores its costs
    assert stored.mean_cost == blind.mean_cost


@pytest.mark.parametrize("exits", EXITS + [None])
@pytest.mark.parametrize("name", ["gbrt", "forest", "igbrt"])
def test_twins_agree_with_and_without_exits(models, test_data, name, exits):
    model = models[0][name]
    a = ref_exits.predict_exits(model, test_data.X, test_data.query_offsets, exits)
    b = fast_exits.predict_exits(model, test_data.X, test_data.query_offsets, exits)
    np.testing.assert_array_equal(a.exit_tree, b.exit_tree)
    np.testing.assert_allclose(b.scores, a.scores, rtol=0, atol=1e-12)
    costs = [twin.model_cost(model, test_data, GROUPS, exits=exits) for twin in (ref_cost, fast_cost)]
    np.testing.assert_allclose(costs[1].cost_per_tree, costs[0].cost_per_tree, rtol=1e-12)
    if exits is None:
        np.testing.assert_allclose(a.scores, predict_ensemble(model, test_data.X), rtol=0, atol=1e-12)
        assert (a.exit_tree == ref_cost.model_trees(model).__len__()).all()


def test_the_bottom_fraction_of_each_query_exits_ties_by_input_order():
    scores = np.array([3.0, 1.0, 1.0, 2.0, 5.0, 0.0, 0.0, 0.0, 1.0])
    groups = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    active = np.ones(9, dtype=bool)
    active[0] = False  # an exited document takes no part
    exits = EarlyExit(every=1, fraction=0.5)
    for frozen_now in (ref_exits.frozen_now, fast_exits.frozen_now):
        out = frozen_now(scores, active, groups, exits)
        # query 0: rows 1..4 active, ranked 4, 3, 1, 2: the bottom two (the tied 1.0s) exit;
        # query 1: ranked 8, 5, 6, 7 (ties in input order): the last two exit
        assert np.flatnonzero(out).tolist() == [1, 2, 6, 7]


def test_exited_documents_rank_below_the_survivors_or_keep_their_score(models, test_data):
    model = models[0]["gbrt"]
    below = ref_exits.predict_exits(model, test_data.X, test_data.query_offsets, EXITS[0])
    keep = ref_exits.predict_exits(model, test_data.X, test_data.query_offsets,
                                   EarlyExit(every=5, fraction=0.2, exited="keep"))
    np.testing.assert_array_equal(below.exit_tree, keep.exit_tree)
    for q in range(test_data.n_queries):
        rows = slice(*test_data.query_offsets[q:q + 2])
        order = np.argsort(-below.scores[rows], kind="stable")
        assert (np.diff(below.exit_tree[rows][order]) <= 0).all()  # later exits rank higher
    assert (keep.exit_tree < 20).any() and (np.bincount(keep.exit_tree)[[5, 10, 15]] > 0).all()
    partial = predict_ensemble(model.truncated(5), test_data.X)
    frozen = keep.exit_tree == 5
    np.testing.assert_allclose(keep.scores[frozen], partial[frozen], rtol=0, atol=1e-12)


def test_no_exit_fraction_exits_nobody(models, test_data):
    model = models[0]["gbrt"]
    result = fast_exits.predict_exits(model, test_data.X, test_data.query_offsets,
                                      EarlyExit(every=2, fraction=0.0, exited="keep"))
    assert (result.exit_tree == 20).all()
    np.testing.assert_array_equal(result.scores, predict_ensemble(model, test_data.X))


@pytest.mark.parametrize("twin", ["reference", "fast"])
def test_estimators_predict_with_exits_and_their_cost(models, test_data, twin):
    import importlib
    GBRT = importlib.import_module(f"twinrank.{twin}.gbrt").GBRT
    est = GBRT()
    est._set_fitted(models[0]["gbrt"])
    result = est.predict(test_data, exits=EXITS[0])
    expected = ref_cost.model_cost(models[0]["gbrt"], test_data, exits=EXITS[0])
    np.testing.assert_allclose(result.cost, expected.per_document)
    with pytest.raises(ParameterError, match="no early exits"):
        importlib.import_module(f"twinrank.{twin}.classification").McRank().predict(test_data, exits=EXITS[0])


@pytest.mark.parametrize("exits", [None, EXITS[0], EXITS[2]])
def test_the_metric_cost_curve_ends_at_the_models_metric_and_cost(models, test_data, exits):
    model = models[0]["gbrt"]
    curves = [twin.metric_cost_curve(model, test_data, GROUPS, exits=exits) for twin in (ref_cost, fast_cost)]
    np.testing.assert_allclose(curves[1]["ndcg@10"], curves[0]["ndcg@10"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(curves[1]["cost"], curves[0]["cost"])
    final = ref_exits.predict_exits(model, test_data.X, test_data.query_offsets, exits)
    assert curves[0]["ndcg@10"][-1] == pytest.approx(
        evaluate("ndcg@10", test_data.y, final.scores, test_data.query_offsets)["ndcg@10"], abs=1e-12)
    np.testing.assert_allclose(curves[0]["cost"],
                               ref_cost.model_cost(model, test_data, GROUPS, exits=exits).cost_per_tree)
    if exits is None:
        staged = predict_ensemble(model.truncated(7), test_data.X)
        assert curves[0]["ndcg@10"][6] == pytest.approx(
            evaluate("ndcg@10", test_data.y, staged, test_data.query_offsets)["ndcg@10"], abs=1e-12)


@pytest.mark.parametrize("fraction", [-0.1, 1.0, 1.5, float("nan")])
def test_exit_fractions_outside_zero_one_are_refused(fraction, capsys, models):
    with pytest.raises(ParameterError, match="fraction"):
        EarlyExit(every=10, fraction=fraction)
    _, paths, costs = models
    assert main(["cost", "--model", str(paths["gbrt"]), "--data", TEST_FILE, "--feature-costs",
                 str(costs), "--exit-every", "5", "--exit-fraction", str(fraction)]) == 2
    assert "fraction" in capsys.readouterr().err


def test_the_cost_command_names_a_bad_costs_file_and_line(models, tmp_path, capsys):
    _, paths, _ = models
    for text, expected in [("1 1\n2 -2\n", ":2: cost -2 must be"), ("1 1\n2 two\n", ":2: cost 'two'"),
                           ("1 1\n", "no cost for feature 2")]:
        bad = tmp_path / "bad.txt"
        bad.write_text(text)
        assert main(["cost", "--model", str(paths["gbrt"]), "--data", TEST_FILE,
                     "--feature-costs", str(bad)]) == 2
        err = capsys.readouterr().err
        assert str(bad) in err and expected in err


def test_predict_takes_the_exit_flags(models, test_data, tmp_path, capsys):
    _, paths, _ = models
    out = tmp_path / "scores.txt"
    assert main(["predict", "--model", str(paths["gbrt"]), "--data", TEST_FILE, "--output", str(out),
                 "--exit-every", "5", "--exit-fraction", "0.2", "--engine", "reference"]) == 0
    expected = ref_exits.predict_exits(models[0]["gbrt"], test_data.X, test_data.query_offsets, EXITS[0])
    np.testing.assert_allclose(np.loadtxt(out), expected.scores, rtol=1e-15)


def test_an_array_is_one_query():
    from twinrank.reference import GBRT
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 3)), rng.integers(0, 3, 40).astype(float)
    model = GBRT(n_trees=4, max_leaves=4, min_samples_leaf=2).fit(X, y, np.repeat([0, 1], 20)).model_
    a = ref_exits.predict_exits(model, X, None, EarlyExit(every=2, fraction=0.25))
    b = ref_exits.predict_exits(model, X, None, EarlyExit(every=2, fraction=0.25, scope="global"))
    np.testing.assert_array_equal(a.exit_tree, b.exit_tree)
    assert (a.exit_tree == 2).sum() == 10


def test_the_cost_of_a_model_without_costs_counts_the_trees(models, capsys):
    _, paths, _ = models
    assert main(["cost", "--model", str(paths["forest"]), "--data", TEST_FILE, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["cost_per_tree"] == [float(t) for t in range(1, 11)]
    assert "features cost 0" in captured.err



@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.booleans()),
                min_size=1, max_size=30),
       st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]))
def test_the_twins_freeze_the_same_documents_with_ties(rows, fraction):
    rows = sorted(rows, key=lambda r: r[0])  # groups contiguous
    groups = np.array([g for g, _, _ in rows], dtype=np.int64)
    scores = np.array([s for _, s, _ in rows])
    active = np.array([a for _, _, a in rows])
    exits = EarlyExit(every=1, fraction=fraction)
    expected = ref_exits.frozen_now(scores, active, groups, exits)
    np.testing.assert_array_equal(fast_exits.frozen_now(scores, active, groups, exits), expected)
    assert not (expected & ~active).any()
    for g in np.unique(groups):
        n = int((active & (groups == g)).sum())
        assert expected[groups == g].sum() == int(np.floor(fraction * n))

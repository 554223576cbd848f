"""DART, X-DART and LambdaMART A.L.R. (Lucchese et al. 2017): the rule, the twins, snapshots, bad input."""
import math

import numpy as np
import pytest

import twinrank.fast.rankers.dart as fast_dart
import twinrank.reference.rankers.dart as ref_dart
from twinrank.fast.rankers.lambdamart import LambdaMART as FastLambdaMART
from twinrank.reference.analysis.staged import staged_metrics
from twinrank.reference.ensembles.dropout import DropCount, on_grid
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.evaluation.metrics import evaluate, ndcg
from twinrank.reference.evaluation.stats import not_significantly_worse
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.model import load_model
from twinrank.reference.params import BoostParams, DARTParams


@pytest.fixture(scope="module")
def mq2008():
    return load_mq2008(fold=1)


@pytest.fixture(scope="module")
def small(mq2008):
    """A third of MQ2008 Fold1's training queries (the reference twin runs on it in seconds)."""
    train, valid, test = mq2008
    return train.take_queries(np.arange(0, train.n_queries, 3)), valid, test


def history_parts(model) -> dict:
    return {k: model.history[k] for k in ("dropped", "branch", "size")}


def assert_same_models(ref, fast, X):
    assert history_parts(ref.model_) == history_parts(fast.model_)
    assert len(ref.model_.trees) == len(fast.model_.trees)
    for a, b in zip(ref.model_.trees, fast.model_.trees):
        for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref.model_.tree_weights, fast.model_.tree_weights, rtol=1e-12)
    np.testing.assert_allclose(ref.predict(X), fast.predict(X), rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------- the rule

def test_dropping_one_of_one_tree_refits_it_and_shares_the_weight():
    """k = 1 at |E| = 1: the new tree sees the initial scores again, so it is the first tree;
    both end at weight 1/(1 + eta) (Alg. 1's normalisation)."""
    train, valid, _ = load_mq2008(fold=1)
    eta = 0.3
    est = fast_dart.DART(n_trees=2, learning_rate=eta, drop="fixed", drop_k=1, max_leaves=7).fit(train)
    first, second = est.model_.trees
    assert first.equals(second)
    np.testing.assert_array_equal(est.model_.tree_weights, [1 / (1 + eta), 1 / (1 + eta)])
    assert est.history_["dropped"] == [0, 1] and est.history_["branch"] == ["add", "normalize"]


def test_drop_counts_of_the_three_strategies():
    ratio = DropCount(DARTParams(drop="ratio", drop_rate=0.015))
    assert [ratio.next(n) for n in (0, 66, 67, 133, 134, 500)] == [0, 0, 1, 1, 2, 7]
    fixed = DropCount(DARTParams(drop="fixed", drop_k=3))
    assert [fixed.next(n) for n in (0, 2, 3, 100)] == [0, 2, 3, 3]
    adaptive = DropCount(DARTParams(drop="adaptive", drop_step=0.5, drop_max=2))
    seen = []
    for improved in (False, False, False, False, True, False):
        seen.append(adaptive.next(100))
        adaptive.update(improved, 100)
    assert seen == [1, 1, 2, 2, 2, 1]  # k = 1, 1.5, 2, 2 (capped), 2, then 1 after the improvement
    capped = DropCount(DARTParams(drop="adaptive", drop_max_rate=0.015))
    assert capped.params.cap(100) == 1 and capped.params.cap(400) == 6


def test_adaptive_learning_rate_schedule():
    p = BoostParams(learning_rate=0.5, learning_rate_schedule="adaptive", schedule_rate=0.1)
    assert [p.tree_rate(i) for i in (1, 9, 10, 25)] == [0.5, 0.5, 0.5 / 1.5, 0.5 / 2.5]
    assert BoostParams(learning_rate=0.5).tree_rate(1000) == 0.5


def test_alr_shrinks_the_first_tree_by_its_rate(mq2008):
    train = mq2008[0]
    plain = FastLambdaMART(n_trees=1, learning_rate=0.4, max_leaves=7).fit(train).model_.trees[0]
    alr = FastLambdaMART(n_trees=1, learning_rate=0.4, max_leaves=7, learning_rate_schedule="adaptive",
                         schedule_rate=1.0).fit(train).model_.trees[0]
    np.testing.assert_allclose(alr.value, plain.value / 0.4 * (0.4 / 1.4), rtol=1e-12)


def test_on_grid_makes_real_ties_ties():
    s, v = np.array([0.1, 0.1]), np.array([0.3, 0.7])
    assert (s + v - v)[0] != (s + v - v)[1]  # rounding breaks the tie...
    assert on_grid(s + v - v)[0] == on_grid(s + v - v)[1]  # ...the grid restores it


# ---------------------------------------------------------------- X-DART's bookkeeping

def test_xdart_history_is_consistent(small):
    train, valid, _ = small
    est = fast_dart.XDART(n_trees=40, max_leaves=7, seed=3).fit(train, eval_set=[valid])
    h = est.history_
    size, best = 0, 1.0 - evaluate("ndcg@10", valid.y, np.zeros(valid.n_rows), valid.query_offsets)["ndcg@10"]
    for k, branch, n, loss, new_best in zip(h["dropped"], h["branch"], h["size"], h["valid_loss"], h["best_loss"]):
        size = size + 1 - (k if branch == "prune" else 0)
        assert n == size and (branch == "add") == (k == 0)
        if branch == "prune":
            assert loss < best  # pruning only when it beats the best loss so far
        assert new_best == min(best, loss)
        best = new_best
    assert "prune" in h["branch"] and size == est.model_.n_trees == 40
    final = on_grid(est.predict(valid))
    assert abs(1 - evaluate("ndcg@10", valid.y, final, valid.query_offsets)["ndcg@10"] - h["valid_loss"][-1]) < 1e-9


def test_iteration_cap_ends_the_loop(small):
    train, valid, _ = small
    est = fast_dart.XDART(n_trees=30, max_iterations=12, max_leaves=7).fit(train, eval_set=[valid])
    assert len(est.history_["size"]) == 12 and est.model_.n_trees == est.history_["size"][-1] <= 12


# ---------------------------------------------------------------- the twins

@pytest.mark.parametrize("cls, options", [
    ("DART", dict(drop="ratio", drop_rate=0.1, query_subsample=0.8)),
    ("XDART", dict(drop="adaptive", feature_fraction=0.6)),
    ("XDART", dict(drop="fixed", drop_k=2)),
    ("XDART", dict(drop="ratio", drop_rate=0.05, learning_rate=1.0)),
])
def test_twins_agree_on_mq2008(small, cls, options):
    """Same drop draws, same branches, same trees and weights, on real data with its ties."""
    train, valid, test = small
    fitted = [getattr(twin, cls)(n_trees=25, max_leaves=7, seed=5, **options).fit(train, eval_set=[valid])
              for twin in (ref_dart, fast_dart)]
    assert_same_models(*fitted, test.X)


def test_same_model_on_any_thread_count(small):
    train, valid, test = small
    one, two = (fast_dart.XDART(n_trees=30, max_leaves=15, seed=2, n_threads=n).fit(train, eval_set=[valid])
                for n in (1, 2))
    assert history_parts(one.model_) == history_parts(two.model_)
    np.testing.assert_array_equal(one.predict(test), two.predict(test))


# ---------------------------------------------------------------- snapshots, files, CLI

def test_snapshot_is_the_ensemble_when_it_first_reached_that_size(small, tmp_path):
    train, valid, test = small
    options = dict(max_leaves=7, seed=4, drop="fixed", drop_k=3)
    full = fast_dart.XDART(n_trees=30, snapshot_sizes=[15], **options).fit(train, eval_set=[valid])
    early = fast_dart.XDART(n_trees=15, **options).fit(train, eval_set=[valid])
    np.testing.assert_array_equal(full.predict(test, n_trees=15), early.predict(test))
    full.save(tmp_path / "x.json")
    loaded = fast_dart.XDART.load(tmp_path / "x.json")
    assert loaded.snapshot_sizes == (15,)
    np.testing.assert_array_equal(loaded.predict(test, n_trees=15), early.predict(test))
    np.testing.assert_array_equal(ref_dart.XDART.load(tmp_path / "x.json").predict(test), full.predict(test))
    curve = staged_metrics(load_model(tmp_path / "x.json"), test, "ndcg@10")
    assert curve["n_trees"].tolist() == [15, 30]
    assert curve["ndcg@10"][0] == evaluate("ndcg@10", test.y, early.predict(test), test.query_offsets)["ndcg@10"]
    with pytest.raises(ParameterError, match="snapshot sizes"):
        full.predict(test, n_trees=14)


def test_a_snapshot_naming_a_missing_tree_is_refused(small, tmp_path):
    import json
    train, valid, _ = small
    est = fast_dart.DART(n_trees=6, snapshot_sizes=[3], max_leaves=5).fit(train)
    est.save(tmp_path / "d.json")
    doc = json.loads((tmp_path / "d.json").read_text())
    doc["snapshots"][0]["members"][0] = 99
    (tmp_path / "d.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match=r"snapshots\[0\]\.members"):
        load_model(tmp_path / "d.json", verify_checksum=False)


def test_cli_trains_xdart_and_predicts_a_snapshot(tmp_path, small):
    from twinrank.cli import main
    from twinrank.reference.io.letor import write_letor
    train, valid, test = small
    for name, data in (("train", train), ("vali", valid), ("test", test)):
        write_letor(data, tmp_path / f"{name}.txt")
    model = tmp_path / "x.json"
    assert main(["train", "--algorithm", "x-dart", "--train", str(tmp_path / "train.txt"), "--valid",
                 str(tmp_path / "vali.txt"), "--model", str(model), "--trees", "12", "--max-leaves", "7",
                 "--snapshot-sizes", "6", "--quiet"]) == 0
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "test.txt"), "--trees", "6",
                 "--output", str(tmp_path / "s.txt")]) == 0
    scores = np.loadtxt(tmp_path / "s.txt")
    np.testing.assert_array_equal(scores, fast_dart.XDART.load(model).predict(test, n_trees=6))


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("bad, message", [
    (dict(drop_rate=1.5), "drop_rate"), (dict(drop_rate=-0.1), "drop_rate"), (dict(drop_max=0.5), "drop_max"),
    (dict(drop="sometimes"), "drop must be"), (dict(drop_k=-1), "drop_k"), (dict(max_iterations=0), "max_iterations"),
    (dict(snapshot_sizes=[0]), "snapshot_sizes"), (dict(prune_metric="nope@3"), "prune_metric"),
])
def test_bad_parameters_are_refused_before_training(small, bad, message):
    train, valid, _ = small
    with pytest.raises(ParameterError, match=message):
        ref_dart.DART(**bad).fit(train, eval_set=[valid])


def test_pruning_without_validation_data_is_refused(small):
    train = small[0]
    with pytest.raises(ParameterError, match="pruning test"):
        ref_dart.XDART().fit(train)
    with pytest.raises(ParameterError, match="adaptive"):
        ref_dart.DART(drop="adaptive").fit(train)


# ---------------------------------------------------------------- the paper's claim, in miniature

def test_xdart_is_smaller_than_dart_and_not_significantly_worse(mq2008):
    """MQ2008 Fold1, 100 trees: X-DART's final ensemble is smaller, its test NDCG@10 per query
    not significantly worse than DART's (randomization test, p > 0.05)."""
    train, valid, test = mq2008
    dart = fast_dart.DART(n_trees=100, max_leaves=15, seed=1).fit(train, eval_set=[valid])
    xdart = fast_dart.XDART(n_trees=100, max_leaves=15, seed=1, max_iterations=100).fit(train, eval_set=[valid])
    assert xdart.model_.n_trees < dart.model_.n_trees
    a, b = (ndcg(test.y, est.predict(test), test.query_offsets, k=10) for est in (xdart, dart))
    assert not_significantly_worse(a, b)
    assert math.isfinite(a.mean())

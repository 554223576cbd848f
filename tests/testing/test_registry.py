"""The twin registry: every component agrees on hypothesis data; the table and its comparisons.

``twin_component`` runs each test once per registry row (tests/conftest.py). The
rows build their inputs from a generated data set: tiny queries, few distinct
feature values and NaNs for the kernels; continuous features and some hundred rows
for whole models, whose trees could otherwise hang on near-ties of float sums (two
features that cut a node into the same rows, their gains summed in another order by
each twin: the split tie-breaking rule of docs/agreement.md, not yet in this branch).
"""
import importlib

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from twinrank.reference.io.data import Dataset
from twinrank.testing import (
    REGISTRY,
    TOLERANCES,
    Tolerance,
    assert_twins_agree,
    check_twin,
    compare_twins,
    datasets,
    get,
    layers,
    names,
    queries,
    sample_queries,
)

LAYERS = ["metrics", "features", "bins", "histograms", "split choice", "one tree", "lambdas", "gradients", "scoring",
          "combining", "diagnostics", "whole models"]


def test_every_component_agrees_on_generated_data(twin_component):
    whole_model = twin_component.layer == "whole models"
    data = (datasets(continuous=True, min_queries=10, max_queries=30, min_docs=2, max_docs=25) if whole_model
            else datasets())

    @settings(max_examples=15 if whole_model else 40)
    @given(data=data, seed=st.integers(0, 2**16))
    def agree(data, seed):
        result = check_twin(twin_component, data, seed=seed)
        assume(not result.diagnosis)  # a near-tie of two splits: ill-conditioned, not a disagreement
        assert result.passed, f"{result.component}: {result.detail}"
        assert result.max_abs_diff <= result.allowed_abs_diff

    agree()


def test_every_component_resolves_to_two_different_functions(twin_component):
    reference, fast = twin_component.resolve("reference"), twin_component.resolve("fast")
    assert reference is not fast, f"{twin_component.name}: the fast twin re-exports the reference"
    assert twin_component.tolerance in TOLERANCES and twin_component.summary


def test_the_table_is_well_formed():
    assert len(set(names())) == len(REGISTRY) >= 25
    assert layers() == LAYERS  # in layer order, each layer present
    assert {row.tolerance for row in REGISTRY} == set(TOLERANCES)
    conventions = importlib.import_module("twinrank.reference.evaluation.metrics").CONVENTIONS
    assert {f"metrics[{c}]" for c in conventions} <= set(names())
    assert {r.function for r in REGISTRY if r.layer == "whole models"} \
        == {"LambdaMART", "GBRT", "RandomForest", "IGBRT", "McRank", "CumulativeRegression", "DART", "XDART"}
    assert {r.kwargs.get("metric", "ndcg") for r in (get(n).inputs(_tiny(), np.random.default_rng(0))
                                                      for n in names() if n.startswith("lambdarank"))} \
        == {"ndcg", "map", "err"}
    with pytest.raises(KeyError, match="lambdarank\\[map\\]"):
        get("no such component")


def _tiny():
    rng = np.random.default_rng(0)
    return Dataset(rng.random((12, 3)).astype(np.float32), rng.integers(0, 3, 12), [0, 5, 12])


# ---------------------------------------------------------------- comparisons

def test_compare_exact_and_tolerant_parts():
    exact, loose = TOLERANCES["exact"], Tolerance(1e-9, 0.0)
    a = {"x": np.array([1.0, np.nan, np.inf]), "n": np.array([3, 4])}
    assert compare_twins(a, {k: v.copy() for k, v in a.items()}, exact).passed
    b = {"x": np.array([1.0 + 1e-12, np.nan, np.inf]), "n": np.array([3, 4])}
    assert not compare_twins(a, b, exact).passed and compare_twins(a, b, loose).passed
    result = compare_twins(a, b, exact)
    assert result.max_abs_diff == pytest.approx(1e-12, rel=1e-3) and "x[0]" in result.detail
    assert compare_twins(a, b, loose).allowed_abs_diff == pytest.approx(1e-9)
    integers = compare_twins(a, {"x": a["x"], "n": np.array([3, 5])}, loose)  # integers: exact whatever the tolerance
    assert not integers.passed and "n[1]: reference 4, fast 5 (1 of 2 values differ)" in integers.detail
    nan_moved = compare_twins(a, {"x": np.array([1.0, 2.0, np.inf]), "n": a["n"]}, loose)
    assert not nan_moved.passed and "x[1]" in nan_moved.detail
    shape = compare_twins(a, {"x": a["x"][:2], "n": a["n"]}, loose)
    assert not shape.passed and shape.max_abs_diff is None and "shape" in shape.detail
    assert not compare_twins(a, {"x": a["x"]}, loose).passed


def test_scaled_tolerance_and_relative_difference():
    tol = TOLERANCES["objectives"]
    r = np.array([0.0, 100.0])
    assert tol.bound(r)[0] == pytest.approx(1e-10 * 101)
    result = compare_twins({"g": r}, {"g": r + [5e-9, 0.0]}, tol)
    assert result.passed and result.max_rel_diff == pytest.approx(5e-11)
    assert not compare_twins({"g": r}, {"g": r + [2e-8, 0.0]}, tol).passed


@given(queries(max_queries=4, max_docs=6))
def test_assert_twins_agree_on_a_named_function(problem):
    y, scores, offsets = problem
    result = assert_twins_agree(("objectives", "lambdarank"), y, scores, offsets, metric="map")
    assert result.tolerance_name == "objectives"
    assert_twins_agree(("metrics", "evaluate"), ["ndcg@3", "map"], y, scores, offsets, per_query=True)


def test_assert_twins_agree_on_a_callable_and_a_component():
    data = _tiny()

    def pipeline(twin, data):
        thresholds = twin.binning.bin_thresholds(data.X, 8)
        return twin.binning.apply_bins(data.X, thresholds)

    assert assert_twins_agree(pipeline, data, tolerance="exact").passed
    assert assert_twins_agree("grow_tree", data, seed=3).component == "grow_tree"
    with pytest.raises(TypeError, match="one Dataset"):
        assert_twins_agree("grow_tree", data, data)


def test_assert_twins_agree_fails_on_a_perturbed_fast_function(monkeypatch):
    fast = importlib.import_module("twinrank.fast.losses.objectives")
    original = fast.lambdarank

    def perturbed(*args, **kwargs):
        g, h = original(*args, **kwargs)
        return g * (1 + 1e-6), h

    monkeypatch.setattr(fast, "lambdarank", perturbed)
    y, scores, offsets = np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.25, 0.0]), np.array([0, 3])
    with pytest.raises(AssertionError, match="twins disagree on objectives.lambdarank: 0\\[0\\]"):
        assert_twins_agree(("objectives", "lambdarank"), y, scores, offsets)
    assert not check_twin("lambdarank[map]", _tiny()).passed


def test_one_twin_raising_is_a_disagreement_and_both_raising_alike_is_not(monkeypatch):
    data = _tiny()
    both = check_twin("metrics[ranklib]", Dataset(data.X, data.y * 3, data.query_offsets))  # labels > 4
    assert both.passed and "both twins raise ParameterError" in both.detail
    fast = importlib.import_module("twinrank.fast.trees.binning")

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(fast, "apply_bins", broken)
    result = check_twin("apply_bins", data)
    assert not result.passed and "fast raises RuntimeError: boom; reference returns normally" in result.detail


def test_sample_queries_is_deterministic_and_keeps_whole_queries():
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 30, 50)
    data = Dataset(rng.random((sizes.sum(), 2)), rng.integers(0, 3, sizes.sum()), np.r_[0, np.cumsum(sizes)])
    assert sample_queries(data, max_rows=10**6)[0] is data
    sample, note = sample_queries(data, max_rows=200, seed=4)
    again, _ = sample_queries(data, max_rows=200, seed=4)
    assert sample.n_rows <= 200 and np.array_equal(sample.X, again.X) and "subsample" in note
    assert set(np.diff(sample.query_offsets)) <= set(sizes)
    assert sample_queries(data, max_queries=3)[0].n_queries == 3
    assert sample_queries(data, max_rows=1)[0].n_queries == 1  # at least one query


def test_a_near_tie_of_two_splits_is_diagnosed():
    """Features 0 and 1 order the rows the same way: a split on either gives the same two groups."""
    from twinrank.reference.io.model import Ensemble, Tree
    from twinrank.testing.registry import Inputs, split_tie

    x = np.arange(8, dtype=np.float32)
    train = Dataset(np.column_stack([x, 10 * x, x[::-1]]), np.zeros(8), [0, 8])

    def stump(feature, threshold, gain):
        return Tree(feature=[feature, -1, -1], threshold=[threshold, 0, 0], bin_threshold=[3, -1, -1],
                    left=[1, -1, -1], right=[2, -1, -1], missing=[2, -1, -1], value=[0, -1, 1],
                    gain=[gain, 0, 0], count=[8, 4, 4], hessian_sum=[8, 4, 4])

    def model(tree):
        return np.zeros(8), Ensemble(trees=[tree], tree_weights=[1.0], n_features=3)

    inputs = Inputs((train, train))
    same = split_tie(inputs, model(stump(0, 3.5, 2.0)), model(stump(1, 35.0, 2.0 + 1e-15)))
    assert same.startswith("a near-tie: tree 0 node 0, feature 0 bin 3 (reference) and feature 1 bin 3 (fast) "
                           "cut its 8 training rows the same way")
    mirrored = split_tie(inputs, model(stump(0, 3.5, 2.0)), model(stump(2, 3.5, 2.0)))
    assert "the same way" in mirrored  # x[::-1] <= 3.5 is the other group: the same partition
    assert split_tie(inputs, model(stump(0, 3.5, 2.0)), model(stump(0, 1.5, 2.0))) == ""  # a real difference
    leaf = Tree(**{**stump(0, 0, 0).__dict__, "feature": [-1], "threshold": [0], "bin_threshold": [-1],
                   "left": [-1], "right": [-1], "missing": [-1], "value": [0], "gain": [0], "count": [8],
                   "hessian_sum": [8]})
    assert "splits on a gain of 1.0e-16, zero in exact arithmetic" in split_tie(
        inputs, model(leaf), model(stump(0, 3.5, 1e-16)))

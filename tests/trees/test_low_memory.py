"""``low_memory`` (``FitParams``): the fast twin keeps its bins in one layout, column order, with no
row-order copy, and grows the same trees bit for bit: every node's histogram is summed from the
columns in the order the row pass sums it (``_histogram``), the sparse features' entries are made
from the columns a block of rows at a time (``_skipped_bins._by_rows``); the option is checked."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from synthetic import ranking_data

import twinrank.fast as fast_twin
import twinrank.reference as reference_twin
from twinrank.fast.engine import FAST
from twinrank.fast.runtime._simd import LANES
from twinrank.fast.trees import binning, tree as fast
from twinrank.fast.trees._histogram import FEATURE_SLOTS, SPARSE_RATIO, build_into
from twinrank.fast.trees._layout import _ROW_MAJOR, bin_layouts, low_memory, sparse_layout
from twinrank.fast.trees._packed_histogram import PACKED_SKIP_RATIO, build_packed_into, packed_chunk
from twinrank.reference.engine import REFERENCE
from twinrank.reference.errors import ParameterError
from twinrank.reference.params import FitParams, TreeParams


def sparse_data(seed, n_rows, n_features, zeros=0.7, missing=0.02):
    """Rows with every other feature mostly 0 (sparse: ``_skipped_bins``) and a few NaN."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    X[:, ::2] = np.where(rng.random((n_rows, (n_features + 1) // 2)) < zeros, 0.0, X[:, ::2])
    X[rng.random(X.shape) < missing] = np.nan
    return X, rng


def node_inputs(seed, n_rows, n_features, m):
    """Fast bins (both layouts), float and integer gradients and the scattered rows of a node of ``m``."""
    X, rng = sparse_data(seed, n_rows, n_features)
    binned = binning.apply_bins(X, binning.bin_thresholds(X, 255))
    columns, rows = fast._flat_layouts(binned)
    order = np.sort(rng.choice(n_rows, m, replace=False)).astype(np.int32)
    g, h = rng.normal(size=n_rows), rng.random(n_rows)
    return columns, rows, order, g, h, rng


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), n_features=st.integers(1, 60), m=st.sampled_from([5, 200, 2_999]))
@example(seed=0, n_features=40, m=2_999)  # in halves: 2 threads, m * d >= PARALLEL_WORK, under 1 / SPARSE_RATIO
def test_every_node_summed_from_the_columns_is_the_row_pass_bit_for_bit(seed, n_features, m):
    n_rows = 48_000
    assert m < n_rows // SPARSE_RATIO  # a node the row pass sums
    columns, rows, order, g, h, _ = node_inputs(seed, n_rows, n_features, m)
    hists = []
    for bin_rows in (rows, rows[:0]):
        hist, spare = np.empty((2, n_features, FEATURE_SLOTS, LANES))
        parent = np.ones((n_features, FEATURE_SLOTS, LANES))
        build_into(hist, columns, bin_rows, g, h, order, 0, m, np.empty((m, 2)), 2, parent, True, spare,
                   SPARSE_RATIO, True)
        hists.append((hist, parent))
    np.testing.assert_array_equal(hists[0][0], hists[1][0])
    np.testing.assert_array_equal(hists[0][1], hists[1][1])


@pytest.mark.parametrize("m", [300, 2_000])
def test_packed_histograms_from_the_columns_are_the_row_pass(m):
    n_rows, n_features = 24_000, 40
    columns, rows, order, _, _, rng = node_inputs(7, n_rows, n_features, m)
    g_int = rng.integers(-7, 8, n_rows).astype(np.int8)
    h_int = rng.integers(0, 16, n_rows).astype(np.uint8)
    chunk, k = packed_chunk(m, np.int64(7), np.int64(15), np.int64(1 << 40))
    hists = []
    for bin_rows in (rows, rows[:0]):
        for big in (True, None):  # None: a small data set's serial twins of the parallel passes
            hist = np.empty((n_features, FEATURE_SLOTS, LANES))
            ihist = np.empty((2, n_features, FEATURE_SLOTS), np.int64)
            build_packed_into(hist, ihist, columns, bin_rows, (g_int, h_int, chunk, k), (order, 0, m),
                              np.empty(m, np.int64), 2, hist, False, PACKED_SKIP_RATIO, big)
            hists.append(hist)
    for hist in hists[1:]:
        np.testing.assert_array_equal(hist, hists[0])
    assert hists[0][:, :, 1].sum() == h_int[order].sum() * n_features  # every row summed, every feature


def test_one_layout_makes_no_row_major_copy_and_the_same_entries_and_tree():
    X, rng = sparse_data(3, 70_000, 12)  # more rows than one chunk of the entries' pass
    thresholds = binning.bin_thresholds(X, 255)
    g, h = rng.normal(size=len(X)), rng.random(len(X))
    params = TreeParams(max_leaves=31)
    trees, layouts = [], []
    for lean in (True, False):  # lean first: nothing kept for these bins yet
        binned = binning.apply_bins(X, thresholds)
        with low_memory(lean):
            assert bin_layouts(binned)[1].size == (0 if lean else binned.size)
            trees.append(fast.grow_tree(binned, g, h, thresholds, params))
            layouts.append(sparse_layout(binned))
            assert ("rows" in _ROW_MAJOR[id(binned)][1]) is not lean
    assert len(layouts[0][3]) > 0  # the sparse features' entries were made
    for lean_part, part in zip(layouts[0], layouts[1]):
        np.testing.assert_array_equal(lean_part, part)
    for field in ("feature", "bin_threshold", "left", "right", "missing", "value", "gain", "count"):
        np.testing.assert_array_equal(getattr(trees[0], field), getattr(trees[1], field))


def fitted_scores(twin, X, y=None, qid=None, **params):
    model = twin.LambdaMART(n_trees=6, seed=4, **params).fit(X, y, qid)
    return model.predict(X.X if y is None else X), model.model_


@pytest.mark.parametrize("options", [{}, {"quantized_gradients": True}, {"missing": "separate"}],
                         ids=["exact", "quantized", "separate"])
def test_lean_fit_is_the_default_fit_on_mq2008(options, monkeypatch):
    train, _, _ = fast_twin.load_mq2008(fold=1)
    row_layouts = []  # the size of the row-major bins each tree of the training rows was grown with

    def flat_layouts(binned):
        columns, rows = bin_layouts(binned)
        if binned.shape == train.X.shape:  # not a tiny tree a cold cache compiles with (``_warm``)
            row_layouts.append(rows.size)
        return columns.reshape(-1, order="F"), rows.reshape(-1)

    monkeypatch.setattr(fast, "_flat_layouts", flat_layouts)
    lean, lean_model = fitted_scores(fast_twin, train.X, train.y, train.qid, low_memory=True, **options)
    assert row_layouts and set(row_layouts) == {0}
    default, default_model = fitted_scores(fast_twin, train.X, train.y, train.qid, **options)
    assert set(row_layouts[len(lean_model.trees):]) == {train.X.size}
    np.testing.assert_array_equal(lean, default)
    for lean_tree, tree in zip(lean_model.trees, default_model.trees):
        np.testing.assert_array_equal(lean_tree.value, tree.value)
        np.testing.assert_array_equal(lean_tree.feature, tree.feature)


@pytest.mark.parametrize("options", [{}, {"quantized_gradients": True}], ids=["exact", "quantized"])
def test_lean_fit_is_the_default_fit_with_sparse_features_and_one_document_queries(options):
    X, rng = sparse_data(11, 60_000, 24)
    qid = np.sort(np.r_[np.arange(200), rng.integers(200, 2_500, len(X) - 200)])  # 200 one-document queries
    y = (np.nan_to_num(X[:, 1]) > 0).astype(int) + (np.nan_to_num(X[:, 2]) > 1)
    lean, _ = fitted_scores(fast_twin, X, y, qid, low_memory=True, max_leaves=63, **options)
    default, _ = fitted_scores(fast_twin, X, y, qid, max_leaves=63, **options)
    np.testing.assert_array_equal(lean, default)


def test_twins_agree_with_low_memory():
    data = ranking_data(n_queries=40, max_docs=10, n_features=5, seed=2, levels=9)
    options = {"low_memory": True, "quantized_gradients": True}  # integer sums: the twins' trees bit for bit
    reference, _ = fitted_scores(reference_twin, data, **options)
    fast_scores, _ = fitted_scores(fast_twin, data, **options)
    np.testing.assert_allclose(fast_scores, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("twin", [reference_twin, fast_twin], ids=["reference", "fast"])
@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_low_memory_must_be_true_or_false(twin, bad):
    with pytest.raises(ParameterError, match="low_memory must be True or False"):
        twin.LambdaMART(n_trees=1, low_memory=bad).fit(ranking_data(n_queries=5, seed=1))
    with pytest.raises(ParameterError, match="low_memory must be True or False"):
        FitParams(low_memory=bad)
    for engine in (FAST, REFERENCE):
        with pytest.raises(ParameterError, match="low_memory must be True or False"), engine.low_memory(bad):
            pass

"""The root histogram without the sparse features' most frequent bins (``fast/trees/_skipped_bins.py``): the
layout lists exactly the other entries, the histogram's (g, h) are the reference's (bit for bit on
representable values, on any thread count; the fast grower's histograms count no rows), and trees
grown with it are the reference's trees, including a skipped bin whose hessians are all zero."""
import numba
import numpy as np
import pytest

from twinrank.fast.runtime._simd import LANES
from twinrank.fast.trees import _grower, binning as fast_binning, tree as fast
from twinrank.fast.trees._histogram import FEATURE_SLOTS
from twinrank.fast.trees._layout import sparse_layout
from twinrank.fast.trees._skipped_bins import (
    MAX_FEATURES,
    PADDING,
    SKIP_SHARE,
    all_dense,
    build_skipping,
    build_skipping_serial,
    sparse_rows,
)
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import binning as ref_binning, tree as ref

STEP = 2.0**-8  # multiples of STEP: every sum exact, in any order


def zero_heavy(seed, n_rows, n_features, *, exact=True):
    """Features mostly 0 (shares 0.2 .. 0.95 of the rows), a copy and a nested coarsening of
    feature 0, NaNs; gradients and hessians (multiples of STEP if ``exact``)."""
    rng = np.random.default_rng(seed)
    share = np.linspace(0.2, 0.95, n_features - 2)
    X = rng.integers(1, 12, (n_rows, n_features)).astype(np.float32)
    X[:, :-2][rng.random((n_rows, n_features - 2)) < share] = 0.0
    X[rng.random(X.shape) < 0.03] = np.nan
    X[:, -2] = X[:, 0]  # duplicated
    X[:, -1] = np.floor(X[:, 0] / 4)  # nested
    thresholds = ref_binning.bin_thresholds(X, 255)
    if exact:
        g, h = rng.integers(-128, 129, n_rows) * STEP, rng.integers(0, 65, n_rows) * STEP
    else:
        g, h = rng.standard_normal(n_rows), rng.uniform(0.0, 1.0, n_rows)
    return X, thresholds, g, h


def dense_histogram(binned, g, h, layout, rows=None, gh_rows=None, kernel=build_skipping):
    columns, _ = fast._flat_layouts(binned)
    d = binned.shape[1]
    hist, spare = np.empty((d, FEATURE_SLOTS, LANES)), np.empty((d, FEATURE_SLOTS, LANES))
    rows = np.arange(len(g), dtype=np.int32) if rows is None else rows
    gh = np.empty((len(rows) if gh_rows is None else gh_rows, 2))
    kernel(hist, spare, columns, g, h, rows, 0, len(rows), gh,
                   numba.get_num_threads(), np.array([g[rows].sum(), h[rows].sum()]), layout, hist, False)
    return hist


def test_layout_lists_every_entry_outside_the_skipped_bins():
    X, thresholds, _, _ = zero_heavy(0, 3000, 12)
    X[[5, 77]] = 0.0  # rows at every sparse feature's most frequent bin (0: shares 0.2 .. 0.95 are zeros)
    binned = fast_binning.apply_bins(X, thresholds)
    skip, dense, entry_start, entries, row_starts = sparse_layout(binned)
    assert sparse_layout(binned)[3] is entries  # made once per binned matrix
    counts = np.array([np.bincount(binned[:, f], minlength=256) for f in range(12)])
    expected_skip = np.where(counts.max(1) >= SKIP_SHARE * len(X), counts.argmax(1), -1)
    np.testing.assert_array_equal(skip, expected_skip)
    np.testing.assert_array_equal(dense, np.flatnonzero(expected_skip < 0))
    assert 0 < (skip >= 0).sum() < 12  # both kinds of features
    padding = int(np.flatnonzero(skip >= 0)[0]) * FEATURE_SLOTS + PADDING
    empty = 0
    for r in range(len(X)):
        sparse = [f for f in range(12) if skip[f] >= 0 and binned[r, f] != skip[f]]
        slots = [f * FEATURE_SLOTS + int(binned[r, f]) for f in sparse] or [padding]  # one entry at least
        empty += not sparse
        np.testing.assert_array_equal(entries[entry_start[r]:entry_start[r + 1]], slots)
    assert empty >= 2
    assert entry_start[-1] == empty + sum((binned[:, f] != skip[f]).sum() for f in range(12) if skip[f] >= 0)
    firsts = np.unpackbits(row_starts.view(np.uint8), bitorder="little")  # bit e: entry e starts its row
    np.testing.assert_array_equal(np.flatnonzero(firsts), entry_start[:-1])


def test_no_layout_without_sparse_features_or_with_too_many_features():
    rng = np.random.default_rng(1)
    uniform = rng.integers(0, 200, (500, 3)).astype(np.uint8)
    assert len(sparse_rows(np.asfortranarray(uniform), uniform)[3]) == 0
    wide = np.zeros((4, MAX_FEATURES + 1), dtype=np.uint8)  # sparse, but slot numbers exceed 16 bits
    assert len(sparse_rows(np.asfortranarray(wide), wide)[3]) == 0
    writable = np.asfortranarray(np.zeros((10, 2), dtype=np.uint8))  # not the read-only bins: none
    assert len(sparse_layout(writable)[3]) == 0


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("node", ["root", "child"])
def test_dense_node_histogram_is_the_reference_one_on_any_thread_count(exact, node):
    X, thresholds, g, h = zero_heavy(2, 20_000, 16, exact=exact)
    binned = fast_binning.apply_bins(X, thresholds)
    rows = (np.arange(len(g)) if node == "root"
            else np.flatnonzero(np.random.default_rng(4).random(len(g)) < 0.4)).astype(np.int32)
    expected = ref.build_histogram(ref_binning.apply_bins(X, thresholds), g, h, rows)
    old = numba.get_num_threads()
    try:
        grown = []
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            grown.append(dense_histogram(binned, g, h, sparse_layout(binned), rows))
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(grown[0], grown[1])  # halves fixed: the same bits
    # a small data set's kernel (_grower.big_nodes): its loops on the calling thread, the same bits
    np.testing.assert_array_equal(dense_histogram(binned, g, h, sparse_layout(binned), rows,
                                                  kernel=build_skipping_serial), grown[0])
    hist, expected = grown[0][:, :256], expected[..., :2]  # (g, h): the fast grower counts no rows
    assert not grown[0][:, 256:].any()  # padding slots zero
    if exact:
        np.testing.assert_array_equal(hist, expected)
    else:
        np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-12 * np.abs(g).sum())


@pytest.mark.parametrize("node", ["root", "child"])
def test_a_node_gathered_one_half_at_a_time_has_the_bits_of_one_pass(node):
    """A gathered (g, h) of half the rows and one (the grower's under ``low_memory``,
    ``_grower.gathered_rows``): the node is summed one half at a time, its dense sums carried over:
    bit for bit one pass's sums, on inexact values (where the order of the additions shows), on any
    thread count."""
    X, thresholds, g, h = zero_heavy(3, 20_000, 16, exact=False)
    binned = fast_binning.apply_bins(X, thresholds)
    rows = (np.arange(len(g)) if node == "root"
            else np.flatnonzero(np.random.default_rng(5).random(len(g)) < 0.4)).astype(np.int32)
    layout = sparse_layout(binned)
    one_pass = dense_histogram(binned, g, h, layout, rows)
    old = numba.get_num_threads()
    try:
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            halves = dense_histogram(binned, g, h, layout, rows, gh_rows=len(rows) // 2 + 1)
            np.testing.assert_array_equal(halves, one_pass)
    finally:
        numba.set_num_threads(old)


def test_the_root_is_gathered_in_halves_under_one_layout_only():
    """``gathered_rows``: every row's (g, h) with the row-major copy (the root in one pass, its entries
    on both tasks: faster on two threads), half the rows and one under ``low_memory`` (8 bytes a row
    less), and every row wherever the root is not summed by ``build_skipping``."""
    m, d = 100_000, 136
    assert _grower.gathered_rows(m, m, d, True, False) == m
    assert _grower.gathered_rows(m, m, d, True, True) == m // 2 + 1
    assert _grower.gathered_rows(m // 20, m, d, True, True) == m // 20  # a sample under a tenth: the row pass
    assert _grower.gathered_rows(100, 100, 4, True, True) == 100  # too small for threads: build_into


def test_rows_without_entries_leave_no_trace_in_the_sums():
    """Rows at every sparse feature's most frequent bin (one entry each, into a padding slot): the
    root's entries summed as one stream still give each row its own (g, h), the padding slots stay
    zero, and the trees, exact and quantized, are the reference's."""
    X, thresholds, g, h = zero_heavy(4, 6000, 12)
    X[::5] = 0.0
    binned = fast_binning.apply_bins(X, thresholds)
    layout = sparse_layout(binned)
    assert (np.diff(layout[2]) == 1).sum() >= 1200  # a fifth of the rows and more: a padding entry or one
    ref_binned = ref_binning.apply_bins(X, thresholds)
    child = np.flatnonzero(np.random.default_rng(9).random(len(g)) < 0.5).astype(np.int32)
    for rows in (np.arange(len(g), dtype=np.int32), child):
        for gh_rows in (len(rows), len(rows) // 2 + 1):  # in one pass, in halves
            hist = dense_histogram(binned, g, h, layout, rows, gh_rows=gh_rows)
            assert not hist[:, 256:].any()
            np.testing.assert_array_equal(hist[:, :256], ref.build_histogram(ref_binned, g, h, rows)[..., :2])
    params = TreeParams(max_leaves=15, min_samples_leaf=10)
    assert fast.grow_tree(binned, g, h, thresholds, params).equals(ref.grow_tree(ref_binned, g, h, thresholds,
                                                                                 params))
    q = fast.quantize_gradients(np.random.default_rng(0), g, h, 4)
    assert fast.grow_tree(binned, g, h, thresholds, params, quantized=q).equals(
        ref.grow_tree(ref_binned, g, h, thresholds, params, quantized=q))


def test_the_sibling_is_the_parent_minus_the_node():
    X, thresholds, g, h = zero_heavy(5, 6000, 10)
    binned = fast_binning.apply_bins(X, thresholds)
    columns, _ = fast._flat_layouts(binned)
    rows = np.flatnonzero(np.random.default_rng(6).random(len(g)) < 0.5).astype(np.int32)
    parent = dense_histogram(binned, g, h, sparse_layout(binned))
    expected = parent - dense_histogram(binned, g, h, sparse_layout(binned), rows)
    hist, spare = np.empty_like(parent), np.empty_like(parent)
    build_skipping(hist, spare, columns, g, h, rows, 0, len(rows), np.empty((len(rows), 2)),
                   numba.get_num_threads(), np.array([g[rows].sum(), h[rows].sum()]), sparse_layout(binned),
                   parent, True)
    np.testing.assert_array_equal(parent, expected)


def test_a_skipped_bin_of_zero_hessians_has_hessian_zero():
    """Rows of the most frequent bin all with h = 0 (queries without pairs): the subtraction's
    rounding residue is zero again, as the reference's sum, so ``min_hessian_in_leaf=0`` accepts
    the same splits."""
    X, thresholds, g, h = zero_heavy(3, 5000, 6, exact=False)
    binned = fast_binning.apply_bins(X, thresholds)
    skip = sparse_layout(binned)[0]
    f = int(np.flatnonzero(skip >= 0)[-1])
    h[binned[:, f] == skip[f]] = 0.0
    hist = dense_histogram(binned, g, h, sparse_layout(binned))
    assert hist[f, skip[f], 1] == 0.0
    params = TreeParams(max_leaves=8, min_samples_leaf=5, min_hessian_in_leaf=0.0)
    g_grid = np.round(g / STEP) * STEP
    tree = fast.grow_tree(binned, g_grid, h * 0 + (h > 0) * 0.5, thresholds, params)
    assert tree.equals(ref.grow_tree(ref_binning.apply_bins(X, thresholds), g_grid, h * 0 + (h > 0) * 0.5,
                                     thresholds, params))


@pytest.mark.parametrize("seed", range(3))
def test_trees_with_the_skipped_bins_are_the_reference_trees(seed):
    X, thresholds, g, h = zero_heavy(10 + seed, 8000, 24)
    binned = fast_binning.apply_bins(X, thresholds)
    assert len(sparse_layout(binned)[3]) > 0  # the path is taken
    params = TreeParams(max_leaves=15, min_samples_leaf=10, min_hessian_in_leaf=0.0)
    tree = fast.grow_tree(binned, g, h, thresholds, params)
    assert tree.equals(ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params))
    sampled = np.sort(np.random.default_rng(seed).choice(len(g), 5000, replace=False))  # a root of some rows
    assert fast.grow_tree(binned, g, h, thresholds, params, rows=sampled).equals(
        ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, rows=sampled))


@pytest.mark.parametrize("chunk_rows", [None, 777])
def test_quantized_trees_with_the_skipped_bins_are_the_reference_trees_on_any_thread_count(chunk_rows,
                                                                                         monkeypatch):
    """Integer sums: the same tree as the reference bit for bit, cut into chunks of rows or not
    (``PACKED_CHUNK_ROWS``), on one thread or two."""
    if chunk_rows is not None:
        monkeypatch.setattr(fast, "PACKED_CHUNK_ROWS", chunk_rows)
    X, thresholds, g, h = zero_heavy(20, 8000, 24, exact=False)
    binned = fast_binning.apply_bins(X, thresholds)
    assert len(sparse_layout(binned)[3]) > 0
    q = fast.quantize_gradients(np.random.default_rng(0), g, h, 4)
    params = TreeParams(max_leaves=15, min_samples_leaf=10)
    expected = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    old = numba.get_num_threads()
    try:
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            assert fast.grow_tree(binned, g, h, thresholds, params, quantized=q).equals(expected)
    finally:
        numba.set_num_threads(old)


def test_without_sparse_features_the_dense_histogram_is_the_reference_one_bit_for_bit():
    """``all_dense``: the plain column pass, each feature summed by one task in row order, so even
    inexact sums are the reference's bits."""
    X, thresholds, g, h = zero_heavy(7, 20_000, 12, exact=False)
    binned = fast_binning.apply_bins(X, thresholds)
    rows = np.flatnonzero(np.random.default_rng(8).random(len(g)) < 0.3).astype(np.int32)
    for node in (np.arange(len(g), dtype=np.int32), rows):
        hist = dense_histogram(binned, g, h, all_dense(binned.shape[1]), node)
        expected = ref.build_histogram(ref_binning.apply_bins(X, thresholds), g, h, node)
        np.testing.assert_array_equal(hist[:, :256], expected[..., :2])

"""The tree grower, layer by layer: histograms, split choice, whole trees, twins, threads, oracles."""
import gc
import importlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import assume, event, given, strategies as st

from twinrank.fast.runtime._workspace import empty as workspace_empty, reusing
from twinrank.fast.trees import binning as fast_binning, tree as fast
from twinrank.fast.trees._layout import _ROW_MAJOR, bin_layouts
from twinrank.fast.trees._partition import PARALLEL_ROWS, PARTITION_BLOCK, partition
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import LEAF
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import binning as ref_binning, tree as ref
from twinrank.reference.trees.binning import MISSING_BIN
from twinrank.reference.trees.predict import predict_tree

TWINS = [ref, fast]
TWIN_IDS = ["reference", "fast"]
STEP = 2.0**-8  # gradients and hessians are multiples of STEP where bit equality is expected


def make_problem(seed, n_rows, n_features, *, max_bins=6, missing=0.2, exact=True):
    """Features with few distinct values and NaNs, binned by both twins; gradients and hessians."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, max_bins + 2, (n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < missing] = np.nan
    thresholds = ref_binning.bin_thresholds(X, max_bins)
    if exact:
        g = rng.integers(-128, 129, n_rows) * STEP
        h = rng.integers(0, 65, n_rows) * STEP
    else:
        g, h = rng.standard_normal(n_rows), rng.uniform(0.1, 1.0, n_rows)
    return X, thresholds, g, h


def binned_for(twin, X, thresholds):
    return (ref_binning if twin is ref else fast_binning).apply_bins(X, thresholds)


@pytest.mark.parametrize("name", ["binning", "tree", "predict"])
def test_every_public_name_of_the_reference_has_a_fast_twin(name):
    ref_module = importlib.import_module(f"twinrank.reference.{name}")
    fast_module = importlib.import_module(f"twinrank.fast.{name}")
    public = {n for n, v in vars(ref_module).items() if not n.startswith("_")
              and getattr(v, "__module__", ref_module.__name__) == ref_module.__name__
              and not isinstance(v, type(importlib))}
    assert public <= set(dir(fast_module)), public - set(dir(fast_module))


# ---------------------------------------------------------------- histograms

@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 200), n_features=st.integers(1, 6),
       constant_hessian=st.booleans(), rows=st.sampled_from(["bootstrap", "half", "few"]))
def test_histograms_identical_in_both_twins_and_to_naive_sums(seed, n_rows, n_features,
                                                              constant_hessian, rows):
    """"few" rows (under 1/16 of the data) take the fast twin's row-major path."""
    X, thresholds, g, h = make_problem(seed, n_rows, n_features)
    if constant_hessian:
        h = np.full(n_rows, 3 * STEP)
    rng = np.random.default_rng(seed)
    rows = {"bootstrap": np.sort(rng.integers(0, n_rows, n_rows)),
            "half": rng.permutation(n_rows)[: n_rows // 2 + 1],
            "few": rng.integers(0, n_rows, max(1, n_rows // 20))}[rows]
    binned = ref_binning.apply_bins(X, thresholds)
    naive = np.zeros((n_features, 256, 3))
    for f in range(n_features):
        np.add.at(naive[f, :, 0], binned[rows, f], g[rows])
        np.add.at(naive[f, :, 1], binned[rows, f], h[rows])
        np.add.at(naive[f, :, 2], binned[rows, f], 1.0)
    hist_ref = ref.build_histogram(binned, g.copy(), h.copy(), rows.copy())
    hist_fast = fast.build_histogram(fast_binning.apply_bins(X, thresholds), g.copy(), h.copy(), rows.copy())
    np.testing.assert_array_equal(hist_ref, naive)
    np.testing.assert_array_equal(hist_fast, hist_ref)


# ---------------------------------------------------------------- split choice

def naive_candidates(binned, g, h, rows, n_bins, allowed, penalty, params, min_rows):
    """Every candidate split of the rules, in their order, scored from the rows themselves.

    Yields (gain or None when invalid, feature, bin, missing_left, goes_left mask).
    """
    def score(gs, hs):
        return gs * gs / (hs + params.lambda_l2) if hs + params.lambda_l2 > 0 else 0.0

    gr, hr = g[rows], h[rows]
    parent = score(gr.sum(), hr.sum())
    for f in np.flatnonzero(allowed):
        col = binned[rows, f]
        missing = col == MISSING_BIN
        for b in range(n_bins[f]):
            last = b == n_bins[f] - 1
            if missing.any():
                options = [False] if last else [False, True]
            else:
                options = [] if last else [None]
            for missing_left in options:
                goes_left = np.where(missing, bool(missing_left), col <= b)
                n_left, n_right = goes_left.sum(), (~goes_left).sum()
                h_left, h_right = hr[goes_left].sum(), hr[~goes_left].sum()
                valid = (min(n_left, n_right) >= min_rows
                         and min(h_left, h_right) >= params.min_hessian_in_leaf)
                gain = (score(gr[goes_left].sum(), h_left) + score(gr[~goes_left].sum(), h_right)
                        - parent - penalty[f])
                if missing_left is None:
                    missing_left = n_left >= n_right
                yield (gain if valid else None), f, b, missing_left, goes_left


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(6, 40), n_features=st.integers(1, 4),
       min_rows=st.integers(1, 3), lambda_l2=st.sampled_from([0.0, 1.0]),
       cost_lambda=st.sampled_from([0.0, 0.3]))
def test_best_split_matches_a_naive_split_finder(twin, seed, n_rows, n_features, min_rows, lambda_l2,
                                                 cost_lambda):
    """Exact sums, so candidates with the same partition (e.g. on two features) tie exactly
    and the first in the rule order must win; others must lose by more than the tolerance."""
    X, thresholds, g, h = make_problem(seed, n_rows, n_features)
    rng = np.random.default_rng(seed)
    binned = binned_for(twin, X, thresholds)
    rows = np.sort(rng.integers(0, n_rows, n_rows))
    allowed = rng.random(n_features) < 0.8
    penalty = cost_lambda * rng.random(n_features)
    params = TreeParams(min_samples_leaf=min_rows, lambda_l2=lambda_l2, cost_lambda=cost_lambda)
    n_bins = np.array([len(t) + 1 for t in thresholds])
    candidates = [c for c in naive_candidates(binned, g, h, rows, n_bins, allowed, penalty, params,
                                              min_rows) if c[0] is not None]
    hist = twin.build_histogram(binned, g.copy(), h.copy(), rows.copy())
    totals = np.array([g[rows].sum(), h[rows].sum(), len(rows)])
    split = twin.find_best_split(hist, totals, n_bins, allowed, penalty, params, min_rows)
    gains = [c[0] for c in candidates]
    tol = 1e-9 * (1 + max(map(abs, gains), default=0))
    assume(all(abs(c[0] + penalty[c[1]] - params.min_gain_to_split) > tol for c in candidates))
    best = next((c for c in candidates if c[0] == max(gains)), None)
    # the penalty chooses the split; the best candidate's own gain decides whether the node splits
    if best is None or best[0] + penalty[best[1]] <= params.min_gain_to_split:
        event("no valid split")
        assert split is None
        return
    runner_up = max((c[0] for c in candidates if not np.array_equal(c[4], best[4])), default=-np.inf)
    assume(best[0] - runner_up > tol)
    assert (split.feature, split.bin_threshold, split.missing_left) == best[1:4]
    assert split.gain == pytest.approx(best[0], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_stump_oracle_by_hand(twin):
    """x0 = [1, 2, 3, NaN], g = [-1, -1, 1, 1], h = 1, no penalty: the candidates of x0 are
    (bin, missing) = (0, right) (0, left) (1, right) (1, left) (2 = last, right) with gains
        1/1 + 1/3 - 0,  0 + 0 - 0,  4/2 + 4/2 - 0,  1/3 + 1/1 - 0,  1/3 + 1/1 - 0,
    and x1 = [1, 2, 1, 2] has the single candidate 0/2 + 0/2 - 0. Best: x0 <= 2.5, missing right."""
    X = np.array([[1, 1], [2, 2], [3, 1], [np.nan, 2]], dtype=np.float32)
    g, h = np.array([-1.0, -1.0, 1.0, 1.0]), np.ones(4)
    thresholds = ref_binning.bin_thresholds(X)
    tree = twin.grow_tree(binned_for(twin, X, thresholds), g, h, thresholds,
                          TreeParams(max_leaves=2, min_samples_leaf=1))
    np.testing.assert_array_equal(tree.feature, [0, LEAF, LEAF])
    np.testing.assert_array_equal(tree.threshold, [2.5, 0.0, 0.0])
    np.testing.assert_array_equal(tree.bin_threshold, [1, LEAF, LEAF])
    np.testing.assert_array_equal(tree.missing, [2, LEAF, LEAF])
    assert tree.gain[0] == (-2) ** 2 / 2 + 2**2 / 2 - 0**2 / 4
    np.testing.assert_array_equal(tree.value, [-0 / 4, -(-2) / 2, -2 / 2])
    np.testing.assert_array_equal(tree.count, [4, 2, 2])
    np.testing.assert_array_equal(tree.hessian_sum, [4, 2, 2])


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_last_value_bin_splits_missing_from_present(twin):
    """A feature whose present values are constant can still split present | missing (threshold +inf)."""
    X = np.array([[5.0], [5.0], [np.nan], [np.nan]], dtype=np.float32)
    g, h = np.array([1.0, 1.0, -1.0, -1.0]), np.ones(4)
    thresholds = ref_binning.bin_thresholds(X)
    tree = twin.grow_tree(binned_for(twin, X, thresholds), g, h, thresholds,
                          TreeParams(max_leaves=2, min_samples_leaf=1))
    assert tree.threshold[0] == np.inf and tree.bin_threshold[0] == 0
    assert tree.missing[0] == tree.right[0]
    np.testing.assert_array_equal(tree.value, [0.0, -1.0, 1.0])


# ---------------------------------------------------------------- whole trees

@st.composite
def tree_jobs(draw):
    """A grow_tree problem with exactly representable gradients and every option exercised."""
    seed = draw(st.integers(0, 2**32 - 1))
    n_rows, n_features = draw(st.integers(1, 60)), draw(st.integers(1, 4))
    X, thresholds, g, h = make_problem(seed, n_rows, n_features, max_bins=draw(st.integers(2, 8)))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        h = np.full(n_rows, draw(st.sampled_from([0.25, 1.0])))
    rows = draw(st.sampled_from(["all", "subset", "bootstrap", "shuffled"]))
    rows = {"all": None,
            "subset": np.sort(rng.permutation(n_rows)[: rng.integers(1, n_rows + 1)]),
            "bootstrap": np.sort(rng.integers(0, n_rows, n_rows)),
            "shuffled": rng.integers(0, n_rows, rng.integers(1, 2 * n_rows + 1))}[rows]
    params = TreeParams(
        max_leaves=draw(st.integers(2, 10)),
        max_depth=draw(st.sampled_from([None, 1, 2, 3])),
        min_samples_leaf=draw(st.sampled_from([1, 2, 5, 0.05, 0.3])),
        min_hessian_in_leaf=draw(st.sampled_from([0.0, 1e-3, 0.25])),
        lambda_l2=draw(st.sampled_from([0.0, 0.5, 1.0])),
        min_gain_to_split=draw(st.sampled_from([0.0, 0.01])),
        cost_lambda=draw(st.sampled_from([0.0, 0.5])),
    )
    n_nodes = 2 * params.max_leaves - 1
    mask = rng.random((n_nodes, n_features)) < 0.6 if draw(st.booleans()) else None
    cost = rng.integers(0, 4, n_features) * 0.25 if draw(st.booleans()) else None
    return X, thresholds, g, h, params, dict(rows=rows, feature_mask=mask, feature_cost=cost)


def grow_with(twin, job):
    X, thresholds, g, h, params, options = job
    options = {k: (None if v is None else v.copy()) for k, v in options.items()}
    return twin.grow_tree(binned_for(twin, X, thresholds), g.copy(), h.copy(), thresholds, params,
                          **options)


@given(tree_jobs())
def test_trees_identical_in_both_twins(job):
    tree = grow_with(ref, job)
    assert tree.equals(grow_with(fast, job))
    X, thresholds, g, h, params, options = job  # the fast twin on the reference's C-ordered bins
    assert tree.equals(fast.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params,
                                      **options))


@given(st.lists(tree_jobs(), min_size=2, max_size=4))
def test_trees_grown_one_after_another_on_kept_buffers_are_the_reference_trees(jobs):
    """Within a fit's scope the grower reuses its buffers (``_workspace``), whatever the last tree
    left in them and whatever their shapes were: each tree is still the reference's."""
    with reusing():
        kept = [grow_with(fast, job) for job in jobs + jobs[:1]]  # sizes change, then come back
    for job, tree in zip(jobs + jobs[:1], kept):
        assert tree.equals(grow_with(ref, job))


def test_kept_buffers_are_reused_and_dropped_after_the_outermost_scope():
    with reusing():
        first = workspace_empty("hist", (3, 4))
        with reusing():
            assert np.shares_memory(workspace_empty("hist", (3, 4)), first)
        assert np.shares_memory(workspace_empty("hist", (3, 4)), first)  # the inner scope keeps them
        smaller = workspace_empty("hist", (2, 5))  # room enough: a view of the same buffer
        assert smaller.shape == (2, 5) and smaller.flags.c_contiguous and np.shares_memory(smaller, first)
        larger = workspace_empty("hist", (4, 5))  # no room: a new buffer, kept from now on
        assert larger.shape == (4, 5) and not np.shares_memory(larger, first)
        assert np.shares_memory(workspace_empty("hist", (3, 4)), larger)
        assert workspace_empty("hist", (3, 4), np.int64).dtype == np.int64
    with reusing():
        assert not np.shares_memory(workspace_empty("hist", (3, 4)), first)
    outside = workspace_empty("hist", (3, 4))
    assert not np.shares_memory(workspace_empty("hist", (3, 4)), outside)  # outside a scope: fresh


def test_fast_bins_are_read_only_and_their_row_major_copy_is_made_once():
    X, thresholds, g, h = make_problem(0, 50, 3)
    binned = fast_binning.apply_bins(X, thresholds)
    with pytest.raises(ValueError):
        binned[0, 0] = 1
    rows_first, rows_again = bin_layouts(binned)[1], bin_layouts(binned)[1]
    assert rows_first is rows_again and rows_first.flags.c_contiguous
    np.testing.assert_array_equal(rows_first, binned)
    key = id(binned)
    del binned, rows_first, rows_again
    gc.collect()
    assert key not in _ROW_MAJOR


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(job=tree_jobs())
def test_tree_invariants(twin, job):
    X, thresholds, g, h, params, options = job
    tree = grow_with(twin, job)
    rows = np.arange(len(g)) if options["rows"] is None else options["rows"]
    internal = np.flatnonzero(~tree.is_leaf)
    assert tree.n_leaves <= params.max_leaves and tree.n_nodes == 2 * tree.n_leaves - 1
    assert tree.count[0] == len(rows) and tree.count[tree.is_leaf].sum() == len(rows)
    np.testing.assert_array_equal(tree.count[internal], tree.count[tree.left[internal]]
                                  + tree.count[tree.right[internal]])
    assert np.all(tree.count[1:] >= params.min_rows_in_leaf(len(rows)))
    cost = options["feature_cost"]
    penalty = params.cost_lambda * (np.zeros(X.shape[1]) if cost is None else np.asarray(cost))
    # a split's stored gain is net of its cost penalty; its own gain beats min_gain_to_split
    assert np.all(tree.gain[internal] + penalty[tree.feature[internal]] > params.min_gain_to_split)
    assert np.all(tree.left[internal] > internal) and np.all(tree.right[internal] == tree.left[internal] + 1)
    assert np.all((tree.missing[internal] == tree.left[internal]) | (tree.missing[internal] == tree.right[internal]))
    mask = options["feature_mask"]
    if mask is not None:
        assert np.all(mask[internal, tree.feature[internal]])
    depth = np.zeros(tree.n_nodes, dtype=int)
    for k in internal:
        depth[[tree.left[k], tree.right[k]]] = depth[k] + 1
    if params.max_depth is not None:
        assert depth.max() <= params.max_depth
    reach = rows_reaching(tree, ref_binning.apply_bins(X, thresholds)[rows])  # (n_nodes, len(rows))
    np.testing.assert_array_equal(tree.count, reach.sum(axis=1))
    node_g, node_h = reach @ g[rows], reach @ h[rows]
    np.testing.assert_array_equal(tree.hessian_sum, node_h)
    denominator = node_h + params.lambda_l2
    expected = -node_g / np.where(denominator > 0, denominator, 1.0) * (denominator > 0)
    np.testing.assert_array_equal(tree.value, expected)


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(job=tree_jobs())
def test_leaf_of_row_is_the_leaf_each_row_reaches_and_other_rows_are_untouched(twin, job):
    X, thresholds, g, h, params, options = job
    leaf_of_row = np.full(len(g), -7, dtype=np.int32)
    tree = twin.grow_tree(binned_for(twin, X, thresholds), g.copy(), h.copy(), thresholds, params,
                          leaf_of_row=leaf_of_row, **options)
    assert tree.equals(grow_with(twin, job))  # the output changes nothing of the tree
    rows = np.unique(np.arange(len(g)) if options["rows"] is None else options["rows"])
    reach = rows_reaching(tree, ref_binning.apply_bins(X, thresholds)[rows])  # (n_nodes, len(rows))
    leaf = np.argmax(reach & tree.is_leaf[:, None], axis=0)  # (len(rows),) the leaf each row reaches
    np.testing.assert_array_equal(leaf_of_row[rows], leaf)
    untouched = np.setdiff1d(np.arange(len(g)), rows)
    assert np.all(leaf_of_row[untouched] == -7)
    np.testing.assert_array_equal(tree.value[leaf_of_row[rows]], twin_predict_binned(twin, tree, X, thresholds)[rows])


def twin_predict_binned(twin, tree, X, thresholds):
    module = importlib.import_module(f"twinrank.{'reference' if twin is ref else 'fast'}.predict")
    return module.predict_tree_binned(tree, binned_for(twin, X, thresholds))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_leaf_of_row_must_be_int32_of_every_row(twin):
    X, thresholds, g, h = make_problem(3, 20, 2)
    for bad in (np.zeros(20, dtype=np.int64), np.zeros(19, dtype=np.int32), [0] * 20):
        with pytest.raises(ParameterError, match="leaf_of_row must be an int32 array of shape"):
            twin.grow_tree(binned_for(twin, X, thresholds), g, h, thresholds, TreeParams(), leaf_of_row=bad)


def rows_reaching(tree, binned):
    """(n_nodes, n_rows) bool: which rows of ``binned`` pass through each node."""
    reach = np.zeros((tree.n_nodes, len(binned)), dtype=bool)
    reach[0] = True
    for k in np.flatnonzero(~tree.is_leaf):  # a parent's id is below its children's
        b = binned[:, tree.feature[k]]
        left = np.where(b == MISSING_BIN, tree.missing[k] == tree.left[k], b <= tree.bin_threshold[k])
        reach[tree.left[k]] = reach[k] & left
        reach[tree.right[k]] = reach[k] & ~left
    return reach


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_a_mask_allowing_one_feature_uses_only_it(twin):
    X, thresholds, g, h = make_problem(7, 300, 5, exact=False)
    params = TreeParams(max_leaves=8, min_samples_leaf=3)
    for only in range(5):
        mask = np.zeros((2 * params.max_leaves - 1, 5), dtype=bool)
        mask[:, only] = True
        tree = twin.grow_tree(binned_for(twin, X, thresholds), g, h, thresholds, params, feature_mask=mask)
        assert tree.n_leaves > 1
        assert set(tree.feature[~tree.is_leaf]) == {only}


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_feature_cost_steers_the_root_split_to_a_free_feature(twin):
    """Two copies of the same feature: the cheaper one wins; equal costs -> the lower index."""
    X, thresholds, g, h = make_problem(3, 200, 1, exact=False)
    X2 = np.hstack([X, X])
    thresholds2 = thresholds * 2
    params = TreeParams(max_leaves=2, min_samples_leaf=2, cost_lambda=1.0)
    binned = binned_for(twin, X2, thresholds2)
    assert twin.grow_tree(binned, g, h, thresholds2, params).feature[0] == 0
    tree = twin.grow_tree(binned, g, h, thresholds2, params, feature_cost=np.array([1e-3, 0.0]))
    assert tree.feature[0] == 1


# ---------------------------------------------------------------- ties on purpose

COPIES = {  # columns that cut the rows only in ways x already does: their gains tie with x's
    "copy": lambda x: x,
    "coarser": lambda x: np.floor(x / 2),  # nested: each of its cuts is one of x's
    "monotone": lambda x: 3 * x + 1,
}


@st.composite
def tied_feature_jobs(draw):
    """Base columns of few values (and NaNs) plus copies of them that tie (``COPIES``), and
    gradients that are NOT exactly representable: tied gains then differ in the last bits,
    by summation order, as on real data. Gradients drawn from a few values stand for tied
    scores; zero gradients for one-document queries (their lambdas are 0)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_rows, n_base = draw(st.integers(2, 300)), draw(st.integers(1, 3))
    base = rng.integers(0, draw(st.integers(2, 12)), (n_rows, n_base)).astype(np.float32)
    base[rng.random(base.shape) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    kinds = draw(st.lists(st.sampled_from(sorted(COPIES)), min_size=1, max_size=4))
    copies = np.column_stack([COPIES[kind](base[:, rng.integers(n_base)]) for kind in kinds])
    g = rng.standard_normal(n_rows)  # (n_rows,)
    gradients = draw(st.sampled_from(["real", "tied scores", "one-document queries"]))
    if gradients == "tied scores":
        g = rng.choice(rng.standard_normal(3), n_rows)
    elif gradients == "one-document queries":
        g[rng.random(n_rows) < 0.5] = 0.0
    h = np.ones(n_rows) if draw(st.booleans()) else rng.uniform(0.1, 1.0, n_rows)
    rows = np.sort(rng.integers(0, n_rows, n_rows)) if draw(st.booleans()) else None
    params = TreeParams(
        max_leaves=draw(st.integers(2, 12)),
        min_samples_leaf=draw(st.sampled_from([1, 2, 5])),
        lambda_l2=draw(st.sampled_from([0.0, 1.0])),
        min_gain_to_split=draw(st.sampled_from([0.0, 0.01])),
        missing_split=draw(st.sampled_from(["learn", "separate"])),
    )
    return base, copies.astype(np.float32), g, h, rows, params


def grow_on(twin, X, g, h, rows, params):
    thresholds = ref_binning.bin_thresholds(X, 255)  # few values: one bin each
    return twin.grow_tree(binned_for(twin, X, thresholds), g.copy(), h.copy(), thresholds, params,
                          rows=None if rows is None else rows.copy())


def same_splits(a, b):
    for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.gain, b.gain, rtol=1e-9, atol=1e-12)


@given(job=tied_feature_jobs(), order_seed=st.integers(0, 2**16))
def test_twins_pick_the_same_split_among_copied_and_nested_features(job, order_seed):
    """Copies shuffled among the base columns, so a copy may come first; tied gains that
    differ in the last bits must be resolved by the tie rule, the same way in both twins."""
    base, copies, g, h, rows, params = job
    X = np.hstack([base, copies])
    X = X[:, np.random.default_rng(order_seed).permutation(X.shape[1])]
    same_splits(grow_on(ref, X, g, h, rows, params), grow_on(fast, X, g, h, rows, params))



def test_no_split_on_the_rounding_residue_of_cancelling_gradients():
    """Found by hypothesis: a node of rows of gradient 0 and its sibling's rows; parent minus
    sibling left children sums of ~1e-16 and a "gain" of 7e-32, which the fast twin took (a
    split more) and the reference did not. Both must see it as zero (``rounding_gain``)."""
    arrays = np.load(Path(__file__).parents[1] / "fixtures" / "cancelling_gradients.npz")
    X, g, h = arrays["X"], arrays["g"], arrays["h"]
    params = TreeParams(max_leaves=4, min_samples_leaf=1)
    ref_tree, fast_tree = grow_on(ref, X, g, h, None, params), grow_on(fast, X, g, h, None, params)
    same_splits(ref_tree, fast_tree)
    assert np.all(ref_tree.gain[ref_tree.feature != LEAF] > 1e-6)  # the two real splits only
    thresholds = ref_binning.bin_thresholds(X, 255)
    n_bins, rows = np.array([len(t) + 1 for t in thresholds]), np.arange(len(g))
    totals = np.array([g.sum(), h.sum(), len(g)])
    for twin in TWINS:  # the root's best split, then the same with a floor above every gain
        hist = twin.build_histogram(binned_for(twin, X, thresholds), g.copy(), h.copy(), rows)
        found = [twin.find_best_split(hist, totals, n_bins, np.ones(2, bool), np.zeros(2), params, 1,
                                      gradient_noise=noise) for noise in (0.0, 1e3)]
        assert found[0] is not None and found[1] is None

@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
@given(job=tied_feature_jobs())
def test_columns_that_cut_no_new_way_after_the_others_change_nothing(twin, job):
    """Appended copies (exact, coarser, monotone) only tie with an earlier column, and ties go
    to the lowest feature: the tree is the one grown without them."""
    base, copies, g, h, rows, params = job
    same_splits(grow_on(twin, np.hstack([base, copies]), g, h, rows, params),
                grow_on(twin, base, g, h, rows, params))


@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_tie_rule_by_hand(twin):
    """x0 = [0, 1, 2, 3], x1 = 2 * x0 and x2 = x0 // 2 all have the cut {x0 <= 1}, the best, of gain
    0.6**2/2 + 0.6**2/2 - 0 = 0.36 with g = 0.1 * [-3, -3, 1, 5], h = 1. 0.1 is inexact, so the
    three gains may differ in the last bits; the lowest feature must win."""
    x0 = np.array([0, 1, 2, 3], dtype=np.float32)
    X = np.column_stack([x0, 2 * x0, np.floor(x0 / 2)])
    g, h = 0.1 * np.array([-3.0, -3.0, 1.0, 5.0]), np.ones(4)
    thresholds = ref_binning.bin_thresholds(X)
    tree = twin.grow_tree(binned_for(twin, X, thresholds), g, h, thresholds,
                          TreeParams(max_leaves=2, min_samples_leaf=1))
    assert (tree.feature[0], tree.bin_threshold[0]) == (0, 1)  # x0 <= 1.5: the cut of x2 too
    assert tree.gain[0] == pytest.approx(0.6**2 / 2 + 0.6**2 / 2 - 0.0)
    assert twin.tie_floor(10.0, 2.0) == 10.0 - twin.GAIN_TIE_RTOL * 2.0


# ---------------------------------------------------------------- threads and sizes

def test_parallel_paths_identical_to_reference_and_independent_of_thread_count():
    """Big enough for every parallel path (histograms, scans over 40 features, block partition)."""
    X, thresholds, g, h = make_problem(11, 40_000, 40, max_bins=30, missing=0.05)
    params = TreeParams(max_leaves=12, min_samples_leaf=20)
    rows = np.sort(np.random.default_rng(1).integers(0, len(g), len(g)))
    binned = fast_binning.apply_bins(X, thresholds)
    old = numba.get_num_threads()
    try:
        trees = []
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            trees.append(fast.grow_tree(binned, g, h, thresholds, params, rows=rows))
            trees.append(fast.grow_tree(binned, g, np.ones_like(h), thresholds, params, rows=rows))
    finally:
        numba.set_num_threads(old)
    assert trees[0].equals(trees[2]) and trees[1].equals(trees[3])
    assert trees[0].equals(ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds,
                                         params, rows=rows))
    g_real = np.random.default_rng(2).standard_normal(len(g))  # inexact sums: still thread-independent
    numba.set_num_threads(1)
    try:
        one = fast.grow_tree(binned, g_real, h, thresholds, params)
    finally:
        numba.set_num_threads(old)
    assert one.equals(fast.grow_tree(binned, g_real, h, thresholds, params))


@pytest.mark.parametrize("row_type", [np.int32, np.int64])
def test_the_callers_rows_are_left_as_given_on_every_path(row_type):
    """The fast grower partitions a round's every row in place (the check's own ``arange``), but rows it is
    given are the caller's: newton, least-squares and quantized trees leave them as they were, and are the
    trees of a copy."""
    X, thresholds, g, h = make_problem(5, 3_000, 6, max_bins=12)
    binned = fast_binning.apply_bins(X, thresholds)
    rows = np.sort(np.random.default_rng(3).choice(len(g), 2_000, replace=False)).astype(row_type)
    kept = rows.copy()
    quantized = fast.quantize_gradients(np.random.default_rng(4), g, h, 4, rows)
    for options in ({}, {"params": TreeParams(max_leaves=8, split_gain="least_squares")},
                    {"quantized": quantized}):
        params = options.pop("params", TreeParams(max_leaves=8))
        tree = fast.grow_tree(binned, g, h, thresholds, params, rows=rows, **options)
        np.testing.assert_array_equal(rows, kept)
        assert tree.equals(fast.grow_tree(binned, g, h, thresholds, params, rows=kept.copy(), **options))


def test_sparse_nodes_summed_in_halves_match_the_reference_and_any_thread_count():
    """Deep nodes (under 1/16 of the rows) big enough for threads (m * d >= 65,536) are summed as two
    fixed halves of their rows (``_histogram._build_halves``): the same tree as the reference on
    representable gradients, and bit for bit the same tree on any number of threads otherwise."""
    X, thresholds, _, h = make_problem(5, 40_000, 64, max_bins=30, missing=0.05)
    signs = np.where(np.nan_to_num(X[:, :6], nan=0.0) > 15, 1.0, -1.0)  # (n_rows, 6) nested halves
    g = np.round((signs @ 0.5 ** np.arange(6) + 0.1 * np.random.default_rng(3).standard_normal(len(h))) / STEP) * STEP
    params = TreeParams(max_leaves=31, min_samples_leaf=20)
    binned = fast_binning.apply_bins(X, thresholds)
    tree = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params)
    split = tree.left != LEAF
    built = np.minimum(tree.count[tree.left[split]], tree.count[tree.right[split]])  # each split's smaller child
    assert np.sum((built * 16 < len(g)) & (built * 64 >= 65_536)) >= 4  # the path is taken
    old = numba.get_num_threads()
    try:
        grown = []
        for n_threads in (1, 2):
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            grown.append(fast.grow_tree(binned, g, h, thresholds, params))
            grown.append(fast.grow_tree(binned, g + STEP / 3, h, thresholds, params))  # inexact sums
    finally:
        numba.set_num_threads(old)
    assert grown[0].equals(tree) and grown[2].equals(tree)
    assert grown[1].equals(grown[3])
    four = subprocess.run(  # four threads: each half's features cut into two ranges
        [sys.executable, "-c", "import sys, pickle, numpy as np, numba; from twinrank.fast import tree, binning; "
         "X, thresholds, g, h, params = pickle.load(sys.stdin.buffer); "
         "t = tree.grow_tree(binning.apply_bins(X, thresholds), g, h, thresholds, params); "
         "sys.stdout.buffer.write(pickle.dumps((numba.get_num_threads(), t)))"],
        input=pickle.dumps((X, thresholds, g + STEP / 3, h, params)), capture_output=True, check=True,
        env={**os.environ, "NUMBA_NUM_THREADS": "4"})
    n_threads, tree_on_four = pickle.loads(four.stdout)
    assert n_threads == 4 and tree_on_four.equals(grown[1])


# ---------------------------------------------------------------- peer tool

def test_first_tree_matches_lightgbm():
    """LightGBM's first regression tree (each of the few values its own bin, no ties) scores
    like init + 0.1 * our tree, with g = init - y, h = 1. LightGBM rounds labels and
    gradients to float32, hence the tolerance; a different tree would miss it by ~1e-2."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(5)
    X = rng.integers(0, 8, (3000, 4)).astype(np.float32)
    y = X[:, 0] * 1.3 - np.sin(X[:, 1]) + 0.7 * X[:, 2] * X[:, 3] + rng.standard_normal(3000)
    y = y.astype(np.float32).astype(np.float64)  # LightGBM keeps labels in float32
    params = dict(objective="regression", num_leaves=15, max_bin=255, min_data_in_leaf=20,
                  learning_rate=0.1, lambda_l2=0.0, verbose=-1, num_threads=1, min_data_in_bin=1)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
    thresholds = ref_binning.bin_thresholds(X)
    for twin in TWINS:
        tree = twin.grow_tree(binned_for(twin, X, thresholds), y.mean() - y, np.ones(len(y)), thresholds,
                              TreeParams(max_leaves=15, min_samples_leaf=20))
        ours = y.mean() + 0.1 * predict_tree(tree, X)
        np.testing.assert_allclose(booster.predict(X), ours, rtol=1e-7)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("twin", TWINS, ids=TWIN_IDS)
def test_bad_input_is_a_parameter_error(twin):
    X, thresholds, g, h = make_problem(0, 10, 2)
    binned = binned_for(twin, X, thresholds)
    p = TreeParams(max_leaves=3)
    cases = [
        (dict(binned=binned.astype(np.int64)), "uint8"),
        (dict(thresholds=thresholds[:1]), "binned has 2 features but thresholds has 1"),
        (dict(gradients=g[:5]), r"gradients has shape \(5,\)"),
        (dict(hessians=np.r_[h[:9], np.nan]), r"hessians\[9\] is not finite"),
        (dict(rows=np.array([0, 10])), r"rows must be in \[0, 10\)"),
        (dict(rows=np.array([], dtype=np.int64)), "non-empty"),
        (dict(feature_mask=np.ones((2, 2), dtype=bool)), r"shape \(3, 2\) \(or more rows\)"),  # 10 rows: 2 leaves
        (dict(feature_mask=np.ones((5, 3), dtype=bool)), r"shape \(3, 2\)"),
        (dict(feature_cost=np.array([1.0, -1.0])), "feature_cost"),
        (dict(params={"max_leaves": 3}), "TreeParams"),
    ]
    for change, message in cases:
        kwargs = dict(binned=binned, gradients=g, hessians=h, thresholds=thresholds, params=p)
        kwargs.update(change)
        with pytest.raises(ParameterError, match=message):
            twin.grow_tree(kwargs.pop("binned"), kwargs.pop("gradients"), kwargs.pop("hessians"),
                           kwargs.pop("thresholds"), kwargs.pop("params"), **kwargs)


@pytest.mark.parametrize("m", [1, 5000, PARALLEL_ROWS, PARALLEL_ROWS + 3 * PARTITION_BLOCK + 7])
def test_partition_is_stable_and_counts_left_and_missing_rows(m):
    """The grower's partition (serial up to ``PARALLEL_ROWS`` positions, in parallel blocks above):
    left rows first, both sides in their order; it returns the left rows and the missing ones
    (the children's sizes: the histograms do not count rows)."""
    rng = np.random.default_rng(m)
    column = rng.integers(0, 256, 2 * m + 10).astype(np.uint8)
    column[rng.random(len(column)) < 0.1] = MISSING_BIN
    src = np.sort(rng.choice(len(column), m, replace=False)).astype(np.int32)
    src = np.concatenate([[7, 3], src])  # a segment [2, 2 + m) inside the buffer
    start, stop = 2, 2 + m
    bins = column[src[start:stop]]
    work = (np.empty(len(src), np.uint8), np.empty(2 * (len(src) // PARTITION_BLOCK + 2), np.int64))
    for missing_left in (True, False):
        goes = np.where(bins == MISSING_BIN, missing_left, bins <= 100)
        expected = np.concatenate([src[start:stop][goes], src[start:stop][~goes]])
        dst = np.full_like(src, -1)
        n_left, n_missing = partition(src, dst, start, stop, column, 100, missing_left, *work)
        np.testing.assert_array_equal(dst[start:stop], expected)
        assert (dst[:start] == -1).all()
        assert (n_left, n_missing) == (goes.sum(), (bins == MISSING_BIN).sum())

"""Quantized gradients (Shi et al. 2022; ``reference/trees/_quantize.py``): stochastic rounding is unbiased
and drawn in the documented order, both twins grow the same trees bit for bit on the integers, leaf
values are refit from the true gradients, and the option reaches the estimators and the CLI."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from synthetic import ranking_data

import twinrank.fast as fast_twin
import twinrank.reference as reference_twin
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees import binning as fast_binning, tree as fast
from twinrank.fast.trees._quantize_kernels import uniform
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import LEAF
from twinrank.reference.params import BoostParams, TreeParams
from twinrank.reference.trees import binning as ref_binning, tree as ref
from twinrank.reference.trees._quantize import REFIT_BLOCK, uniforms
from twinrank.reference.trees.tree import quantize_gradients


def test_stochastic_rounding_is_unbiased_and_rounds_to_a_neighbour():
    rng = np.random.default_rng(5)
    g = rng.standard_normal(40)
    h = rng.random(40)
    draws = [quantize_gradients(rng, g, h, 3) for _ in range(3000)]
    q = draws[0]
    assert q.gradient_scale == pytest.approx(np.abs(g).max() / 3) and q.hessian_scale == pytest.approx(h.max() / 7)
    ints = np.array([d.gradients for d in draws], dtype=np.float64)  # (3000, 40)
    x = g / q.gradient_scale
    assert np.all((ints == np.floor(x)) | (ints == np.ceil(x)))  # a neighbour of g / s, never further
    assert ints.min() >= -3 and ints.max() <= 3
    # E[q] s = g: the mean of 3000 draws is within 5 standard errors (each draw's sd <= s / 2)
    mean = ints.mean(axis=0) * q.gradient_scale
    assert np.all(np.abs(mean - g) <= 5 * 0.5 * q.gradient_scale / np.sqrt(len(draws)))
    h_mean = np.array([d.hessians for d in draws], dtype=np.float64).mean(axis=0) * q.hessian_scale
    assert np.all(np.abs(h_mean - h) <= 5 * 0.5 * q.hessian_scale / np.sqrt(len(draws)))


def test_draw_order_and_constant_hessians():
    g, rows = np.linspace(-1, 2, 9), np.array([1, 4, 6])
    rng, twin = np.random.default_rng(3), np.random.default_rng(3)
    q = quantize_gradients(rng, g, np.full(9, 2.0), 4, rows)  # constant hessians: g only
    key = twin.integers(2**64, dtype=np.uint64)  # one draw, the round's key
    assert rng.random() == twin.random()  # nothing else was drawn
    u = uniforms(key, np.array([0, 2, 4], dtype=np.uint64))  # row i of the round: counter 2i
    assert np.array_equal(q.gradients[rows], np.clip(np.floor(g[rows] / q.gradient_scale + u), -7, 7))
    assert q.hessian_scale == 2.0 and np.array_equal(q.hessians, [0, 1, 0, 0, 1, 0, 1, 0, 0])
    assert not q.gradients[[0, 2, 3, 5, 7, 8]].any()  # rows outside the round are 0


def test_uniforms_are_splitmix64():
    """Counter c of key s is SplitMix64's c-th output seeded with s (Rosetta Code's vector for seed
    1234567), its top 53 bits in [0, 1); the fast twin's kernel computes the same numbers."""
    outputs = [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431,
               16408922859458223821]
    counters = np.arange(1, 6, dtype=np.uint64)
    expected = np.array([(z >> 11) * 2.0**-53 for z in outputs])
    assert np.array_equal(uniforms(np.uint64(1234567), counters), expected)
    assert np.array_equal([uniform(np.uint64(1234567), c) for c in counters], expected)


def test_hessian_draws_differ_from_gradient_draws():
    """g and h of a row use counters 2i and 2i + 1: halves round up independently of each other."""
    g, h = np.full(20001, 0.5), np.full(20001, 0.5)
    g[0], h[0] = 7.0, 15.0  # s_g = s_h = 1 at 4 bits: every other row is x = 0.5, up with probability 1/2
    q = quantize_gradients(np.random.default_rng(0), g, h, 4)
    up_g, up_h = q.gradients[1:] == 1, q.hessians[1:] == 1
    assert 0.48 < up_g.mean() < 0.52 and 0.48 < up_h.mean() < 0.52
    assert 0.48 < (up_g == up_h).mean() < 0.52  # the same uniform for both would make them all equal


@st.composite
def quantized_jobs(draw):
    """A grow_tree problem with arbitrary float64 gradients (not exactly representable), quantized."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_rows, n_features = draw(st.integers(1, 80)), draw(st.integers(1, 5))
    X = rng.integers(0, 9, (n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    if draw(st.booleans()):
        X[:, -1] = X[:, 0]  # a copied column: exact ties between features
    thresholds = ref_binning.bin_thresholds(X, draw(st.integers(2, 8)))
    g = rng.standard_normal(n_rows) * draw(st.sampled_from([1e-3, 1.0, 50.0]))
    h = rng.random(n_rows) if draw(st.booleans()) else np.ones(n_rows)
    rows = draw(st.sampled_from([None, "subset", "bootstrap"]))
    rows = {None: None, "subset": np.sort(rng.permutation(n_rows)[: rng.integers(1, n_rows + 1)]),
            "bootstrap": np.sort(rng.integers(0, n_rows, n_rows))}[rows]
    params = TreeParams(max_leaves=draw(st.integers(2, 12)), max_depth=draw(st.sampled_from([None, 2, 3])),
                        min_samples_leaf=draw(st.sampled_from([1, 3, 0.1])),
                        min_hessian_in_leaf=draw(st.sampled_from([0.0, 1e-3, 0.5])),
                        lambda_l2=draw(st.sampled_from([0.0, 1.0])),
                        min_gain_to_split=draw(st.sampled_from([0.0, 0.01])),
                        cost_lambda=draw(st.sampled_from([0.0, 0.2])),
                        missing_split=draw(st.sampled_from(["learn", "separate"])))
    quantized = quantize_gradients(rng, g, h, draw(st.integers(2, 8)), rows)
    cost = rng.integers(0, 4, n_features) * 0.25
    return X, thresholds, g, h, params, dict(rows=rows, feature_cost=cost, quantized=quantized)


@given(quantized_jobs())
def test_quantized_trees_identical_in_both_twins_bit_for_bit(job):
    X, thresholds, g, h, params, options = job
    a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, **options)
    b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, **options)
    assert a.equals(b)  # structure, gains, values, hessian sums: every bit


@given(quantized_jobs())
def test_leaf_values_are_refit_from_the_true_gradients(job):
    X, thresholds, g, h, params, options = job
    binned = ref_binning.apply_bins(X, thresholds)
    tree = ref.grow_tree(binned, g, h, thresholds, params, **options)
    rows = np.arange(len(g)) if options["rows"] is None else options["rows"]
    leaf = np.zeros(len(rows), dtype=np.int64)  # route the rows through the tree
    for i, r in enumerate(rows):
        k = 0
        while tree.left[k] != LEAF:
            b = binned[r, tree.feature[k]]
            k = tree.missing[k] if b == 255 else tree.left[k] if b <= tree.bin_threshold[k] else tree.right[k]
        leaf[i] = k
    for k in np.flatnonzero(tree.left == LEAF):
        G, H = g[rows[leaf == k]].sum(), h[rows[leaf == k]].sum()
        expected = -G / (H + params.lambda_l2) if H + params.lambda_l2 > 0 else 0.0
        assert tree.value[k] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert tree.hessian_sum[k] == pytest.approx(H, rel=1e-12, abs=1e-12)
        assert tree.count[k] == (leaf == k).sum()


def test_refit_adds_blocks_in_the_same_order_in_both_twins():
    """Leaf sums over several ``REFIT_BLOCK``s of rows (summed in parallel by the fast twin): the
    same bits, with gradients of spread magnitudes (where the order of the additions shows)."""
    rng = np.random.default_rng(4)
    n = 3 * REFIT_BLOCK + 17
    X = rng.integers(0, 8, (n, 1)).astype(np.float32)
    thresholds = ref_binning.bin_thresholds(X, 8)
    g, h = rng.standard_normal(n) * 1e3 ** rng.random(n), rng.random(n)
    rows = np.sort(rng.integers(0, n, n))  # a bootstrap: rows repeat
    q = quantize_gradients(rng, g, h, 4, rows)
    params = TreeParams(max_leaves=6, min_samples_leaf=1)
    a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, rows=rows, quantized=q)
    with threads(2):
        b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, rows=rows,
                           quantized=q)
    assert a.n_nodes == 11 and a.equals(b)


def test_a_quantized_split_is_the_best_split_of_the_integers():
    """One stump by hand: 4-bit integers, gain of the scaled sums."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    thresholds = ref_binning.bin_thresholds(X, 4)
    g, h = np.array([-1.0, -0.5, 0.5, 1.0]), np.ones(4)
    q = quantize_gradients(np.random.default_rng(0), g, h, 4)
    s = q.gradient_scale
    for twin, binning in ((ref, ref_binning), (fast, fast_binning)):
        tree = twin.grow_tree(binning.apply_bins(X, thresholds), g, h, thresholds,
                              TreeParams(max_leaves=2, min_samples_leaf=1), quantized=q)
        gl, gr = q.gradients[:2].astype(float).sum() * s, q.gradients[2:].astype(float).sum() * s
        assert tree.feature[0] == 0 and tree.bin_threshold[0] == 1
        assert tree.gain[0] == pytest.approx(gl**2 / 2 + gr**2 / 2 - (gl + gr) ** 2 / 4, rel=1e-12)
        assert tree.value[1] == -(-1.5) / 2 and tree.value[2] == -1.5 / 2  # true gradients


@pytest.fixture(scope="module")
def mq2008():
    return reference_twin.load_mq2008(1)


def test_quantized_lambdamart_on_mq2008_same_trees_in_both_twins(mq2008):
    train, _, test = mq2008
    options = dict(n_trees=15, max_leaves=15, learning_rate=0.1, seed=3, quantized_gradients=True)
    a = reference_twin.LambdaMART(**options).fit(train)
    b = fast_twin.LambdaMART(**options).fit(train)
    assert a.model_.n_trees == b.model_.n_trees == 15
    for x, y in zip(a.model_.trees, b.model_.trees):
        for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
            assert np.array_equal(getattr(x, name), getattr(y, name))
        np.testing.assert_allclose(y.value, x.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.predict(test), a.predict(test), rtol=1e-9, atol=1e-12)
    exact = fast_twin.LambdaMART(**{**options, "quantized_gradients": False}).fit(train)
    ndcg = {name: reference_twin.evaluate(["ndcg@10"], test.y, model.predict(test.X),
                                          test.query_offsets)["ndcg@10"] for name, model in
            (("quantized", b), ("exact", exact))}
    assert ndcg["quantized"] > ndcg["exact"] - 0.02, ndcg
    assert not all(x.equals(y) for x, y in zip(exact.model_.trees, b.model_.trees))


@pytest.mark.parametrize("chunk_rows", [None, 1000, 37], ids=["whole nodes", "chunks of 1000", "chunks of 37"])
def test_mq2008_lambdas_quantized_grow_the_same_tree_bit_for_bit(mq2008, chunk_rows, monkeypatch):
    """Real data (exact ties between MQ2008 features) on the same lambdas: every bit of the tree,
    also when the fast twin sums every node in packed chunks (as it does nodes too large to pack)."""
    if chunk_rows is not None:
        monkeypatch.setattr(fast, "PACKED_CHUNK_ROWS", chunk_rows)
    train = mq2008[0]
    loss = reference_twin.losses.objectives.LambdaRank(train.y, train.query_offsets, metric="ndcg", k=10)
    rng = np.random.default_rng(11)
    scores = rng.standard_normal(train.n_rows)
    g, h = np.empty(train.n_rows), np.empty(train.n_rows)
    loss.gradients(scores, None, g, h)
    rows = np.sort(rng.permutation(train.n_rows)[: train.n_rows * 3 // 4])
    thresholds = ref_binning.bin_thresholds(train.X, 255)
    params = TreeParams(max_leaves=31, min_samples_leaf=5)
    for bits in (2, 4, 8):
        q = quantize_gradients(rng, g, h, bits, rows)
        a = ref.grow_tree(ref_binning.apply_bins(train.X, thresholds), g, h, thresholds, params, rows=rows,
                          quantized=q)
        b = fast.grow_tree(fast_binning.apply_bins(train.X, thresholds), g, h, thresholds, params, rows=rows,
                           quantized=q)
        assert a.n_leaves == 31 and a.equals(b), bits


def test_sparse_nodes_summed_by_rows_on_two_threads_grow_the_references_tree():
    """Deep nodes (under 1/16 of the rows) big enough for threads (m * d >= 65,536) are cut by rows
    (``_packed_histogram._packed_by_rows``): the integer sums, and the tree, must not change."""
    rng = np.random.default_rng(5)
    n_rows, n_features = 40_000, 64
    X = np.round(rng.standard_normal((n_rows, n_features)) * 3).astype(np.float32)  # ties in every column
    X[rng.random(X.shape) < 0.1] = np.nan
    signs = np.where(np.nan_to_num(X[:, :6]) > 0, 1.0, -1.0)  # (n_rows, 6) balanced halves, nested
    g, h = signs @ 0.5 ** np.arange(6) + 0.1 * rng.standard_normal(n_rows), rng.random(n_rows)
    thresholds = ref_binning.bin_thresholds(X, 63)
    params = TreeParams(max_leaves=31, min_samples_leaf=20)
    q = quantize_gradients(rng, g, h, 4)
    a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    with threads(2):
        b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    split = a.left != LEAF
    built = np.minimum(a.count[a.left[split]], a.count[a.right[split]])  # the smaller child of each split
    assert np.sum((built * 16 < n_rows) & (built * n_features >= 65_536)) >= 4  # the path was taken
    assert a.equals(b)


@pytest.mark.parametrize("bits", [2, 4])
def test_rows_rounded_to_zero_are_skipped_and_the_tree_is_the_references(bits):
    """Heavy-tailed gradients (as LambdaRank's) round mostly to (0, 0), which the fast grower does
    not sum (``_grower``, active rows): on sparse features (the skipping column pass), deep nodes
    (the row pass, cut by rows on two threads) and three-way splits, every bit of the tree must
    stay the reference's."""
    rng = np.random.default_rng(8)
    n_rows, n_features = 60_000, 40
    X = np.round(rng.standard_normal((n_rows, n_features)) * 4).astype(np.float32)
    X[:, :20] *= rng.random((n_rows, 20)) < 0.2  # sparse features: 0 in about 80% of the rows
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.sign(np.nan_to_num(X[:, 20:26])) @ 0.5 ** np.arange(6)
    magnitude = np.exp(rng.standard_normal(n_rows))  # lognormal: most rows far below the largest
    g, h = (signal + 0.5 * rng.standard_normal(n_rows)) * magnitude, magnitude * rng.random(n_rows)
    q = quantize_gradients(rng, g, h, bits)
    zero = (q.gradients == 0) & (q.hessians == 0)
    assert zero.mean() > 0.6, zero.mean()
    thresholds = ref_binning.bin_thresholds(X, 63)
    for params in (TreeParams(max_leaves=31, min_samples_leaf=20),
                   TreeParams(max_leaves=40, min_samples_leaf=1, missing_split="separate")):
        a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
        with threads(2):
            b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
        assert a.n_leaves >= 25 and a.equals(b), params


def test_a_child_without_active_rows_is_summed_as_zeros_in_both_twins():
    """A three-way split whose missing child holds only rows of zero gradient and hessian: the fast
    grower builds that child's histogram from no row at all (the smaller child by active rows)."""
    rng = np.random.default_rng(3)
    n_rows = 4000
    X = rng.integers(0, 8, (n_rows, 2)).astype(np.float32)
    quiet = np.arange(n_rows) < 500
    X[quiet, 0] = np.nan
    g = np.where(X[:, 0] < 4, -1.0, 1.0) * ~quiet
    h = np.where(quiet, 0.0, 1.0)
    q = quantize_gradients(rng, g, h, 4)
    assert ((q.gradients == 0) & (q.hessians == 0)).sum() == 500  # inactive: exactly the quiet rows
    thresholds = ref_binning.bin_thresholds(X, 8)
    params = TreeParams(max_leaves=6, min_samples_leaf=1, min_hessian_in_leaf=0.0, missing_split="separate")
    a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    assert a.feature[0] == 0 and a.count[a.missing[0]] == 500 and a.missing[0] not in (a.left[0], a.right[0])
    assert a.equals(b)


def test_a_tree_of_rows_all_rounded_to_zero_is_one_leaf_in_both_twins():
    X = np.arange(40, dtype=np.float32).reshape(20, 2)
    thresholds = ref_binning.bin_thresholds(X, 8)
    g, h = np.zeros(20), np.zeros(20)
    q = quantize_gradients(np.random.default_rng(0), g, h, 4)
    assert not q.gradients.any() and not q.hessians.any()
    params = TreeParams(max_leaves=4, min_samples_leaf=1, min_hessian_in_leaf=0.0)
    a = ref.grow_tree(ref_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    b = fast.grow_tree(fast_binning.apply_bins(X, thresholds), g, h, thresholds, params, quantized=q)
    assert a.n_nodes == 1 and a.equals(b)


def test_quantized_gbrt_twins_agree_and_the_seed_decides():
    train = ranking_data(seed=4, n_queries=12)
    options = dict(n_trees=4, max_leaves=6, min_samples_leaf=2, quantized_gradients=True, gradient_bits=2)
    a = reference_twin.GBRT(**options, seed=1).fit(train).model_
    b = fast_twin.GBRT(**options, seed=1).fit(train).model_
    assert all(x.equals(y) for x, y in zip(a.trees, b.trees))  # constant hessians: nothing else drawn
    assert a.params["quantized_gradients"] is True and a.params["gradient_bits"] == 2


@pytest.mark.parametrize("bad", [{"gradient_bits": 1}, {"gradient_bits": 9}, {"gradient_bits": 4.0},
                                 {"quantized_gradients": "yes"}])
def test_bad_quantization_parameters_are_refused_before_any_work(bad):
    with pytest.raises(ParameterError, match=next(iter(bad))):
        reference_twin.LambdaMART(**bad).fit(np.zeros((2, 1)), np.zeros(3), np.zeros(1))
    with pytest.raises(ParameterError, match=next(iter(bad))):
        BoostParams(**bad)


def test_grow_tree_refuses_a_malformed_quantized_argument():
    X = np.zeros((3, 1), dtype=np.float32)
    thresholds = ref_binning.bin_thresholds(X, 4)
    binned = ref_binning.apply_bins(X, thresholds)
    for twin in (ref, fast):
        with pytest.raises(ParameterError, match="QuantizedGradients"):
            twin.grow_tree(binned, np.zeros(3), np.ones(3), thresholds, TreeParams(), quantized=(1, 2))
        q = quantize_gradients(np.random.default_rng(0), np.zeros(2), np.ones(2), 4)  # 2 rows, not 3
        with pytest.raises(ParameterError, match="shape"):
            twin.grow_tree(binned, np.zeros(3), np.ones(3), thresholds, TreeParams(), quantized=q)


def test_the_cli_flags_reach_the_model(tmp_path):
    from twinrank.cli import main
    from twinrank.reference.io.letor import write_letor
    from twinrank.reference.io.model import load_model
    path, model = tmp_path / "train.txt", tmp_path / "model.json"
    write_letor(ranking_data(seed=2, n_queries=8), path)
    main(["train", "--train", str(path), "--model", str(model), "--n-trees", "3", "--max-leaves", "4",
          "--min-samples-leaf", "2", "--quantized-gradients", "true", "--gradient-bits", "5"])
    params = load_model(model).params
    assert params["quantized_gradients"] is True and params["gradient_bits"] == 5


@st.composite
def quantize_inputs(draw):
    """Gradients and hessians of one round, hard cases included: constant, zero, tied, one row,
    rows subsampled, repeated (a bootstrap) or in no order."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 300))
    g = rng.standard_normal(n) * draw(st.sampled_from([0.0, 1e-9, 1.0, 1e6]))
    h = draw(st.sampled_from(["random", "constant", "zero", "ties"]))
    h = {"random": rng.random(n), "constant": np.full(n, 0.25), "zero": np.zeros(n),
         "ties": rng.integers(0, 3, n) / 2.0}[h]
    rows = draw(st.sampled_from([None, "subset", "bootstrap", "shuffled", "empty"]))
    rows = {None: None, "subset": np.sort(rng.permutation(n)[: rng.integers(1, n + 1)]),
            "bootstrap": np.sort(rng.integers(0, n, n)), "shuffled": rng.integers(0, n, n),
            "empty": np.zeros(0, dtype=np.int64)}[rows]
    return seed, g, h, draw(st.integers(2, 8)), rows


@given(quantize_inputs())
def test_fast_quantize_is_the_references_bit_for_bit(case):
    """The compiled rounding (fast/trees/_quantize_kernels.py) makes the same draws and the same integers."""
    seed, g, h, bits, rows = case
    rng_ref, rng_fast = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = quantize_gradients(rng_ref, g, h, bits, rows)
    got = fast.quantize_gradients(rng_fast, g, h, bits, rows)
    assert got.gradients.dtype == expected.gradients.dtype and got.hessians.dtype == expected.hessians.dtype
    assert np.array_equal(got.gradients, expected.gradients) and np.array_equal(got.hessians, expected.hessians)
    assert (got.gradient_scale, got.hessian_scale, got.bits) == (
        expected.gradient_scale, expected.hessian_scale, expected.bits)
    assert rng_fast.random() == rng_ref.random()  # the same number of draws


def test_fast_quantize_on_many_rows_and_threads_is_the_references():
    """Past one block of rows (fast/_quantize_kernels.BLOCK_ROWS) the blocks run on threads."""
    rng = np.random.default_rng(11)
    n = 3 * (1 << 16) + 17
    g, h = rng.standard_normal(n), rng.random(n)
    bootstrap = np.sort(rng.integers(0, n, n))  # rows repeated across block boundaries
    for rows in (None, bootstrap):
        expected = quantize_gradients(np.random.default_rng(2), g, h, 4, rows)
        for n_threads in (1, 2):
            with threads(n_threads):
                got = fast.quantize_gradients(np.random.default_rng(2), g, h, 4, rows)
            assert np.array_equal(got.gradients, expected.gradients)
            assert np.array_equal(got.hessians, expected.hessians)


def test_fast_quantize_refuses_negative_hessians():
    with pytest.raises(ParameterError, match="non-negative hessians"):
        fast.quantize_gradients(np.random.default_rng(0), np.ones(3), np.array([1.0, -1.0, 1.0]), 4)

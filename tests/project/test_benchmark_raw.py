"""The raw-feature generator (benchmarks/generate_raw.py) and LightGBM's bin rules (benchmarks/_lightgbm_bins.py)
that the defaults benchmark measures: shape, grades, heavy tails, seeds; bin counts as LightGBM's own."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from twinrank.reference.evaluation.metrics import evaluate

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _module(name):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", _BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate_raw = _module("generate_raw")
lightgbm_bins = _module("_lightgbm_bins")


@pytest.fixture(scope="module")
def data():
    return generate_raw.generate(106, seed=1)


def test_shape_grades_and_query_sizes(data):
    assert data.X.shape == (data.n_rows, 25) and data.X.dtype == np.float32
    assert not np.isnan(data.X).any()
    shares = np.bincount(data.y.astype(int), minlength=3) / data.n_rows
    np.testing.assert_allclose(shares, [0.70, 0.18, 0.12], atol=0.01)
    assert 60 <= data.query_sizes.min() and data.query_sizes.max() <= 300
    assert 130 < data.query_sizes.mean() < 170


def test_features_are_raw_heavy_tailed_and_repeated(data):
    zeros = (data.X == 0).mean(axis=0)  # (25,)
    assert (zeros > 0.5).sum() >= 5  # title statistics and citations: mostly 0
    distinct = np.array([len(np.unique(c)) for c in data.X.T])
    assert (distinct < 20).sum() >= 3  # term counts and covered terms
    for j in (8, 9):  # idf sums: one value per query
        assert all(len(np.unique(data.X[lo:hi, j])) == 1 for lo, hi in zip(data.query_offsets[:-1],
                                                                            data.query_offsets[1:]))
    body_length = data.X[:, 1]
    assert body_length.max() > 10 * np.median(body_length)


def test_the_grades_are_learnable_but_noisy(data):
    """The best single feature ranks well above random, as BM25 does on OHSUMED (~0.4 NDCG@10, LETOR rules)."""
    best = max(evaluate(["ndcg@10"], data.y, data.X[:, j].astype(float), data.query_offsets,
                        convention="letor")["ndcg@10"] for j in range(25))
    noise = evaluate(["ndcg@10"], data.y, np.random.default_rng(0).random(data.n_rows), data.query_offsets,
                     convention="letor")["ndcg@10"]
    assert 0.35 < best < 0.55 and noise < 0.25


def test_deterministic_from_the_seed():
    a, b, c = (generate_raw.generate(12, seed=s) for s in (3, 3, 4))
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.X.shape != c.X.shape or not np.array_equal(a.X, c.X)


def test_lightgbm_bin_rules_give_lightgbm_bin_counts(data):
    """Per feature, as many bins as LightGBM's Dataset makes, but for the empty bin LightGBM keeps for
    zero in a column without any (its bound at +-1e-35 is pushed whether or not zero occurs)."""
    lgb = pytest.importorskip("lightgbm")
    constructed = lgb.Dataset(data.X, data.y, group=data.query_sizes, params={"verbose": -1}).construct()
    ours = np.array([len(t) + 1 for t in lightgbm_bins.bin_thresholds(data.X)])
    theirs = np.array([constructed.feature_num_bin(j) for j in range(data.n_features)])
    empty_zero_bin = ~(data.X == 0).any(axis=0)  # (25,)
    assert empty_zero_bin.sum() >= 3
    np.testing.assert_array_equal(ours + empty_zero_bin, theirs)


def test_write_letor(tmp_path):
    from twinrank.reference.io.letor import read_letor

    generate_raw.main(["--queries", "3", "--seed", "2", "--write", str(tmp_path / "raw.txt")])
    back, data = read_letor(tmp_path / "raw.txt"), generate_raw.generate(3, seed=2)
    np.testing.assert_array_equal(back.X, data.X)
    np.testing.assert_array_equal(back.y, data.y)
    np.testing.assert_array_equal(back.query_offsets, data.query_offsets)

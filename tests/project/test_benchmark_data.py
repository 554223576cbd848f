"""The benchmark data generator (benchmarks/generate.py): shape, kinds of features, grades, seeds."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from twinrank.reference.evaluation.metrics import ndcg
from twinrank.reference.io.letor import read_letor

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "generate.py"
_spec = importlib.util.spec_from_file_location("benchmark_generate", _PATH)
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)

N_QUERIES = 3 * generate.QUERY_BLOCK  # ~92k rows: enough for the marginal statistics


@pytest.fixture(scope="module")
def data():
    return generate.generate(N_QUERIES, seed=7)


def column(data, name):
    return data.X[:, generate.FEATURE_NAMES.index(name)]


def columns(data, *prefixes):
    return data.X[:, [j for j, name in enumerate(generate.FEATURE_NAMES) if name.startswith(prefixes)]]


def test_shape_and_types(data):
    assert len(set(generate.FEATURE_NAMES)) == generate.N_FEATURES == 136
    assert data.X.dtype == np.float32 and data.X.shape == (data.n_rows, 136)
    assert data.n_queries == N_QUERIES and data.query_offsets[-1] == data.n_rows
    assert set(np.unique(data.y)) == {0.0, 1.0, 2.0, 3.0, 4.0}


def test_query_sizes_have_a_long_tail(data):
    sizes = data.query_sizes
    assert sizes.min() >= 1 and sizes.max() <= generate.MAX_DOCS
    assert 105 < sizes.mean() < 135  # ~120 per query, as MSLR-WEB10K
    assert np.median(sizes) < 0.85 * sizes.mean()  # lognormal: the mean is pulled up by the tail
    assert sizes.max() > 3 * np.median(sizes)


def test_fixed_query_size():
    assert np.all(generate.generate(5, docs_per_query=17).query_sizes == 17)


def test_grades_are_distributed_like_mslr(data):
    shares = np.bincount(data.y.astype(int), minlength=5) / data.n_rows
    expected = np.array([0.517, 0.325, 0.134, 0.019, 0.008]) / 1.003
    assert np.all(np.abs(shares - expected) < [0.03, 0.02, 0.02, 0.008, 0.005]), shares


def test_feature_kinds(data):
    assert set(np.unique(columns(data, "boolean_"))) == {0.0, 1.0}
    ratios = columns(data, "covered_ratio_", "ntf_min_", "ntf_max_", "ntf_mean_", "vsm_")
    assert ratios.min() >= 0 and ratios.max() <= 1
    counts = np.nan_to_num(columns(data, "covered_terms_", "stream_length_", "tf_sum_", "tf_min_", "tf_max_",
                                   "url_slashes", "url_length", "inlinks", "outlinks", "query_url_clicks", "url_clicks"))
    assert counts.min() >= 0 and np.all(counts == np.round(counts))
    assert columns(data, "lmir_").max() <= 0
    assert np.nanmin(columns(data, "bm25_", "tfidf_sum_", "pagerank")) >= 0
    body = column(data, "stream_length_body")
    assert body.max() > 20 * np.median(body)  # heavy tail


def test_idf_is_constant_within_a_query(data):
    idf = column(data, "idf_body")
    first = idf[np.repeat(data.query_offsets[:-1], data.query_sizes)]  # (n_rows,) the query's first row
    assert np.array_equal(idf, first)


def test_missing_values_only_where_documented(data):
    missing = np.isnan(data.X).mean(axis=0)  # (136,)
    expected = {"pagerank": 0.05, "siterank": 0.08, "query_url_clicks": 0.4, "url_clicks": 0.4,
                "url_dwell_time": 0.4}
    assert {generate.FEATURE_NAMES[j] for j in np.flatnonzero(missing)} == set(expected)
    for name, share in expected.items():
        assert abs(missing[generate.FEATURE_NAMES.index(name)] - share) < 0.01


def test_some_features_are_constant_ish(data):
    top_share = [np.unique(c, return_counts=True)[1].max() / len(c) for c in data.X.T]
    assert sum(share > 0.9 for share in top_share) >= 3
    assert np.mean(column(data, "quality2") == 0) > 0.95


def test_features_carry_the_grades(data):
    """Ranking by one feature clearly beats random scores (models have something to learn)."""
    def mean_ndcg(scores):
        return ndcg(data.y, scores, data.query_offsets, k=10, convention="lightgbm").mean()

    random = mean_ndcg(np.random.default_rng(0).random(data.n_rows))
    assert mean_ndcg(column(data, "bm25_whole").astype(np.float64)) > random + 0.1


def test_deterministic_from_the_seed():
    a, b, c = (generate.generate(30, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.X, b.X, equal_nan=True) and np.array_equal(a.y, b.y)
    assert a.n_rows != c.n_rows or not np.array_equal(a.X, c.X, equal_nan=True)


def test_larger_data_starts_with_the_same_blocks():
    block = generate.QUERY_BLOCK
    small, large = generate.generate(block + 3, seed=4), generate.generate(2 * block, seed=4)
    n = small.query_offsets[block]
    assert np.array_equal(small.X[:n], large.X[:n], equal_nan=True) and np.array_equal(small.y[:n], large.y[:n])


def test_train_and_test_are_different_queries():
    train, test = generate.train_test(20, 10, seed=3)
    again, _ = generate.train_test(20, 10, seed=3)
    assert train.n_queries == 20 and test.n_queries == 10
    assert np.array_equal(train.X, again.X, equal_nan=True)
    assert not np.array_equal(train.X[:test.n_rows], test.X[:train.n_rows], equal_nan=True)


def test_write_letor(tmp_path):
    path = tmp_path / "train.txt"
    generate.main(["--queries", "3", "--seed", "5", "--write", str(path)])
    train, _ = generate.train_test(3, 1, seed=5)
    back = read_letor(path, n_features=136)
    assert np.array_equal(back.X, train.X, equal_nan=True) and np.array_equal(back.y, train.y)
    assert np.array_equal(back.query_offsets, train.query_offsets)

"""The bundled MQ2008 data, query-level folds and subsamples."""
import os

import numpy as np
import pytest
from hypothesis import given, strategies as st

import twinrank.reference.io.data as fast_data
from twinrank.reference.io import data
from twinrank.reference.io.data import Dataset, load_mq2008, query_folds, subsample_queries
from twinrank.reference.io.letor import read_letor

SHARED_MQ2008 = "/work/shared/data/mq2008"


def same(a: Dataset, b: Dataset) -> bool:
    return (np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
            and np.array_equal(a.query_offsets, b.query_offsets)
            and a.qids.tolist() == b.qids.tolist() and a.comments.tolist() == b.comments.tolist())


@pytest.fixture(scope="module")
def folds():
    return {k: load_mq2008(k) for k in range(1, 6)}


def s_part(folds, k):
    """S{k}: the test set of fold k - 4 (mod 5), by the LETOR fold rule."""
    return folds[k % 5 + 1][2]


# ----------------------------------------------------------------------------- MQ2008


def test_mq2008_published_facts(folds):
    parts = [s_part(folds, k) for k in range(1, 6)]
    X = np.concatenate([p.X for p in parts])
    y = np.concatenate([p.y for p in parts])
    sizes = np.concatenate([p.query_sizes for p in parts])
    qids = np.concatenate([p.qids for p in parts])
    assert X.shape == (15211, 46) and len(sizes) == 784
    assert len(set(qids.tolist())) == 784  # the five parts hold different queries
    assert dict(zip(*np.unique(y, return_counts=True))) == {0: 12279, 1: 2001, 2: 931}
    assert (sizes.min(), sizes.max()) == (5, 121)
    assert np.sum(sizes < 10) == 403
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    assert np.sum(np.maximum.reduceat(y, starts) == 0) == 220  # queries with no relevant doc
    assert not np.isnan(X).any()
    assert all(c.startswith("docid = GX") for p in parts for c in p.comments)


def test_mq2008_fold_rule(folds):
    for k in range(1, 6):
        train, vali, test = folds[k]
        s = [s_part(folds, (k - 1 + i) % 5 + 1) for i in range(5)]
        assert train.n_rows == s[0].n_rows + s[1].n_rows + s[2].n_rows
        assert np.array_equal(train.X, np.concatenate([s[0].X, s[1].X, s[2].X]))
        assert train.qids.tolist() == s[0].qids.tolist() + s[1].qids.tolist() + s[2].qids.tolist()
        assert same(vali, s[3]) and same(test, s[4])
        assert train.n_features == vali.n_features == test.n_features == 46


def test_mq2008_fold1_part_sizes(folds):
    train, vali, test = folds[1]
    assert (train.n_rows, vali.n_rows, test.n_rows) == (2933 + 3635 + 3062, 2707, 2874)
    assert (train.n_queries, vali.n_queries, test.n_queries) == (471, 157, 156)


def test_mq2008_returns_fresh_arrays():
    train, _, _ = load_mq2008(1)
    train.X[:] = -1
    train.comments[0] = "changed"
    again, _, _ = load_mq2008(1)
    assert again.X.min() >= 0 and again.comments[0] != "changed"


@pytest.mark.skipif(not os.path.isdir(SHARED_MQ2008), reason="needs the LETOR distribution in /work/shared")
@pytest.mark.parametrize("k", [1, 3])
def test_mq2008_matches_the_letor_distribution_files(folds, k):
    train, vali, test = folds[k]
    for name, ds in (("train", train), ("vali", vali), ("test", test)):
        assert same(read_letor(f"{SHARED_MQ2008}/Fold{k}/{name}.txt.gz"), ds)


# ----------------------------------------------------------------------------- folds


@given(n_folds=st.integers(2, 6), extra=st.integers(0, 20), seed=st.none() | st.integers(0, 2**32 - 1))
def test_query_folds_partition_the_queries(n_folds, extra, seed):
    n = n_folds + extra
    folds = query_folds(n, n_folds, seed=seed)
    assert len(folds) == n_folds
    tested = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tested), np.arange(n))  # every query tested exactly once
    for train, test in folds:
        assert np.array_equal(np.union1d(train, test), np.arange(n))
        assert len(np.intersect1d(train, test)) == 0
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    sizes = sorted(len(test) for _, test in folds)
    assert sizes[-1] - sizes[0] <= 1
    if seed is None:  # contiguous blocks, in order
        assert np.array_equal(tested, np.arange(n))
    else:
        again = query_folds(n, n_folds, seed=seed)
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))


def test_query_folds_without_seed_are_array_split_blocks():
    folds = query_folds(7, 3)
    assert [test.tolist() for _, test in folds] == [[0, 1, 2], [3, 4], [5, 6]]
    assert folds[1][0].tolist() == [0, 1, 2, 5, 6]


def test_query_folds_with_seed_follow_the_documented_draw():
    order = np.random.default_rng(42).permutation(10)
    tests = [np.sort(block).tolist() for block in np.array_split(order, 4)]
    assert [test.tolist() for _, test in query_folds(10, 4, seed=42)] == tests


# ----------------------------------------------------------------------------- subsamples


def small_dataset():
    sizes = [3, 1, 2, 4, 1, 2]
    n = sum(sizes)
    X = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    return Dataset(X, np.arange(n) % 3, np.r_[0, np.cumsum(sizes)],
                   qids=list("abcdef"), comments=[f"doc {i}" for i in range(n)])


@given(fraction=st.floats(0.01, 1.0), seed=st.integers(0, 1000))
def test_subsample_queries_keeps_whole_queries_in_order(fraction, seed):
    ds = small_dataset()
    sub = subsample_queries(ds, fraction, seed=seed)
    assert sub.n_queries == max(1, min(6, round(fraction * 6)))
    kept = [ds.qids.tolist().index(q) for q in sub.qids]
    assert kept == sorted(kept)
    assert same(sub, ds.take_queries(kept))
    assert same(sub, subsample_queries(ds, fraction, seed=seed))  # same seed, same queries


def test_subsample_queries_draws_through_the_sampling_module():
    ds = small_dataset()
    expected = np.sort(np.random.default_rng(7).permutation(6)[:3])
    assert subsample_queries(ds, 0.5, seed=7).qids.tolist() == ds.qids[expected].tolist()
    assert same(subsample_queries(ds, 1.0, seed=7), ds)


def test_fast_twin_reexports_the_same_data_model():
    for name in ("Dataset", "load_mq2008", "query_folds", "subsample_queries"):
        assert getattr(fast_data, name) is getattr(data, name)


def test_query_rows_lists_the_rows_of_the_queries_in_the_given_order():
    from twinrank.reference.io.data import query_rows

    offsets = np.array([0, 3, 5, 9])
    assert query_rows(offsets, np.array([2, 0])).tolist() == [5, 6, 7, 8, 0, 1, 2]
    assert query_rows(offsets, np.array([1])).dtype == np.int64

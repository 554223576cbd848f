"""A query whose LambdaRank pairs are quadratic in its size is named, once, before the first tree."""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.cli import main
from twinrank.fast.losses import objectives as fast
from twinrank.reference.errors import QuadraticQueryWarning, TwinrankWarning
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import write_letor
from twinrank.reference.losses import objectives as ref
from twinrank.reference.losses._query_pairs import labelled_pairs


@given(st.lists(st.lists(st.integers(0, 3), max_size=9), max_size=8))
def test_labelled_pairs_count_every_pair_of_different_labels(queries):
    y = np.array([label for q in queries for label in q], dtype=float)
    offsets = np.r_[0, np.cumsum([len(q) for q in queries])].astype(np.int64)
    expected = [sum(a != b for a, b in itertools.combinations(q, 2)) for q in queries]
    assert labelled_pairs(y, offsets).tolist() == expected


def big_query(n=300_000):
    """One small query, then one of ``n`` documents with labels 0-2."""
    y = np.random.default_rng(0).integers(0, 3, 10 + n).astype(float)
    return y, np.array([0, 10, 10 + n])


def built(twin, *args, **options) -> list:
    """The QuadraticQueryWarnings of building ``twin``'s LambdaRank loss."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        twin.LambdaRank(*args, **options)
    return [w for w in caught if issubclass(w.category, QuadraticQueryWarning)]


def test_a_query_of_300k_documents_warns_in_the_reference_whatever_the_cutoff():
    y, offsets = big_query()
    pairs = labelled_pairs(y, offsets)[1]
    assert 2.9e10 < pairs < 3.1e10  # two thirds of 300k^2 / 2
    for k in (None, 30):
        caught = built(ref, y, offsets, metric="ndcg", k=k, qids=np.array(["q1", "q2"]))
        assert len(caught) == 1
        text = str(caught[0].message)
        assert text.startswith(f"query qid q2 has 300,000 documents: LambdaRank's lambdas take {pairs:.2g} pair "
                               "terms per tree")
    assert issubclass(QuadraticQueryWarning, TwinrankWarning)


def test_the_fast_twin_warns_only_without_a_cutoff():
    """Its kernel pairs each of the top k positions with those below: linear with a cutoff."""
    y, offsets = big_query()
    caught = built(fast, y, offsets, metric="ndcg", k=None)
    assert len(caught) == 1 and "query 2 of 2 has 300,000 documents" in str(caught[0].message)
    assert "4.5e+10 pair terms" in str(caught[0].message)  # every position pair: n (n - 1) / 2
    assert built(fast, y, offsets, metric="ndcg", k=30) == []
    assert built(fast, y, offsets, metric="map", truncation=30) == []


def test_one_warning_for_many_large_queries_below_the_threshold_none(monkeypatch):
    monkeypatch.setattr(ref.LambdaRank, "quadratic_pairs", 20)
    y = np.r_[np.zeros(6), np.ones(6), np.tile([0.0, 1.0], 8), np.tile([0.0, 1.0], 3)]  # 36, 64 and 9 pairs
    offsets = np.array([0, 12, 28, 34])
    caught = built(ref, y, offsets)
    assert len(caught) == 1
    assert str(caught[0].message).startswith("query 2 of 3 has 16 documents: LambdaRank's lambdas take 64 pair")
    assert "(and 1 other query above 2e+01)" in str(caught[0].message)
    monkeypatch.setattr(ref.LambdaRank, "quadratic_pairs", 64)
    assert built(ref, y, offsets) == []


def test_train_prints_one_warning_line_before_training(tmp_path, capsys):
    n = 6000  # labels 0-4: about 1.4e7 pairs of different labels, above the reference's 1e7
    rng = np.random.default_rng(1)
    data = Dataset(rng.random((n + 4, 3)).astype(np.float32), np.r_[rng.integers(0, 5, n), [0, 1, 2, 3]],
                   np.array([0, n, n + 4]), qids=np.array(["big", "small"]))
    write_letor(data, tmp_path / "train.txt")
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "m.json"), "--trees",
                 "1", "--engine", "reference", "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("twinrank train: warning: query qid big has 6,000 documents: ")

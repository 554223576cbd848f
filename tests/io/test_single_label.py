"""Single-label queries: found per query, dropped from a Dataset with its query ids and doc ids kept aligned."""
import numpy as np
import pytest
from hypothesis import given

import twinrank.fast as fast
import twinrank.reference as reference
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, drop_single_label_queries, load_mq2008, single_label_queries
from twinrank.testing import datasets


def with_ids(data: Dataset) -> Dataset:
    """``data`` with query ids and a ``docid = ...`` comment per row."""
    return Dataset(data.X, data.y, data.query_offsets, qids=[f"q{q}" for q in range(data.n_queries)],
                   comments=[f"docid = d{i}" for i in range(data.n_rows)])


@given(data=datasets(min_docs=0))
def test_kept_queries_are_those_of_two_labels_in_order(data):
    data = with_ids(data)
    kept = drop_single_label_queries(data)
    multi = [q for q in range(data.n_queries)
             if len(set(data.y[data.query_offsets[q]:data.query_offsets[q + 1]])) >= 2]
    np.testing.assert_array_equal(single_label_queries(data.y, data.query_offsets),
                                  ~np.isin(np.arange(data.n_queries), multi))
    assert kept.qids.tolist() == [f"q{q}" for q in multi]
    rows = np.concatenate([np.arange(data.query_offsets[q], data.query_offsets[q + 1]) for q in multi]
                          or [np.zeros(0, int)])
    np.testing.assert_array_equal(kept.X, data.X[rows])
    np.testing.assert_array_equal(kept.y, data.y[rows])
    assert kept.comments.tolist() == data.comments[rows].tolist()
    np.testing.assert_array_equal(kept.query_sizes, data.query_sizes[multi])
    assert all(len(set(kept.y[lo:hi])) >= 2 for lo, hi in zip(kept.query_offsets[:-1], kept.query_offsets[1:]))
    assert kept is not data and (kept.X.size == 0 or not np.shares_memory(kept.X, data.X))
    assert (kept.has_queries, kept.n_features_in_file) == (data.has_queries, data.n_features_in_file)


def test_one_document_and_empty_queries_are_single_label():
    y = np.array([1.0, 2.0, 2.0, 0.0, 0.0, 1.0])
    offsets = np.array([0, 1, 1, 3, 6])  # one document, empty, one label twice, two labels
    np.testing.assert_array_equal(single_label_queries(y, offsets), [True, True, True, False])
    np.testing.assert_array_equal(single_label_queries(np.zeros(0), [0]), np.zeros(0, bool))


def test_mq2008_s_single_label_queries_are_those_without_relevant_documents():
    _, _, test = load_mq2008(fold=1)
    kept = drop_single_label_queries(test)
    assert (test.n_queries, kept.n_queries) == (156, 105)  # 51 test queries without a relevant document
    no_relevant = np.bincount(test.qid, weights=test.y > 0, minlength=test.n_queries) == 0
    np.testing.assert_array_equal(single_label_queries(test.y, test.query_offsets), no_relevant)


def test_both_packages_export_the_one_shared_function():
    assert fast.drop_single_label_queries is reference.drop_single_label_queries is drop_single_label_queries


def test_bad_input_is_a_parameter_error():
    with pytest.raises(ParameterError, match="takes a Dataset"):
        drop_single_label_queries((np.zeros((2, 1)), np.zeros(2), [0, 2]))
    with pytest.raises(ParameterError, match="query_offsets"):
        single_label_queries([0.0, 1.0], [0, 1])
    with pytest.raises(ParameterError, match=r"y\[1\] is NaN"):
        single_label_queries([0.0, np.nan], [0, 2])

"""The 10M-row benchmark's data files (benchmarks/ten_million.py): written block by block through a memory
map, they hold the rows generate.py makes, and a prefix of queries is the smaller data set."""
import importlib
from pathlib import Path

import numpy as np
import pytest

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def modules(monkeypatch):
    monkeypatch.syspath_prepend(str(_BENCHMARKS))  # the benchmark imports its siblings by name
    return importlib.import_module("ten_million"), importlib.import_module("generate")


def test_written_files_are_generate_rows(modules, tmp_path):
    ten_million, generate = modules
    n_queries = 2 * generate.QUERY_BLOCK + 7  # two whole blocks and a partial one
    first = ten_million.write_data(tmp_path, n_queries, seed=3)
    expected = generate.generate(n_queries, seed=3)
    data = ten_million.mapped(tmp_path, n_queries)
    np.testing.assert_array_equal(data.X, expected.X)
    np.testing.assert_array_equal(data.y, expected.y)
    np.testing.assert_array_equal(data.query_offsets, expected.query_offsets)
    assert not first["reused"] and ten_million.write_data(tmp_path, n_queries, seed=3)["reused"]
    smaller = ten_million.mapped(tmp_path, 100)
    np.testing.assert_array_equal(smaller.X, expected.X[:expected.query_offsets[100]])
    assert smaller.n_queries == 100


def test_a_bigger_size_or_other_seed_is_written_again_a_smaller_size_reads_the_prefix(modules, tmp_path):
    ten_million, generate = modules
    ten_million.write_data(tmp_path, 20, seed=0)
    assert not ten_million.write_data(tmp_path, 20, seed=1)["reused"]
    assert not ten_million.write_data(tmp_path, 21, seed=1)["reused"]
    assert ten_million.mapped(tmp_path, 21).n_queries == 21
    assert ten_million.write_data(tmp_path, 7, seed=1)["reused"]  # the 21 queries' files stay
    assert ten_million.mapped(tmp_path, 21).n_queries == 21
    first_7 = ten_million.mapped(tmp_path, 7).X  # the 21-query set's first 7 queries
    np.testing.assert_array_equal(first_7, generate.generate(21, seed=1).X[:len(first_7)])

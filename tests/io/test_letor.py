"""LETOR / SVMlight reading and writing: round trips, format rules, group files, scores."""
import gzip
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, strategies as st

import twinrank.reference.io.letor as fast_letor
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io import letor
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import read_letor, read_scores, write_letor, write_scores


def write_text(path, text, *, gz=False):
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def assert_same_dataset(a: Dataset, b: Dataset):
    """Bit-exact equality; every NaN is the same missing value."""
    assert a.X.shape == b.X.shape
    assert np.array_equal(np.isnan(a.X), np.isnan(b.X))
    finite = ~np.isnan(a.X)
    assert np.array_equal(a.X[finite].view(np.uint32), b.X[finite].view(np.uint32))
    assert np.array_equal(a.y, b.y)
    assert np.array_equal(a.query_offsets, b.query_offsets)
    assert (a.qids is None) == (b.qids is None)
    if a.qids is not None:
        assert a.qids.tolist() == b.qids.tolist()
    assert (a.comments is None) == (b.comments is None)
    if a.comments is not None:
        assert a.comments.tolist() == b.comments.tolist()


# ----------------------------------------------------------------------------- round trips

qid_text = st.text(alphabet="abcXYZ0123456789-_.:", min_size=1, max_size=5)
comment_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=12,
).map(str.strip)


@st.composite
def datasets(draw):
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    n, d = sum(sizes), draw(st.integers(0, 4))
    x = st.one_of(st.sampled_from([0.0, -0.0, 1.0, np.nan, 2.0**-8]), st.floats(width=32, allow_infinity=False))
    X = np.array(draw(st.lists(x, min_size=n * d, max_size=n * d)), dtype=np.float32).reshape(n, d)
    label = st.one_of(st.integers(0, 4).map(float), st.floats(allow_nan=False, allow_infinity=False))
    y = draw(st.lists(label, min_size=n, max_size=n))
    qids = draw(st.none() | st.lists(qid_text, min_size=len(sizes), max_size=len(sizes), unique=True))
    comments = draw(st.none() | st.lists(comment_text, min_size=n, max_size=n))
    return Dataset(X, y, np.r_[0, np.cumsum(sizes)], qids=qids, comments=comments)


@given(ds=datasets(), sparse=st.booleans(), suffix=st.sampled_from([".txt", ".txt.gz"]))
def test_write_then_read_is_identical(ds, sparse, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data" + suffix)
        write_letor(ds, path, sparse=sparse)
        back = read_letor(path, n_features=ds.n_features or None, max_label=None)
        assert os.listdir(tmp) == ["data" + suffix]  # no temporary file left behind
    if ds.qids is None:  # the writer names queries by their 1-based index
        ds.qids = np.arange(1, ds.n_queries + 1).astype(str)
    assert_same_dataset(back, ds)


@given(scores=st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=20),
       suffix=st.sampled_from([".txt", ".gz"]))
def test_scores_round_trip_bit_exact(scores, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scores" + suffix)
        write_scores(path, scores)
        back = read_scores(path, n_rows=len(scores))
    assert np.array_equal(np.array(scores, dtype=np.float64).view(np.int64), back.view(np.int64))


def test_float32_shortest_decimals_read_back_exactly_across_the_range():
    # every exponent, random mantissas, both signs: the writer's shortest decimals are exact
    rng = np.random.default_rng(0)
    exponent = np.repeat(np.arange(255, dtype=np.uint32), 200)
    bits = (exponent << np.uint32(23)) | rng.integers(0, 1 << 23, len(exponent)).astype(np.uint32)
    X = np.r_[bits, bits | np.uint32(1 << 31)].view(np.float32).reshape(-1, 1)
    ds = Dataset(X, np.zeros(len(X)), [0, len(X)])
    with tempfile.TemporaryDirectory() as tmp:
        write_letor(ds, os.path.join(tmp, "x.txt"))
        back = read_letor(os.path.join(tmp, "x.txt"))
    assert np.array_equal(back.X.view(np.uint32), X.view(np.uint32))


# ----------------------------------------------------------------------------- format rules


def test_sparse_null_comments_blank_lines_and_crlf(tmp_path):
    text = ("# a header comment\r\n"
            "\r\n"
            "2 qid:q7 1:0.5 3:NULL 4:-2 # doc a \r\n"
            "0 qid:q7\t2:1e-3   4:nan\r\n"
            "   \r\n"
            "1 qid:8 #\r\n")
    ds = read_letor(write_text(tmp_path / "d.txt", text))
    nan = np.nan
    expected_X = np.array([[0.5, 0, nan, -2], [0, 1e-3, 0, nan], [0, 0, 0, 0]], dtype=np.float32)
    assert_same_dataset(ds, Dataset(expected_X, [2, 0, 1], [0, 2, 3], qids=["q7", "8"],
                                    comments=["doc a", "", ""]))


def test_no_comment_anywhere_gives_none(tmp_path):
    ds = read_letor(write_text(tmp_path / "d.txt", "1 qid:1 1:2\n0 qid:1 1:3\n"))
    assert ds.comments is None


def test_without_qid_or_group_file_the_file_is_one_query(tmp_path):
    ds = read_letor(write_text(tmp_path / "d.txt", "1 1:2\n0 2:3\n2 1:1\n"))
    assert ds.qids is None
    assert ds.query_offsets.tolist() == [0, 3]
    assert ds.X.tolist() == [[2, 0], [0, 3], [1, 0]]


def test_rows_with_no_features_are_zero_rows(tmp_path):
    ds = read_letor(write_text(tmp_path / "d.txt", "1 qid:1\n0 qid:1 2:3\n"))
    assert ds.X.tolist() == [[0, 0], [0, 3]]
    assert read_letor(write_text(tmp_path / "e.txt", "1 qid:1\n")).X.shape == (1, 0)


def test_n_features_pads_to_the_fixed_width(tmp_path):
    ds = read_letor(write_text(tmp_path / "d.txt", "1 qid:1 2:3\n"), n_features=5)
    assert ds.X.tolist() == [[0, 3, 0, 0, 0]]


def test_zero_based_ids(tmp_path):
    path = write_text(tmp_path / "d.txt", "1 qid:1 0:4 2:5\n")
    assert read_letor(path, zero_based=True).X.tolist() == [[4, 0, 5]]


def test_gzip_is_recognised_by_magic_bytes_not_name(tmp_path):
    text = "1 qid:1 1:0.25\n0 qid:1 1:0.5\n"
    a = read_letor(write_text(tmp_path / "named.txt", text, gz=True))
    b = read_letor(write_text(tmp_path / "plain.gz", text))
    assert a.X.tolist() == b.X.tolist() == [[0.25], [0.5]]


def test_many_blocks_keep_order_and_line_numbers(tmp_path):
    n = 2 * letor._BLOCK_LINES + 7  # rows cross two block boundaries
    lines = [f"{i % 3} qid:{i // 10} {1 + i % 5}:{i}" for i in range(n)]
    ds = read_letor(write_text(tmp_path / "d.txt", "\n".join(lines)))
    assert ds.n_rows == n and ds.n_queries == (n - 1) // 10 + 1
    assert np.array_equal(ds.X[np.arange(n), np.arange(n) % 5], np.arange(n, dtype=np.float32))
    assert np.array_equal(ds.y, np.arange(n) % 3)


def test_ids_need_not_be_dense_and_width_is_the_largest_id(tmp_path):
    ds = read_letor(write_text(tmp_path / "d.txt", "1 qid:1 3:1 10:2\n0 qid:1 7:1\n"))
    assert ds.n_features == 10
    assert ds.X[0, [2, 9]].tolist() == [1, 2] and ds.X[1, 6] == 1


def test_written_text_is_the_letor_format(tmp_path):
    ds = Dataset(np.array([[0.1, np.nan], [0, 3]], dtype=np.float32), [2, 0.5], [0, 1, 2],
                 qids=["a", "b"], comments=["docid = 1", ""])
    write_letor(ds, tmp_path / "d.txt")
    assert (tmp_path / "d.txt").read_text() == ("2 qid:a 1:0.1 2:NULL #docid = 1\n"
                                                "0.5 qid:b 1:0.0 2:3.0 #\n")
    write_letor(ds, tmp_path / "s.txt", sparse=True)
    assert (tmp_path / "s.txt").read_text().splitlines()[1] == "0.5 qid:b 2:3.0 #"


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text("old\n")
    ds = Dataset(np.zeros((3, 1), np.float32), [0, 1, 2], [0, 3])

    def fail(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(letor, "_format_rows", fail)
    with pytest.raises(RuntimeError):
        write_letor(ds, path)
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["d.txt"]


def test_unwritable_qids_and_comments_are_refused(tmp_path):
    X, y = np.zeros((2, 1), np.float32), [0, 1]
    for qids in (["a b", "c"], ["#", "c"], ["a", "a"]):
        with pytest.raises(ParameterError):
            write_letor(Dataset(X, y, [0, 1, 2], qids=qids), tmp_path / "d.txt")
    with pytest.raises(ParameterError):
        write_letor(Dataset(X, y, [0, 2], comments=["a\nb", ""]), tmp_path / "d.txt")
    assert not (tmp_path / "d.txt").exists()


def test_weighted_rows_are_refused_naming_the_field_not_written_without_their_weights(tmp_path):
    weighted = Dataset(np.zeros((2, 1), np.float32), [0, 1], [0, 2], weight=[1.0, 2.0])
    with pytest.raises(ParameterError, match=r"^dataset\.weight: a LETOR file has no weight column"):
        write_letor(weighted, tmp_path / "d.txt")
    assert not (tmp_path / "d.txt").exists()


# ----------------------------------------------------------------------------- group files


YAHOO_STYLE = "0 10:0.89 11:0.75\n1 1:0.69 11:0.64\n0 1:0.69 17:0.34\n2 3:0.5\n"


def test_group_file_gives_query_boundaries(tmp_path):
    data = write_text(tmp_path / "rank.train", YAHOO_STYLE)
    groups = write_text(tmp_path / "sizes.txt", "1\n2\n1\n")
    ds = read_letor(data, query_file=groups)
    assert ds.query_offsets.tolist() == [0, 1, 3, 4] and ds.qids is None
    assert ds.n_features == 17


def test_group_file_next_to_the_data_is_found(tmp_path):
    # LightGBM's examples/lambdarank layout, gzipped: rank.train.gz + rank.train.query.gz
    data = write_text(tmp_path / "rank.train.gz", YAHOO_STYLE, gz=True)
    write_text(tmp_path / "rank.train.query.gz", "3\n1\n", gz=True)
    assert read_letor(data).query_offsets.tolist() == [0, 3, 4]
    plain = write_text(tmp_path / "rank.test", YAHOO_STYLE)
    write_text(tmp_path / "rank.test.query", "2\n2\n\n")
    assert read_letor(plain).query_offsets.tolist() == [0, 2, 4]


def test_group_file_and_qids_must_agree(tmp_path):
    data = write_text(tmp_path / "d.txt", "1 qid:a 1:1\n0 qid:a 1:2\n1 qid:b 1:3\n")
    ds = read_letor(data, query_file=write_text(tmp_path / "g", "2\n1\n"))
    assert ds.query_offsets.tolist() == [0, 2, 3] and ds.qids.tolist() == ["a", "b"]
    with pytest.raises(DataFormatError, match="line 2"):
        read_letor(data, query_file=write_text(tmp_path / "h", "1\n2\n"))


# ----------------------------------------------------------------------------- peers


@pytest.mark.filterwarnings("ignore:.*deprecated")
def test_xgboost_reads_an_mq2008_part_to_the_same_bits(tmp_path):
    xgb = pytest.importorskip("xgboost")
    bundled = os.path.join(os.path.dirname(letor.__file__), "datasets", "mq2008", "S1.txt.gz")
    plain = tmp_path / "S1.txt"
    plain.write_bytes(gzip.decompress(open(bundled, "rb").read()))
    ours = read_letor(plain)
    theirs = xgb.DMatrix(f"{plain}?format=libsvm&indexing_mode=1")
    assert np.array_equal(theirs.get_data().toarray().astype(np.float32).view(np.uint32), ours.X.view(np.uint32))
    assert np.array_equal(theirs.get_label(), ours.y)
    assert np.array_equal(theirs.get_uint_info("group_ptr"), ours.query_offsets)


def test_lightgbm_finds_the_same_labels_and_groups(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    sizes, lines = [3, 1, 5, 2], []
    for _ in range(sum(sizes)):
        ids = np.sort(rng.choice(np.arange(1, 9), rng.integers(1, 5), replace=False))
        lines.append(f"{rng.integers(0, 5)} " + " ".join(f"{i}:{rng.random():.3f}" for i in ids))
    write_text(tmp_path / "rank.train", "\n".join(lines) + "\n")
    write_text(tmp_path / "rank.train.query", "\n".join(map(str, sizes)) + "\n")
    ours = read_letor(tmp_path / "rank.train")
    theirs = lgb.Dataset(str(tmp_path / "rank.train"), params={"verbose": -1}).construct()
    assert np.array_equal(theirs.get_label(), ours.y)
    assert np.array_equal(theirs.get_field("group"), ours.query_offsets)


@pytest.mark.skipif(not os.path.isdir("/work/shared/data/yahoo-sample"), reason="needs /work/shared")
def test_lightgbm_yahoo_sample_with_group_file_equals_its_qid_version():
    folder = "/work/shared/data/yahoo-sample"
    grouped = read_letor(f"{folder}/rank.train.gz")  # finds rank.train.query.gz
    with_qid = read_letor(f"{folder}/rank.train.qid.txt.gz")
    assert (grouped.n_rows, grouped.n_queries, grouped.n_features) == (3005, 201, 300)
    grouped.qids = with_qid.qids
    assert_same_dataset(grouped, with_qid)


# ----------------------------------------------------------------------------- scores


def test_read_scores_skips_blank_lines_and_checks_the_count(tmp_path):
    path = write_text(tmp_path / "s.txt", "0.5\n\n-1e-3\r\n2\n")
    assert read_scores(path).tolist() == [0.5, -1e-3, 2.0]
    with pytest.raises(DataFormatError, match="holds 3 scores but 4"):
        read_scores(path, n_rows=4)


def test_write_scores_refuses_what_read_scores_would_refuse(tmp_path):
    for bad in ([0.5, np.nan], [np.inf], [[1.0]]):
        with pytest.raises(ParameterError):
            write_scores(tmp_path / "s.txt", bad)
    assert not (tmp_path / "s.txt").exists()


def test_written_files_get_the_usual_permissions(tmp_path):
    write_scores(tmp_path / "s.txt", [1.0])
    mask = os.umask(0o022)
    os.umask(mask)
    assert (tmp_path / "s.txt").stat().st_mode & 0o777 == 0o666 & ~mask


def test_fast_twin_reexports_the_same_functions():
    for name in ("read_letor", "write_letor", "read_scores", "write_scores"):
        assert getattr(fast_letor, name) is getattr(letor, name)


def test_a_rewritten_file_keeps_its_permissions(tmp_path):
    """A private (0600) file stays private when rewritten; a group-writable one stays so."""
    target = tmp_path / "s.txt"
    for mode in (0o600, 0o664, 0o640):
        write_scores(target, [1.0])
        target.chmod(mode)
        write_scores(target, [2.0])
        assert target.stat().st_mode & 0o777 == mode and read_scores(target).tolist() == [2.0]

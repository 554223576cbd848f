"""Malformed LETOR, group and score files: a DataFormatError naming file, line and token, never a numpy traceback."""
import gzip

import numpy as np
import pytest

from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008, query_folds, subsample_queries
from twinrank.reference.io.letor import read_letor, read_scores

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warning may leak either

GOOD = "2 qid:1 1:0.5 2:1\n"

# (case, file text, 1-based line of the error, the offending token)
BAD_LINES = [
    ("no colon", GOOD + "1 qid:1 1:0.5 2 3:1\n", 2, "2"),
    ("empty id", GOOD + "1 qid:1 :0.5\n", 2, ":0.5"),
    ("non-integer id", GOOD + "1 qid:1 1.5:0.3\n", 2, "1.5:0.3"),
    ("word as id", GOOD + "1 qid:1 1:0.1 x:0.3\n", 2, "x:0.3"),
    ("id zero when 1-based", GOOD + "1 qid:1 0:0.3\n", 2, "0:0.3"),
    ("negative id", GOOD + "1 qid:1 -1:0.3\n", 2, "-1:0.3"),
    ("id beyond int64", GOOD + "1 qid:1 99999999999999999999:1\n", 2, "99999999999999999999:1"),
    ("duplicate id", GOOD + "1 qid:1 1:0.1 1:0.2\n", 2, "1:0.2"),
    ("decreasing id", GOOD + "1 qid:1 2:0.1 1:0.2\n", 2, "1:0.2"),
    ("two colons", GOOD + "1 qid:1 1:2:3\n", 2, "1:2:3"),
    ("no colon next to two colons", GOOD + "1 qid:1 4 5:6:7\n", 2, "4"),
    ("empty value", GOOD + "1 qid:1 1:\n", 2, "1:"),
    ("non-numeric value", GOOD + "1 qid:1 1:0.1 2:abc\n", 2, "2:abc"),
    ("hex value", GOOD + "1 qid:1 1:0x10\n", 2, "1:0x10"),
    ("non-numeric label", GOOD + "a qid:1 1:0.1\n", 2, "a"),
    ("missing label", GOOD + "qid:1 1:0.1\n", 2, "qid:1"),
    ("NULL label", GOOD + "NULL qid:1 1:0.1\n", 2, "NULL"),
    ("NaN label", GOOD + "nan qid:1 1:0.1\n", 2, "nan"),
    ("infinite label", GOOD + "inf qid:1 1:0.1\n", 2, "inf"),
    ("inf value", GOOD + "1 qid:1 1:inf\n", 2, "1:inf"),
    ("-inf value", GOOD + "1 qid:1 1:0 2:-inf\n", 2, "2:-inf"),
    ("overflowing value", GOOD + "1 qid:1 1:1e999\n", 2, "1:1e999"),
    ("beyond float32", GOOD + "1 qid:1 2:1e39\n", 2, "2:1e39"),
    ("empty qid", GOOD + "1 qid: 1:0.1\n", 2, "qid:"),
    ("qid missing on a later line", GOOD + "1 1:0.1\n", 2, "1:0.1"),
    ("qid only on a later line", "1 1:0.1\n" + GOOD, 2, "qid:1"),
    ("non-contiguous qid", GOOD + "1 qid:2 1:0\n0 qid:1 1:0\n", 3, "qid:1"),
    ("error after blank and comment lines", "# header\n\n" + GOOD + "\n1 qid:1 1:x\n", 5, "1:x"),
    ("windows line endings", (GOOD + "1 qid:1 1:x\n").replace("\n", "\r\n"), 2, "1:x"),
]


@pytest.mark.parametrize("case, text, line, token", BAD_LINES, ids=[c[0] for c in BAD_LINES])
def test_bad_line_names_file_line_and_token(tmp_path, case, text, line, token):
    path = tmp_path / "bad_file.txt"
    path.write_text(text, newline="")
    with pytest.raises(DataFormatError) as err:
        read_letor(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: ")
    assert f"'{token}'" in message
    assert (err.value.line, err.value.token) == (line, token)


def test_non_contiguous_qid_names_both_lines(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("# c\n1 qid:7 1:0\n1 qid:8 1:0\n1 qid:7 1:0\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:4: .*'qid:7'.*line 2"):
        read_letor(path)


def test_id_beyond_fixed_width(tmp_path):
    path = tmp_path / "test.txt"
    path.write_text(GOOD + "1 qid:1 1:0 47:0.5\n")
    with pytest.raises(DataFormatError, match=r"test\.txt:2: .*n_features=46.*'47:0\.5'"):
        read_letor(path, n_features=46)


def test_giant_id_without_fixed_width(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(GOOD + "1 qid:1 99999999999:1\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2: .*'99999999999:1'"):
        read_letor(path)


def test_error_in_a_later_block_has_the_right_line(tmp_path):
    path = tmp_path / "long.txt.gz"
    lines = [f"0 qid:{i // 50} 1:{i}" for i in range(5000)] + ["0 qid:100 1:oops"]
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(DataFormatError, match=r"long\.txt\.gz:5001: .*'1:oops'"):
        read_letor(path)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  \n"])
def test_file_without_rows(tmp_path, text):
    path = tmp_path / "empty.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"empty\.txt: no data rows"):
        read_letor(path, n_features=3)


def test_comment_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(GOOD.encode() + b"1 qid:1 1:0 #caf\xe9\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2: comment is not valid UTF-8"):
        read_letor(path)


def test_qid_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(GOOD.encode() + b"1 qid:caf\xe9 1:0\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2: query id is not valid UTF-8"):
        read_letor(path)


def test_truncated_gzip(tmp_path):
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(gzip.compress((GOOD * 2000).encode())[:-30])
    with pytest.raises(DataFormatError, match=r"cut\.txt\.gz: corrupt gzip"):
        read_letor(path)


# ----------------------------------------------------------------------------- group files

DATA = "1 1:0.1\n0 1:0.2\n1 1:0.3\n"


@pytest.mark.parametrize("groups, line, token", [
    ("1\n0\n2\n", 2, "0"),
    ("1\n-1\n3\n", 2, "-1"),
    ("1\n2.5\n", 2, "2.5"),
    ("abc\n", 1, "abc"),
    ("1 2\n", 1, "1 2"),
])
def test_bad_group_size(tmp_path, groups, line, token):
    (tmp_path / "d.txt").write_text(DATA)
    (tmp_path / "d.query").write_text(groups)
    with pytest.raises(DataFormatError) as err:
        read_letor(tmp_path / "d.txt", query_file=tmp_path / "d.query")
    assert str(err.value).startswith(f"{tmp_path / 'd.query'}:{line}: ")
    assert f"'{token}'" in str(err.value)


@pytest.mark.parametrize("groups", ["1\n1\n", "2\n2\n", ""])
def test_group_sizes_must_sum_to_the_rows(tmp_path, groups):
    (tmp_path / "d.txt").write_text(DATA)
    (tmp_path / "d.txt.query").write_text(groups)  # found next to the data
    with pytest.raises(DataFormatError, match=r"d\.txt\.query(:2)?: group sizes sum to (\d+ but the data file has|more than the data file's) 3 rows"):
        read_letor(tmp_path / "d.txt")


def test_group_file_disagreeing_with_qids(tmp_path):
    (tmp_path / "d.txt").write_text("1 qid:a 1:0\n1 qid:a 1:0\n1 qid:b 1:0\n")
    (tmp_path / "g.query").write_text("1\n2\n")
    with pytest.raises(DataFormatError, match=r"g\.query: group sizes disagree .* line 2"):
        read_letor(tmp_path / "d.txt", query_file=tmp_path / "g.query")


# ----------------------------------------------------------------------------- scores


@pytest.mark.parametrize("text, line, token", [
    ("0.5\nx\n", 2, "x"),
    ("0.5\n1 2\n", 2, "1 2"),
    ("0.5\n\nnan\n", 3, "nan"),
    ("inf\n", 1, "inf"),
])
def test_bad_score_file(tmp_path, text, line, token):
    path = tmp_path / "scores.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError) as err:
        read_scores(path)
    assert str(err.value).startswith(f"{path}:{line}: ") and f"'{token}'" in str(err.value)


# ----------------------------------------------------------------------------- parameters


def test_bad_parameters(tmp_path):
    (tmp_path / "d.txt").write_text(GOOD)
    with pytest.raises(ParameterError):
        read_letor(tmp_path / "d.txt", n_features=0)
    with pytest.raises(ParameterError):
        load_mq2008(6)
    with pytest.raises(ParameterError):
        query_folds(3, n_folds=4)
    with pytest.raises(ParameterError):
        query_folds(10, n_folds=1)
    ds = Dataset(np.zeros((2, 1), np.float32), [0, 1], [0, 1, 2])
    for fraction in (0.0, 1.5, -1):
        with pytest.raises(ParameterError):
            subsample_queries(ds, fraction, seed=0)

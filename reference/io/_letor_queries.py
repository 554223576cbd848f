"""Query boundaries of a LETOR file: runs of its ``qid:`` column, a group file, or both.

Rows of a query are contiguous: a query id that reappears after other queries is an
error naming both lines. A group file (LightGBM's ``.query``: one positive query size
per line) found next to the data, or given, must agree with the ``qid:`` column when
the file has one. Rules in ``twinrank.reference.io.letor``'s module docstring.
"""
from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from twinrank.reference._streams import bounded_lines, open_input
from twinrank.reference.errors import DataFormatError
from twinrank.reference.io._letor_tokens import shown


def sibling_query_file(path: str) -> str | None:
    """LightGBM's group file next to ``path``, if one exists."""
    candidates = [path + ".query"]
    if path.endswith(".gz"):
        candidates += [path[:-3] + ".query", path[:-3] + ".query.gz"]
    return next((c for c in candidates if os.path.isfile(c)), None)


def query_offsets(path: str, rows: dict, query_file) -> tuple[np.ndarray, np.ndarray | None]:
    """Query offsets and ids from the qid column and/or the group file (which must agree)."""
    n_rows = len(rows["y"])
    offsets, qids = np.array([0, n_rows], dtype=np.int64), None
    if rows["qid"] is not None:
        offsets, qids = _qid_runs(path, rows["qid"], rows["line"])
    if query_file is not None:
        group_offsets = _read_group_offsets(os.fspath(query_file), n_rows)
        if rows["qid"] is not None and not np.array_equal(group_offsets, offsets):
            _raise_disagreement(path, os.fspath(query_file), group_offsets, offsets, rows["line"])
        offsets = group_offsets
    return offsets, qids


def _raise_disagreement(path, query_file, group_offsets, qid_offsets, line):
    """Name the first row that starts a query by one source but not by the other."""
    starts_by_group = np.zeros(len(line) + 1, dtype=bool)  # (n_rows + 1,)
    starts_by_group[group_offsets] = True
    starts_by_qid = np.zeros(len(line) + 1, dtype=bool)  # (n_rows + 1,)
    starts_by_qid[qid_offsets] = True
    r = int(np.flatnonzero(starts_by_group != starts_by_qid)[0])
    by_group, by_qid = ("starts", "does not") if starts_by_group[r] else ("does not start", "does")
    raise DataFormatError(
        query_file, None,
        f"group sizes disagree with the qid column of {path}: the row at line {line[r]} "
        f"{by_group} a query by the group file but {by_qid} by qid")


def _qid_runs(path: str, qid: list, line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and ids of the runs of equal qids; a qid that reappears later is an error."""
    q = np.array(qid, dtype=object)  # (n_rows,) bytes, compared exactly
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])  # (n_queries,)
    run_ids = q[starts]  # (n_queries,)
    order = np.argsort(run_ids, kind="stable")
    repeat = np.flatnonzero(run_ids[order[1:]] == run_ids[order[:-1]])
    if len(repeat):
        first, again = order[repeat], order[repeat + 1]
        k = int(np.argmin(again))
        qid_text = run_ids[again[k]].decode(errors="replace")
        raise DataFormatError(
            path, int(line[starts[again[k]]]),
            f"query id 'qid:{qid_text}' reappears after other queries (its rows began at line "
            f"{line[starts[first[k]]]}); rows of a query must be contiguous", f"qid:{qid_text}")
    qids = []
    for start, run_id in zip(starts, run_ids):
        try:
            qids.append(run_id.decode("utf-8"))
        except UnicodeDecodeError:
            raise DataFormatError(path, int(line[start]), "query id is not valid UTF-8") from None
    return np.r_[starts, len(q)].astype(np.int64), np.array(qids)


def _read_group_offsets(query_file: str, n_rows: int) -> np.ndarray:
    """Query offsets from a group file of one positive size per line (blank lines skipped), read
    only until the sizes pass ``n_rows`` (the input may be a pipe that never ends)."""
    sizes, total = [], 0
    try:
        with open_input(query_file) as f:
            for number, line in bounded_lines(query_file, f):
                tokens = line.split()
                if not tokens:
                    continue
                text = b" ".join(tokens).decode(errors="replace")
                if len(tokens) != 1 or not tokens[0].isdigit() or not tokens[0].strip(b"0"):
                    raise DataFormatError(query_file, number, f"group size '{shown(text)}' is not a positive "
                                                              "integer", text)
                if len(tokens[0]) > 20 or total + int(tokens[0]) > n_rows:  # stop: the input may never end
                    raise DataFormatError(query_file, number, f"group sizes sum to more than the data file's "
                                                              f"{n_rows} rows by this line")
                sizes.append(int(tokens[0]))
                total += sizes[-1]
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(query_file, None, f"corrupt gzip data ({e})") from None
    if total != n_rows:
        raise DataFormatError(query_file, None, f"group sizes sum to {total} but the data file has {n_rows} rows")
    return np.r_[0, np.cumsum(sizes)].astype(np.int64)

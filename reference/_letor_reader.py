"""A LETOR / SVMlight data file to arrays: labels, dense float32 features, query boundaries, comments.

``read_arrays`` is all of ``twinrank.reference.letor.read_letor`` but the
:class:`~twinrank.reference.data.Dataset` around its result, so that ``data`` can read its
bundled files without importing ``letor`` (which imports ``data``). Each line is split
once in Python; blocks of ``BLOCK_LINES`` lines are parsed together (``_letor_tokens``);
query boundaries come from ``_letor_queries``.
"""
from __future__ import annotations

import gzip
import os
import zlib
from itertools import chain
from typing import NamedTuple

import numpy as np

from ._letor_queries import query_offsets, sibling_query_file
from ._letor_tokens import check_ids, check_values, dense_block, open_bytes, pairs, parse_floats
from .errors import DataFormatError, ParameterError

BLOCK_LINES = 4096


class LetorArrays(NamedTuple):
    """The fields of a ``Dataset``, in its order, as read from a file."""

    X: np.ndarray  # (n_rows, n_features) float32, NaN for NULL
    y: np.ndarray  # (n_rows,) float64
    query_offsets: np.ndarray  # (n_queries + 1,) int64
    qids: np.ndarray | None  # (n_queries,) str, None without a qid: column
    comments: np.ndarray | None  # (n_rows,) object (str), None when no row has a '#'
    has_queries: bool  # False without a qid: column and a group file (then one query of all rows)
    n_features_in_file: int  # the largest feature id in the file (0-based files: largest id + 1)


def read_arrays(path, *, n_features: int | None = None, query_file=None, zero_based: bool = False) -> LetorArrays:
    """The arrays ``read_letor`` makes its ``Dataset`` of (arguments and rules there)."""
    if n_features is not None and (not isinstance(n_features, (int, np.integer)) or n_features < 1):
        raise ParameterError(f"n_features must be a positive integer or None, got {n_features!r}")
    path = os.fspath(path)
    rows = _read_rows(path, int(not zero_based), n_features)
    if query_file is None:
        query_file = sibling_query_file(path)
    offsets, qids = query_offsets(path, rows, query_file)
    in_file = max(rows["width"])
    width = n_features if n_features is not None else in_file
    return LetorArrays(_stack(rows["X"], width), rows["y"], offsets, qids, _comment_array(rows["comments"]),
                       rows["qid"] is not None or query_file is not None, in_file)


def _read_rows(path: str, base: int, n_features: int | None) -> dict:
    """Parse every data line: labels, dense feature blocks, qid bytes, comments, line numbers."""
    rows = {"y": [], "X": [], "qid": [], "comments": [], "line": [], "width": []}
    with_qid = None
    try:
        with open_bytes(path) as f:
            for block in _blocks(f):
                if with_qid is None:
                    with_qid = _has_qid(block[0][1])
                parsed = _parse_block(path, block, base, n_features, with_qid)
                for key, value in parsed.items():
                    rows[key].append(value)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(path, None, f"corrupt gzip data ({e})") from None
    if not rows["y"]:
        raise DataFormatError(path, None, "no data rows (the file is empty or holds only blank and comment lines)")
    rows["y"] = np.concatenate(rows["y"])
    rows["line"] = np.concatenate(rows["line"])
    rows["qid"] = list(chain.from_iterable(rows["qid"])) if with_qid else None
    rows["comments"] = list(chain.from_iterable(rows["comments"]))
    return rows


def _blocks(f):
    """Yield lists of ``(line number, fields, comment bytes or None)``, one per data line.

    ``fields`` is the part before ``#`` split at its first two runs of whitespace:
    ``[label, qid or first feature, the rest]``. Blank lines and comment-only
    lines are skipped here; their numbers still count.
    """
    block = []
    for number, line in enumerate(f, 1):
        head, sep, comment = line.partition(b"#")
        fields = head.split(None, 2)
        if fields:
            block.append((number, fields, comment if sep else None))
            if len(block) == BLOCK_LINES:
                yield block
                block = []
    if block:
        yield block


def _has_qid(fields: list) -> bool:
    return len(fields) > 1 and fields[1].startswith(b"qid:")


def _parse_block(path: str, block: list, base: int, n_features: int | None, with_qid: bool) -> dict:
    """Parse a block of data lines; the first bad token raises a DataFormatError."""
    numbers = np.array([number for number, _, _ in block], dtype=np.int64)  # (n_lines,)
    fields = [f for _, f, _ in block]
    y = _labels(path, numbers, [f[0] for f in fields])
    qids = _block_qids(path, block, with_qid)
    features = [b" ".join(f[1 + with_qid:]) for f in fields]  # (n_lines,) the id:value text of each line
    ids, values, tokens = pairs(path, numbers, features)
    cols = check_ids(tokens, ids, base, n_features)
    return {
        "y": y,
        "X": dense_block(tokens, cols, check_values(tokens, values), n_features),
        "qid": qids,
        "comments": _comments(path, block),
        "line": numbers,
        "width": int(cols.max()) + 1 if len(cols) else 0,
    }


def _block_qids(path: str, block: list, with_qid: bool) -> list | None:
    """The qid bytes of each line, after checking every line agrees with ``with_qid``."""
    for number, fields, _ in block:
        if _has_qid(fields) != with_qid:
            token = fields[min(1, len(fields) - 1)].split()[0].decode(errors="replace")
            message = ("this line has no qid but earlier lines have one" if with_qid else
                       "this line has a qid but the first data line has none")
            raise DataFormatError(path, number, f"{message} (token '{token}'): either every row has a qid or none",
                                  token)
        if with_qid and fields[1] == b"qid:":
            raise DataFormatError(path, number, "empty query id in token 'qid:'", "qid:")
    return [fields[1][4:] for _, fields, _ in block] if with_qid else None


def _labels(path: str, numbers: np.ndarray, labels: list) -> np.ndarray:
    """Parse the labels of a block; a non-numeric, NaN or infinite label is an error."""
    y = parse_floats(path, numbers, labels, "label")
    bad = np.flatnonzero(~np.isfinite(y))
    if len(bad):
        token = labels[bad[0]].decode()
        raise DataFormatError(path, int(numbers[bad[0]]), f"label '{token}' is not a finite number", token)
    return y


def _stack(blocks: list, width: int) -> np.ndarray:
    """The dense blocks one under the other, right-padded with zeros to ``width`` columns."""
    X = np.zeros((sum(len(b) for b in blocks), width), dtype=np.float32)  # (n_rows, width)
    start = 0
    for block in blocks:
        X[start:start + len(block), :block.shape[1]] = block
        start += len(block)
    return X


def _comment_array(comments: list) -> np.ndarray | None:
    """None if no row has a ``#``; else every row's comment, ``""`` for rows without one."""
    if all(c is None for c in comments):
        return None
    return np.array(["" if c is None else c for c in comments], dtype=object)


def _comments(path: str, block: list) -> list:
    """Each line's comment, decoded from UTF-8 and stripped, or None for a line without ``#``."""
    comments = []
    for number, _, comment in block:
        try:
            comments.append(None if comment is None else comment.decode("utf-8").strip())
        except UnicodeDecodeError as e:
            raise DataFormatError(path, number, f"comment is not valid UTF-8 ({e.reason})") from None
    return comments

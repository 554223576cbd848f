"""A LETOR / SVMlight data file to arrays: labels, dense float32 features, query boundaries, comments.

``read_arrays`` is all of ``twinrank.reference.io.letor.read_letor`` but the
:class:`~twinrank.reference.io.data.Dataset` around its result, so that ``data`` can read its
bundled files without importing ``letor`` (which imports ``data``). Each line is split
once in Python; blocks of ``BLOCK_LINES`` lines are parsed together (``_letor_tokens``);
query boundaries come from ``_letor_queries``.
"""
from __future__ import annotations

import gzip
import os
import zlib
from functools import partial
from itertools import chain
from typing import NamedTuple

import numpy as np

from twinrank.reference._streams import CHUNK_BYTES, MAX_LINE_BYTES, line_too_long, open_input
from twinrank.reference.constants import MAX_LABEL
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io._letor_queries import query_offsets, sibling_query_file
from twinrank.reference.io._letor_tokens import (
    check_ids,
    check_values,
    compact_block,
    pairs,
    parse_floats,
    shown,
)

BLOCK_LINES = 4096
MAX_FEATURES = 65_536  # read_letor's default max_features: a dense row of 256 KiB
_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {b"\xff\xfe": "UTF-16 (or UTF-32) little-endian", b"\xfe\xff": "UTF-16 big-endian",
               b"\x00\x00\xfe\xff": "UTF-32 big-endian"}


class LetorArrays(NamedTuple):
    """The fields of a ``Dataset``, in its order, as read from a file."""

    X: np.ndarray  # (n_rows, n_features) float32, NaN for NULL
    y: np.ndarray  # (n_rows,) float64
    query_offsets: np.ndarray  # (n_queries + 1,) int64
    qids: np.ndarray | None  # (n_queries,) str, None without a qid: column
    comments: np.ndarray | None  # (n_rows,) object (str), None when no row has a '#'
    has_queries: bool  # False without a qid: column and a group file (then one query of all rows)
    n_features_in_file: int  # the largest feature id in the file (0-based files: largest id + 1)


def read_arrays(path, *, n_features: int | None = None, query_file=None, zero_based: bool = False,
                max_features: int | None = MAX_FEATURES, max_label: float | None = MAX_LABEL) -> LetorArrays:
    """The arrays ``read_letor`` makes its ``Dataset`` of (arguments and rules there)."""
    for name, value in (("n_features", n_features), ("max_features", max_features)):
        if value is not None and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1):
            raise ParameterError(f"{name} must be a positive integer or None, got {value!r}")
    if max_label is not None and (isinstance(max_label, bool) or not isinstance(max_label, (int, float, np.number))):
        raise ParameterError(f"max_label must be a number or None, got {max_label!r}")
    path = os.fspath(path)
    rows = _read_rows(path, int(not zero_based), n_features, max_features, max_label)
    if query_file is None:
        query_file = sibling_query_file(path)
    offsets, qids = query_offsets(path, rows, query_file)
    in_file = max(rows["width"])
    width = n_features if n_features is not None else in_file
    return LetorArrays(_stack(path, rows, width), rows["y"], offsets, qids, _comment_array(rows["comments"]),
                       rows["qid"] is not None or query_file is not None, in_file)


def _read_rows(path: str, base: int, n_features: int | None, max_features: int | None,
               max_label: float | None) -> dict:
    """Parse every data line: labels, compact feature blocks, qid bytes, comments, line numbers."""
    rows = {"y": [], "X": [], "qid": [], "comments": [], "line": [], "n_lines": [], "width": [], "widest": []}
    with_qid = None
    try:
        with open_input(path) as f:
            for block in _blocks(_lines(path, f)):
                if with_qid is None:
                    with_qid = _has_qid(block[0][1])
                parsed = _parse_block(path, block, base, n_features, max_features, max_label, with_qid)
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


def _lines(path: str, f):
    """The file's lines, without their ends, read as a stream (``_streams``).

    Lines end at ``\\n`` (a ``\\r`` before it is whitespace), or at ``\\r`` when the
    first 64 KiB hold a ``\\r`` and no ``\\n`` (classic Mac OS files). A UTF-8 byte order mark
    at the start is skipped; a UTF-16 or UTF-32 one is an error; so is a line longer than
    ``_streams.MAX_LINE_BYTES``.
    """
    head = f.read(CHUNK_BYTES)
    for mark, encoding in _OTHER_BOMS.items():
        if head.startswith(mark):
            raise DataFormatError(path, 1, f"the file is {encoding} text (it starts with the byte order "
                                           f"mark {mark.hex(' ').upper()}); save it as UTF-8 or ASCII")
    head = head.removeprefix(_UTF8_BOM)
    bare_cr = b"\r" in head and b"\n" not in head
    return _split(path, chain([head], iter(partial(f.read, CHUNK_BYTES), b"")), b"\r" if bare_cr else b"\n")


def _split(path: str, chunks, separator: bytes):
    """The pieces of the concatenated ``chunks`` between ``separator`` bytes (no empty last piece);
    a piece longer than ``MAX_LINE_BYTES`` is an error naming its line, raised as soon as the
    pieces read of it are longer."""
    limit = MAX_LINE_BYTES
    pending, pending_bytes = [], 0  # the pieces of the line being read, their length
    n_lines = 0  # the lines yielded
    for chunk in chunks:
        parts = chunk.split(separator)
        if len(parts) == 1:
            pending.append(chunk)
            pending_bytes += len(chunk)
            if pending_bytes > limit:
                raise line_too_long(path, n_lines + 1, limit)
            continue
        parts[0] = b"".join(pending) + parts[0]
        if max(map(len, parts[:-1])) > limit:
            raise line_too_long(path, n_lines + 1 + next(i for i, p in enumerate(parts) if len(p) > limit), limit)
        yield from parts[:-1]
        n_lines += len(parts) - 1
        pending, pending_bytes = [parts[-1]], len(parts[-1])
        if pending_bytes > limit:
            raise line_too_long(path, n_lines + 1, limit)
    last = b"".join(pending)
    if last:
        yield last


def _blocks(lines):
    """Yield lists of ``(line number, fields, comment bytes or None)``, one per data line.

    ``fields`` is the part before ``#`` split at its first two runs of whitespace:
    ``[label, qid or first feature, the rest]``. Blank lines and comment-only
    lines are skipped here; their numbers still count.
    """
    block = []
    for number, line in enumerate(lines, 1):
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


def _parse_block(path: str, block: list, base: int, n_features: int | None, max_features: int | None,
                 max_label: float | None, with_qid: bool) -> dict:
    """Parse a block of data lines; the first bad token raises a DataFormatError."""
    numbers = np.array([number for number, _, _ in block], dtype=np.int64)  # (n_lines,)
    fields = [f for _, f, _ in block]
    y = _labels(path, numbers, [f[0] for f in fields], max_label)
    qids = _block_qids(path, block, with_qid)
    features = [b" ".join(f[1 + with_qid:]) for f in fields]  # (n_lines,) the id:value text of each line
    ids, values, tokens = pairs(path, numbers, features)
    cols = check_ids(tokens, ids, base, n_features, max_features)
    widest = int(np.argmax(cols)) if len(cols) else None
    return {
        "y": y,
        "X": compact_block(tokens, cols, check_values(tokens, values)),
        "qid": qids,
        "comments": _comments(path, block),
        "line": numbers,
        "n_lines": len(numbers),
        "width": int(cols[widest]) + 1 if len(cols) else 0,
        "widest": None if widest is None else (int(numbers[tokens.line[widest]]), int(ids[widest])),
    }


def _block_qids(path: str, block: list, with_qid: bool) -> list | None:
    """The qid bytes of each line, after checking every line agrees with ``with_qid``."""
    for number, fields, _ in block:
        if _has_qid(fields) != with_qid:
            token = fields[min(1, len(fields) - 1)].split()[0].decode(errors="replace")
            message = ("this line has no qid but earlier lines have one" if with_qid else
                       "this line has a qid but the first data line has none")
            raise DataFormatError(path, number, f"{message} (token '{shown(token)}'): either every row has a qid or none",
                                  token)
        if with_qid and fields[1] == b"qid:":
            raise DataFormatError(path, number, "empty query id in token 'qid:'", "qid:")
    return [fields[1][4:] for _, fields, _ in block] if with_qid else None


def _labels(path: str, numbers: np.ndarray, labels: list, max_label: float | None) -> np.ndarray:
    """Parse the labels of a block; a non-numeric, NaN or infinite label, or one above ``max_label``, is an error."""
    y = parse_floats(path, numbers, labels, "label")
    bad = np.flatnonzero(~np.isfinite(y))
    if len(bad):
        token = labels[bad[0]].decode()
        raise DataFormatError(path, int(numbers[bad[0]]), f"label '{shown(token)}' is not a finite number", token)
    if max_label is not None:
        high = np.flatnonzero(y > max_label)
        if len(high):
            token = labels[high[0]].decode()
            raise DataFormatError(
                path, int(numbers[high[0]]),
                f"label '{shown(token)}' is above max_label={max_label:g}: relevance grades above {MAX_LABEL} overflow "
                "or swamp the exponential gain 2^l - 1 of NDCG, ERR and LambdaRank; pass max_label=None "
                "(--max-label none) for regression targets", token)
    return y


def _stack(path: str, rows: dict, width: int) -> np.ndarray:
    """The blocks one under the other in one float32 matrix of ``width`` columns, absent features 0.0.

    The width is the whole file's, known before this one allocation; a matrix too large
    for memory is a DataFormatError naming the line and id that made it so wide.
    """
    n_rows = len(rows["y"])
    try:
        X = np.zeros((n_rows, width), dtype=np.float32)  # (n_rows, width)
    except (MemoryError, ValueError):
        line, feature_id = max((w for w in rows["widest"] if w is not None), key=lambda w: w[1])
        raise DataFormatError(path, line, f"feature id {feature_id} makes the data {n_rows} x {width} float32, "
                                          f"{n_rows * width * 4 / 2**30:.1f} GiB, too large for memory; fix the id "
                                          "or select fewer features", str(feature_id)) from None
    start = 0
    for block, n_lines in zip(rows["X"], rows["n_lines"]):
        if isinstance(block, np.ndarray):  # dense (n_lines, block width)
            X[start:start + n_lines, :block.shape[1]] = block
        else:  # sparse: line within the block, column, value of every token
            line, cols, values = block
            X[start + line, cols] = values
        start += n_lines
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

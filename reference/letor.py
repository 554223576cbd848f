r"""LETOR / SVMlight text files: data sets, group files and score files.

The format (Joachims' SVMlight, used by LETOR 3.0/4.0, MSLR-WEB, the Yahoo! LTR
challenge, RankLib, LightGBM and XGBoost) holds one document per line::

    <label> [qid:<query id>] <id>:<value> <id>:<value> ... [# comment]
    2 qid:10032 1:0.056537 2:0.000000 ... 46:0.076923 #docid = GX029-35-5894638

How :func:`read_letor` reads it (each rule a decision; nothing is silently
dropped or reordered, anything else is a :class:`DataFormatError` naming the
file, the 1-based line and the token):

* Lines are separated by ``\n``; a trailing ``\r`` (Windows) is whitespace.
  Blank lines and lines holding only a ``#`` comment are skipped; every other
  line is one row, in file order. A file with no row is an error.
* The comment of a row is the text after its first ``#``, stripped.
  ``Dataset.comments`` is None when no row has a ``#``, else ``""`` marks a row without one.
* Feature ids are 1-based (``zero_based=True`` for 0-based files) and increase
  strictly along a line; a repeated or decreasing id is an error. An absent
  feature is 0.0 (SVMlight's sparse convention): ``3:0.5 7:1`` sets features 3
  and 7 and leaves the others at zero.
* A value ``NULL`` (LETOR 4.0's marker) or ``nan`` is a missing value, NaN. An
  infinite value (``inf``, ``1e999``, or beyond float32's range) is an error; so
  is a NaN or infinite label. Values are parsed as float64, then rounded to float32.
* The width is ``n_features`` when given (an id beyond it is an error), else the
  largest id seen, so pass the training width when reading validation and test files.
* Query boundaries come from the ``qid:`` column (rows of a query must be
  contiguous; query ids are compared as strings), from a group file, or from
  both, which must then agree. Either every row has a ``qid:`` or none has.
  Without either, the file is one query holding all rows (SVMlight's meaning of
  a file without qid: every pair of rows is comparable).
* A group file (LightGBM's ``.query`` file) holds one positive integer per line,
  the sizes of consecutive queries, which must sum to the number of rows. With
  ``query_file=None`` it is found next to the data as LightGBM does:
  ``<path>.query``, or for ``<stem>.gz`` also ``<stem>.query`` and ``<stem>.query.gz``.
* A gzip file is recognised by its magic bytes, whatever its name.

:func:`write_letor` writes the same format so that reading the file back gives
the same data set bit for bit (``NULL`` for NaN, shortest float32 decimals).
Score files (:func:`read_scores`, :func:`write_scores`) hold one number per line.
Every writer is atomic: a temporary file in the target folder, then ``os.replace``.

Speed: each line is split once in Python; the ``id:value`` tokens of a block of
lines are parsed together by NumPy's C text reader (``numpy.loadtxt``), and only
a block that fails is walked token by token to name the bad one. MQ2008 Fold1
train (9,630 rows x 46) takes about 0.2 s of CPU; 200k rows x 136 about 9 s, so
MSLR-WEB10K-sized files (1M rows x 136) take under a minute.
"""
from __future__ import annotations

import gzip
import io
import os
import zlib
from dataclasses import dataclass
from itertools import chain

import numpy as np

from ._atomic import atomic_output
from .data import Dataset
from .errors import DataFormatError, ParameterError

_BLOCK_LINES = 4096
_GZIP_MAGIC = b"\x1f\x8b"
_PAIR = np.dtype([("id", np.int64), ("value", np.float64)])
_WHITESPACE_TO_NEWLINE = bytes.maketrans(b" \t\r\x0b\x0c", b"\n\n\n\n\n")  # what bytes.split() splits on


# ----------------------------------------------------------------------------- reading


def read_letor(path, *, n_features: int | None = None, query_file=None,
               zero_based: bool = False) -> Dataset:
    """Read a LETOR / SVMlight file into a :class:`Dataset` (rules in the module docstring).

    Parameters
    ----------
    path : str or PathLike
        The data file, plain or gzip.
    n_features : int or None
        Width of ``X``; an id beyond it is an error. None: the largest id in the file.
    query_file : str or PathLike or None
        A group file of query sizes; None looks for one next to ``path``.
    zero_based : bool
        Feature ids start at 0 instead of 1.

    Returns
    -------
    Dataset
        ``X`` float32 (n_rows, n_features), NaN for ``NULL``; ``y`` float64;
        ``qids`` as read (None without a ``qid:`` column); ``comments``.
    """
    if n_features is not None and (not isinstance(n_features, (int, np.integer)) or n_features < 1):
        raise ParameterError(f"n_features must be a positive integer or None, got {n_features!r}")
    path = os.fspath(path)
    rows = _read_rows(path, int(not zero_based), n_features)
    if query_file is None:
        query_file = _sibling_query_file(path)
    offsets, qids = _query_offsets(path, rows, query_file)
    width = n_features if n_features is not None else max(b.shape[1] for b in rows["X"])
    return Dataset(_stack(rows["X"], width), rows["y"], offsets, qids=qids,
                   comments=_comment_array(rows["comments"]))


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


def _read_rows(path: str, base: int, n_features: int | None) -> dict:
    """Parse every data line: labels, dense feature blocks, qid bytes, comments, line numbers."""
    rows = {"y": [], "X": [], "qid": [], "comments": [], "line": []}
    with_qid = None
    try:
        with _open_bytes(path) as f:
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


def _open_bytes(path: str):
    """The file opened for binary reading, decompressed if it starts with gzip's magic bytes."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


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
            if len(block) == _BLOCK_LINES:
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
    ids, values, tokens = _pairs(path, numbers, features)
    cols = _check_ids(tokens, ids, base, n_features)
    return {
        "y": y,
        "X": _dense_block(tokens, cols, _check_values(tokens, values), n_features),
        "qid": qids,
        "comments": _comments(path, block),
        "line": numbers,
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
    y = _parse_floats(path, numbers, labels, "label")
    bad = np.flatnonzero(~np.isfinite(y))
    if len(bad):
        token = labels[bad[0]].decode()
        raise DataFormatError(path, int(numbers[bad[0]]), f"label '{token}' is not a finite number", token)
    return y


def _parse_floats(path: str, numbers: np.ndarray, tokens: list, what: str) -> np.ndarray:
    """``tokens`` (one per line) as float64; the first token that is no number is an error."""
    try:
        return _floats(tokens)
    except ValueError:
        for number, token in zip(numbers, tokens):
            if not _is_float(token):
                text = token.decode(errors="replace")
                raise DataFormatError(path, int(number), f"{what} '{text}' is not a number", text) from None
        raise DataFormatError(path, int(numbers[0]), f"cannot parse the {what}s of lines {numbers[0]}-{numbers[-1]}")


def _floats(tokens: list) -> np.ndarray:
    """Byte strings (no whitespace, at least one) as float64 by NumPy's C text reader.

    Python's float syntax without ``_``: ``1``, ``-2.5e-3``, ``nan``, ``inf``.
    ValueError if any is not a number.
    """
    return np.loadtxt(io.BytesIO(b"\n".join(tokens)), dtype=np.float64, comments=None, ndmin=1)


def _is_float(token: bytes) -> bool:
    try:
        _floats([token])
        return True
    except ValueError:
        return False


def _is_int(token: bytes) -> bool:
    """Whether the reader of :func:`_pairs` takes ``token`` as an int64 feature id."""
    try:
        np.loadtxt(io.BytesIO(token), dtype=np.int64, comments=None, ndmin=1)
        return True
    except ValueError:
        return False


@dataclass
class _Tokens:
    """Where each ``id:value`` token of a block came from, to name it in an error."""

    path: str
    numbers: np.ndarray  # (n_lines,) 1-based line numbers
    features: list  # (n_lines,) the id:value text of each line
    line: np.ndarray  # (n_tokens,) index into ``numbers`` of each token

    def error(self, k: int, message: str):
        """Raise a DataFormatError about token ``k`` of the block."""
        i = self.line[k]
        j = k - np.searchsorted(self.line, i)  # position of the token within its line
        text = self.features[i].split()[j].decode(errors="replace")
        raise DataFormatError(self.path, int(self.numbers[i]), f"{message} (token '{text}')", text)


def _pairs(path: str, numbers: np.ndarray, features: list) -> tuple[np.ndarray, np.ndarray, _Tokens]:
    """All ``id:value`` tokens of a block as (int64 ids, float64 values, their origin); ``NULL`` is NaN.

    Every token becomes one line of a ``:``-delimited text parsed at once; the
    reader demands exactly two fields per line, so each token holds exactly one
    ``:`` and the tokens of a line are as many as its colons.
    """
    counts = np.array([f.count(b":") for f in features], dtype=np.int64)  # (n_lines,)
    tokens = _Tokens(path, numbers, features, np.repeat(np.arange(len(features)), counts))
    text = (b"\n".join(features).translate(_WHITESPACE_TO_NEWLINE) + b"\n").replace(b":NULL\n", b":nan\n")
    if not counts.sum():
        if text.strip():
            _raise_bad_token(path, numbers, features)
        return np.zeros(0, np.int64), np.zeros(0, np.float64), tokens
    try:
        pairs = np.loadtxt(io.BytesIO(text), dtype=_PAIR, delimiter=":", comments=None, ndmin=1)
    except ValueError:
        _raise_bad_token(path, numbers, features)
    return pairs["id"], pairs["value"], tokens


def _raise_bad_token(path: str, numbers: np.ndarray, features: list):
    """Walk a block that failed to parse, token by token, and raise on the first bad token."""
    for number, line in zip(numbers, features):
        for token in line.split():
            message = _token_problem(token)
            if message is not None:
                text = token.decode(errors="replace")
                raise DataFormatError(path, int(number), f"{message} in token '{text}'", text)
    raise DataFormatError(path, int(numbers[0]), f"cannot parse lines {numbers[0]}-{numbers[-1]}")


def _token_problem(token: bytes) -> str | None:
    """What is wrong with one ``id:value`` token, or None, by the rules :func:`_pairs` applies."""
    id_part, colon, value = token.partition(b":")
    if not colon:
        return "no ':' between feature id and value"
    if b":" in value:
        return "more than one ':'"
    if not id_part:
        return "empty feature id"
    if not _is_int(id_part):
        return f"feature id '{id_part.decode(errors='replace')}' is not an integer (int64)"
    if not value:
        return "empty feature value"
    if value != b"NULL" and not _is_float(value):
        return f"feature value '{value.decode(errors='replace')}' is not a number"
    return None


def _check_ids(tokens: _Tokens, ids: np.ndarray, base: int, n_features: int | None) -> np.ndarray:
    """Column of every token (``id - base``); ids must be in range and increase along each line."""
    cols = ids - base  # (n_tokens,)
    low = np.flatnonzero(cols < 0)
    if len(low):
        hint = "ids are 1-based (pass zero_based=True for 0-based files)" if base else "ids must be >= 0"
        tokens.error(low[0], f"feature id {ids[low[0]]} is below {base}: {hint}")
    if n_features is not None:
        high = np.flatnonzero(cols >= n_features)
        if len(high):
            tokens.error(high[0], f"feature id {ids[high[0]]} is beyond n_features={n_features}")
    same_line = tokens.line[1:] == tokens.line[:-1]  # (n_tokens - 1,)
    unordered = np.flatnonzero(same_line & (ids[1:] <= ids[:-1])) + 1
    if len(unordered):
        k = unordered[0]
        tokens.error(k, f"feature id {ids[k]} follows id {ids[k - 1]}: ids must increase strictly along a line")
    return cols


def _check_values(tokens: _Tokens, values: np.ndarray) -> np.ndarray:
    """Values rounded to float32; an infinite one, or one beyond float32's range, is an error."""
    with np.errstate(over="ignore"):
        values32 = values.astype(np.float32)  # (n_tokens,)
    bad = np.flatnonzero(np.isinf(values32))
    if len(bad):
        tokens.error(bad[0], "feature value is infinite or beyond the float32 range")
    return values32


def _dense_block(tokens: _Tokens, cols: np.ndarray, values: np.ndarray, n_features: int | None) -> np.ndarray:
    """The block's rows as a dense float32 matrix, absent features 0.0."""
    width = n_features if n_features is not None else int(cols.max()) + 1 if len(cols) else 0
    try:
        block = np.zeros((len(tokens.numbers), width), dtype=np.float32)  # (n_lines, width)
    except (MemoryError, ValueError):
        tokens.error(int(np.argmax(cols)), "this feature id makes the dense matrix too large for memory; "
                     "fix the id or pass n_features")
    block[tokens.line, cols] = values
    return block


def _comments(path: str, block: list) -> list:
    """Each line's comment, decoded from UTF-8 and stripped, or None for a line without ``#``."""
    comments = []
    for number, _, comment in block:
        try:
            comments.append(None if comment is None else comment.decode("utf-8").strip())
        except UnicodeDecodeError as e:
            raise DataFormatError(path, number, f"comment is not valid UTF-8 ({e.reason})") from None
    return comments


# ----------------------------------------------------------------------------- queries


def _sibling_query_file(path: str) -> str | None:
    """LightGBM's group file next to ``path``, if one exists."""
    candidates = [path + ".query"]
    if path.endswith(".gz"):
        candidates += [path[:-3] + ".query", path[:-3] + ".query.gz"]
    return next((c for c in candidates if os.path.isfile(c)), None)


def _query_offsets(path: str, rows: dict, query_file) -> tuple[np.ndarray, np.ndarray | None]:
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
    """Query offsets from a group file of one positive size per line (blank lines skipped)."""
    sizes = []
    try:
        with _open_bytes(query_file) as f:
            for number, line in enumerate(f, 1):
                tokens = line.split()
                if not tokens:
                    continue
                text = b" ".join(tokens).decode(errors="replace")
                if len(tokens) != 1 or not tokens[0].isdigit() or int(tokens[0]) == 0:
                    raise DataFormatError(query_file, number, f"group size '{text}' is not a positive integer", text)
                sizes.append(int(tokens[0]))
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(query_file, None, f"corrupt gzip data ({e})") from None
    if sum(sizes) != n_rows:
        raise DataFormatError(query_file, None,
                              f"group sizes sum to {sum(sizes)} but the data file has {n_rows} rows")
    return np.r_[0, np.cumsum(sizes)].astype(np.int64)


# ----------------------------------------------------------------------------- writing


def write_letor(dataset: Dataset, path, *, sparse: bool = False) -> None:
    """Write ``dataset`` as ``label qid:Q 1:v 2:v ... #comment``, atomically; gzip if ``path`` ends in ``.gz``.

    ``read_letor(path, n_features=dataset.n_features)`` gives back the same data
    set, bit for bit: features are written as the shortest decimal that reads
    back to the same float32, NaN as ``NULL``, labels as integers when they are
    whole numbers and as the shortest round-trip decimal otherwise. A data set
    without ``qids`` gets ``qid:1, qid:2, ...`` (its query index, 1-based). With
    ``comments``, every row gets a ``#`` (possibly followed by nothing).

    Parameters
    ----------
    dataset : Dataset
    path : str or PathLike
    sparse : bool
        Leave out features whose value is +0.0 (they read back as 0.0).

    Raises
    ------
    ParameterError
        A query id that is empty, holds whitespace or ``#``, or names two queries;
        a comment holding a newline.
    """
    qids = _checked_qids(dataset)
    comments = _checked_comments(dataset)
    with atomic_output(path) as out:
        for start in range(0, dataset.n_rows, _BLOCK_LINES):
            stop = min(start + _BLOCK_LINES, dataset.n_rows)
            lines = _format_rows(dataset, qids, comments, start, stop, sparse)
            out.write(("\n".join(lines) + "\n").encode("utf-8"))


def _checked_qids(dataset: Dataset) -> np.ndarray:
    """The qid written for every row (the 1-based query index when the data set has no qids)."""
    if dataset.qids is None:
        qids = np.arange(1, dataset.n_queries + 1).astype(str)
    else:
        qids = dataset.qids
        for q in qids:
            if not q or len(q.split()) != 1 or q.strip() != q or "#" in q:
                raise ParameterError(f"query id {q!r} cannot be written: it is empty or holds whitespace or '#'")
        values, counts = np.unique(qids, return_counts=True)
        if np.any(counts > 1):
            raise ParameterError(f"query id {values[counts > 1][0]!r} names more than one query; "
                                 "the file would merge or reject them")
    return np.repeat(qids, dataset.query_sizes)  # (n_rows,)


def _checked_comments(dataset: Dataset):
    if dataset.comments is None:
        return None
    for i, c in enumerate(dataset.comments):
        if "\n" in c:
            raise ParameterError(f"comment of row {i} holds a newline and cannot be written: {c!r}")
    return dataset.comments


def _format_rows(dataset, qids, comments, start, stop, sparse) -> list:
    """The text lines of rows ``start:stop``."""
    X = dataset.X[start:stop]  # (n_block, n_features)
    values = X.astype(str)  # (n_block, n_features) shortest float32 decimals
    values[np.isnan(X)] = "NULL"
    ids = np.char.add(np.arange(1, dataset.n_features + 1).astype(str), ":")  # (n_features,)
    tokens = np.char.add(ids, values)  # (n_block, n_features)
    keep = X.view(np.uint32) != 0  # (n_block, n_features) False only for +0.0
    lines = []
    for i in range(stop - start):
        row = tokens[i, keep[i]] if sparse else tokens[i]
        fields = [_format_label(dataset.y[start + i]), "qid:" + qids[start + i], *row.tolist()]
        if comments is not None:
            fields.append("#" + comments[start + i])
        lines.append(" ".join(fields))
    return lines


def _format_label(label: float) -> str:
    """Whole labels as integers (``2``), others as the shortest round-trip decimal."""
    return str(int(label)) if label.is_integer() and abs(label) < 2**53 else repr(float(label))


# ----------------------------------------------------------------------------- scores


def read_scores(path, n_rows: int | None = None) -> np.ndarray:
    """Read a score file: one number per line (blank lines skipped), plain or gzip.

    Returns float64 of shape (n_scores,). A token that is not a number, a line
    with more than one token, a NaN or infinite score, or (when ``n_rows`` is
    given) a count other than ``n_rows`` is a :class:`DataFormatError`.
    """
    path = os.fspath(path)
    numbers, tokens = [], []
    try:
        with _open_bytes(path) as f:
            for number, line in enumerate(f, 1):
                fields = line.split()
                if len(fields) > 1:
                    text = b" ".join(fields).decode(errors="replace")
                    raise DataFormatError(path, number, f"expected one score per line, got '{text}'", text)
                if fields:
                    numbers.append(number)
                    tokens.append(fields[0])
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(path, None, f"corrupt gzip data ({e})") from None
    numbers = np.array(numbers, dtype=np.int64)
    scores = _parse_floats(path, numbers, tokens, "score") if tokens else np.zeros(0)
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        text = tokens[bad[0]].decode()
        raise DataFormatError(path, int(numbers[bad[0]]), f"score '{text}' is not a finite number", text)
    if n_rows is not None and len(scores) != n_rows:
        raise DataFormatError(path, None, f"holds {len(scores)} scores but {n_rows} were expected")
    return scores


def write_scores(path, scores) -> None:
    """Write one score per line as the shortest decimal that reads back to the same float64, atomically.

    gzip if ``path`` ends in ``.gz``. ``read_scores(path)`` returns ``scores`` bit
    for bit. A NaN or infinite score is a :class:`ParameterError`.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ParameterError(f"scores must be 1-D, got shape {scores.shape}")
    if not np.isfinite(scores).all():
        raise ParameterError(f"score {np.flatnonzero(~np.isfinite(scores))[0]} is not finite; "
                             "read_scores would refuse the file")
    with atomic_output(path) as out:
        out.write("".join(f"{s!r}\n" for s in scores.tolist()).encode("ascii"))

r"""LETOR / SVMlight text files: data sets, group files and score files.

The format (Joachims' SVMlight, used by LETOR 3.0/4.0, MSLR-WEB, the Yahoo! LTR
challenge, RankLib, LightGBM and XGBoost) holds one document per line::

    <label> [qid:<query id>] <id>:<value> <id>:<value> ... [# comment]
    2 qid:10032 1:0.056537 2:0.000000 ... 46:0.076923 #docid = GX029-35-5894638

How :func:`read_letor` reads it (each rule a decision; nothing is silently
dropped or reordered, anything else is a :class:`DataFormatError` naming the
file, the 1-based line and the token):

* Lines are separated by ``\n``; a trailing ``\r`` (Windows) is whitespace. A file
  whose first 64 KiB hold a ``\r`` and no ``\n`` (classic Mac OS) has its lines
  separated by ``\r``. A UTF-8 byte order mark at the start is skipped; a UTF-16 or UTF-32 file
  (its byte order mark) is an error.
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
  is a NaN or infinite label, and a label above ``max_label`` (31 unless told: the
  exponential gain $2^l - 1$ of NDCG, ERR and LambdaRank is exact up to there, as
  XGBoost requires; ``None`` for regression targets). Values are parsed as float64,
  then rounded to float32.
* The width is ``n_features`` when given (an id beyond it is an error), else the
  largest id of the whole file, so pass the training width when reading validation and
  test files. Without ``n_features``, an id beyond ``max_features`` (65,536 unless told)
  is an error naming its line; it is checked block by block as the file is read, and
  blocks are held sparse or dense, whichever is smaller, until the whole file's width
  is known and the one matrix is allocated.
* Query boundaries come from the ``qid:`` column (rows of a query must be
  contiguous; query ids are compared as strings), from a group file, or from
  both, which must then agree. Either every row has a ``qid:`` or none has.
  Without either, the file is one query holding all rows (SVMlight's meaning of
  a file without qid: every pair of rows is comparable), and ``Dataset.has_queries``
  is False, so that ranking code can refuse it (``twinrank train`` and ``evaluate`` do).
* A group file (LightGBM's ``.query`` file) holds one positive integer per line,
  the sizes of consecutive queries, which must sum to the number of rows. With
  ``query_file=None`` it is found next to the data as LightGBM does:
  ``<path>.query``, or for ``<stem>.gz`` also ``<stem>.query`` and ``<stem>.query.gz``.
* A gzip file is recognised by its magic bytes, whatever its name. Every file is opened once
  and read as a stream, so a pipe, a FIFO or ``/dev/stdin`` will do; a line longer than 16 MiB
  (after decompression) is an error naming it, so ``/dev/zero`` or a gzip bomb stops there
  (``twinrank.reference._streams``).

:func:`write_letor` writes the same format so that reading the file back gives
the same data set bit for bit (``NULL`` for NaN, shortest float32 decimals).
Score files (:func:`read_scores`, :func:`write_scores`) and weight files (:func:`read_weights`,
LightGBM's ``<data>.weight``) hold one number per line; contribution
files (:func:`write_contributions`) one row of numbers per line.
Every writer is atomic: a temporary file in the target folder, then ``os.replace``.

Speed: each line is split once in Python; the ``id:value`` tokens of a block of
lines are parsed together by NumPy's C text reader (``numpy.loadtxt``), and only
a block that fails is walked token by token to name the bad one (so a file of
MSLR-WEB10K's size reads in well under a minute; ``benchmarks/speed.py`` times reading).

Layout: this module holds the public functions and the writers; the reader's
parts are private modules, below ``data`` so that :func:`twinrank.reference.io.data.load_mq2008`
reads its bundled files without importing this module: ``_letor_reader`` (a file to
arrays, block by block), ``_letor_tokens`` (bytes to numbers: gzip, floats, ``id:value``
tokens, each error naming its line and token) and ``_letor_queries`` (query
boundaries from the ``qid:`` column and group files).
"""
from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from twinrank.reference._streams import bounded_lines, open_input
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io._atomic import atomic_output
from twinrank.reference.io._letor_reader import (
    BLOCK_LINES as _BLOCK_LINES,
    MAX_FEATURES,
    MAX_LABEL,
    read_arrays,
)
from twinrank.reference.io._letor_tokens import parse_floats, shown
from twinrank.reference.io.data import Dataset

# ----------------------------------------------------------------------------- reading


def read_letor(path, *, n_features: int | None = None, query_file=None, zero_based: bool = False,
               max_features: int | None = MAX_FEATURES, max_label: float | None = MAX_LABEL) -> Dataset:
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
        Feature ids start at 0 instead of 1: id ``j`` is column ``j`` of ``X``. twinrank's
        names do not move: column ``j`` is ``f{j+1}`` whichever the file's base (``dump_tree``,
        ``twinrank inspect``, the LightGBM export), so a 0-based file's id 0 is ``f1``.
    max_features : int or None
        Without ``n_features``, the widest data accepted (default 65,536; None: no limit):
        an id beyond it is an error naming its line, raised while the file is read, before
        any matrix of that width exists. ``X`` takes 4 bytes per row and feature.
    max_label : float or None
        The largest label accepted (default 31, XGBoost's bound for the exponential gain
        $2^l - 1$; LightGBM's default gain table stops at 30); a label above it is an
        error naming its line. None accepts any finite label (regression targets).

    Returns
    -------
    Dataset
        ``X`` float32 (n_rows, n_features), NaN for ``NULL``; ``y`` float64;
        ``qids`` as read (None without a ``qid:`` column); ``comments``;
        ``has_queries`` (False without ``qid:`` and group file); ``n_features_in_file``,
        the largest feature id of the file (``X`` is wider when ``n_features`` is).
    """
    return Dataset(*read_arrays(path, n_features=n_features, query_file=query_file, zero_based=zero_based,
                                max_features=max_features, max_label=max_label))


# ----------------------------------------------------------------------------- writing


def write_letor(dataset: Dataset, path, *, sparse: bool = False) -> None:
    """Write ``dataset`` as ``label qid:Q 1:v 2:v ... #comment``, atomically; gzip if ``path`` ends in ``.gz``.

    ``read_letor(path, n_features=dataset.n_features, max_label=None)`` gives back the same data
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
        a comment holding a newline; rows with weights (``dataset.weight``), which a LETOR
        line has no field for: write the weights apart, one per line (LightGBM's
        ``<data>.weight`` file), and the rows with ``weight=None``.
    """
    if dataset.weight is not None:
        raise ParameterError("dataset.weight: a LETOR file has no weight column; write the weights apart, one per "
                             "line (LightGBM's <data>.weight), and the rows with weight=None")
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
    given) a count other than ``n_rows`` is a :class:`DataFormatError`; a file opening with
    ``{`` or ``[`` is named a model file (JSON). A message echoes at most 60 characters of a line.
    """
    path = os.fspath(path)
    _, scores = _one_number_a_line(path, "score", "as twinrank predict writes", n_rows)
    if n_rows is not None and len(scores) != n_rows:
        raise DataFormatError(path, None, f"holds {len(scores)} scores but {n_rows} were expected")
    return scores


def read_weights(path, n_rows: int, n_queries: int) -> np.ndarray:
    """Read a weight file (LightGBM's ``<data>.weight``): one number per line (blank lines skipped).

    Returns float64 of shape (n_rows,) or (n_queries,) as the file holds: one weight per row
    (LightGBM's convention), or one per query (XGBoost's for ranking), which
    :func:`~twinrank.reference.rankers._fit_data.row_weights` gives to each row of its query. A token
    that is not a number, a line with more than one token, a weight that is negative or not finite,
    another count, or weights that are all 0 are a :class:`DataFormatError` naming the file (and the line).
    """
    path = os.fspath(path)
    lines, weights = _one_number_a_line(path, "weight", "one per row or one per query", max(n_rows, n_queries))
    negative = np.flatnonzero(weights < 0)
    if len(negative):
        value = float(weights[negative[0]])
        raise DataFormatError(path, int(lines[negative[0]]), f"weight {value!r} is negative: a weight must be >= 0",
                              repr(value))
    if len(weights) not in (n_rows, n_queries):
        raise DataFormatError(path, None, f"holds {len(weights)} weights: give one per row ({n_rows}) or one "
                                          f"per query ({n_queries}) of the data")
    if not np.any(weights > 0):
        raise DataFormatError(path, None, "every weight is 0: nothing would be learned")
    return weights


def _one_number_a_line(path: str, what: str, written: str, most: int | None) -> tuple:
    """``(line numbers, float64 values)`` of a file of one finite number per line (blank lines
    skipped), read only until it holds more than ``most`` (the input may be a pipe that never
    ends); ``what`` names a number in the errors, ``written`` says how the file is made."""
    numbers, tokens = [], []
    try:
        with open_input(path) as f:
            for number, line in bounded_lines(path, f):
                fields = line.split()
                text = b" ".join(fields).decode(errors="replace")
                if not numbers and text.startswith(("{", "[")):
                    raise DataFormatError(path, number, f"'{shown(text)}' looks like a model file (JSON), not "
                                          f"a {what} file (one number per line, {written})", text)
                if len(fields) > 1:
                    raise DataFormatError(path, number, f"expected one {what} per line, got '{shown(text)}'", text)
                if fields:
                    numbers.append(number)
                    tokens.append(fields[0])
                if most is not None and len(tokens) > most:  # stop here: the input may not end
                    raise DataFormatError(path, number, f"holds more than the {most} {what}s expected")
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(path, None, f"corrupt gzip data ({e})") from None
    numbers = np.array(numbers, dtype=np.int64)
    values = parse_floats(path, numbers, tokens, what) if tokens else np.zeros(0)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        text = tokens[bad[0]].decode()
        raise DataFormatError(path, int(numbers[bad[0]]), f"{what} '{shown(text)}' is not a finite number", text)
    return numbers, values


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


def contribution_lines(contributions) -> str:
    """One line per row of the (n_rows, n_columns) matrix: its numbers as the shortest decimals that
    read back to the same float64, separated by spaces (``numpy.loadtxt`` reads it back bit for bit)."""
    contributions = np.asarray(contributions, dtype=np.float64)
    if contributions.ndim != 2:
        raise ParameterError(f"contributions must be 2-D (n_rows, n_features + 1), got shape {contributions.shape}")
    return "".join(" ".join(map(repr, row)) + "\n" for row in contributions.tolist())


def write_contributions(path, contributions) -> None:
    """Write :func:`contribution_lines` of ``contributions`` atomically (gzip if ``path`` ends in ``.gz``)."""
    with atomic_output(path) as out:
        out.write(contribution_lines(contributions).encode("ascii"))

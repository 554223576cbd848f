"""Bytes of LETOR files to numbers: floats and ``id:value`` tokens.

Each parser works on a block of lines at once with NumPy's C text reader
(``numpy.loadtxt``); only a block that fails is walked token by token, to raise a
:class:`DataFormatError` naming the file, the 1-based line and the bad token. The rules
are those of ``twinrank.reference.io.letor``'s module docstring.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from twinrank.reference.errors import DataFormatError

_PAIR = np.dtype([("id", np.int64), ("value", np.float64)])
_WHITESPACE_TO_NEWLINE = bytes.maketrans(b" \t\r\x0b\x0c", b"\n\n\n\n\n")  # what bytes.split() splits on
SHOWN = 60  # characters of an offending line or token an error message echoes


def shown(text: str) -> str:
    """``text`` as an error message echoes it: its first ``SHOWN`` characters, ``...`` if cut."""
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def parse_floats(path: str, numbers: np.ndarray, tokens: list, what: str) -> np.ndarray:
    """``tokens`` (one per line) as float64; the first token that is no number is an error."""
    try:
        return _floats(tokens)
    except ValueError:
        for number, token in zip(numbers, tokens):
            if not _is_float(token):
                text = token.decode(errors="replace")
                raise DataFormatError(path, int(number), f"{what} '{shown(text)}' is not a number", text) from None
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
    """Whether the reader of :func:`pairs` takes ``token`` as an int64 feature id."""
    try:
        np.loadtxt(io.BytesIO(token), dtype=np.int64, comments=None, ndmin=1)
        return True
    except ValueError:
        return False


@dataclass
class Tokens:
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
        raise DataFormatError(self.path, int(self.numbers[i]), f"{message} (token '{shown(text)}')", text)


def pairs(path: str, numbers: np.ndarray, features: list) -> tuple[np.ndarray, np.ndarray, Tokens]:
    """All ``id:value`` tokens of a block as (int64 ids, float64 values, their origin); ``NULL`` is NaN.

    Every token becomes one line of a ``:``-delimited text parsed at once; the
    reader demands exactly two fields per line, so each token holds exactly one
    ``:`` and the tokens of a line are as many as its colons.
    """
    counts = np.array([f.count(b":") for f in features], dtype=np.int64)  # (n_lines,)
    tokens = Tokens(path, numbers, features, np.repeat(np.arange(len(features)), counts))
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
                raise DataFormatError(path, int(number), f"{message} in token '{shown(text)}'", text)
    raise DataFormatError(path, int(numbers[0]), f"cannot parse lines {numbers[0]}-{numbers[-1]}")


def _token_problem(token: bytes) -> str | None:
    """What is wrong with one ``id:value`` token, or None, by the rules :func:`pairs` applies."""
    id_part, colon, value = token.partition(b":")
    if not colon:
        return "no ':' between feature id and value"
    if b":" in value:
        return "more than one ':'"
    if not id_part:
        return "empty feature id"
    if not _is_int(id_part):
        return f"feature id '{shown(id_part.decode(errors='replace'))}' is not an integer (int64)"
    if not value:
        return "empty feature value"
    if value != b"NULL" and not _is_float(value):
        return f"feature value '{shown(value.decode(errors='replace'))}' is not a number"
    return None


def check_ids(tokens: Tokens, ids: np.ndarray, base: int, n_features: int | None,
              max_features: int | None = None) -> np.ndarray:
    """Column of every token (``id - base``); ids must be in range and increase along each line.

    The range is ``n_features`` when given, else ``max_features`` (None: no limit): an id is
    refused here, in its block, before any matrix of its width is allocated.
    """
    cols = ids - base  # (n_tokens,)
    low = np.flatnonzero(cols < 0)
    if len(low):
        hint = ("ids are 1-based (pass zero_based=True, on the command line --zero-based, for 0-based files)"
                if base else "ids must be >= 0")
        tokens.error(low[0], f"feature id {ids[low[0]]} is below {base}: {hint}")
    if n_features is not None:
        high = np.flatnonzero(cols >= n_features)
        if len(high):
            tokens.error(high[0], f"feature id {ids[high[0]]} is beyond n_features={n_features}")
    elif max_features is not None:
        high = np.flatnonzero(cols >= max_features)
        if len(high):
            tokens.error(high[0], f"feature id {ids[high[0]]} makes the data wider than max_features="
                                  f"{max_features} (a dense float32 matrix of 4 bytes per row and feature); "
                                  "fix the id, or raise max_features (--max-features) if the data are that wide")
    same_line = tokens.line[1:] == tokens.line[:-1]  # (n_tokens - 1,)
    unordered = np.flatnonzero(same_line & (ids[1:] <= ids[:-1])) + 1
    if len(unordered):
        k = unordered[0]
        tokens.error(k, f"feature id {ids[k]} follows id {ids[k - 1]}: ids must increase strictly along a line")
    return cols


def check_values(tokens: Tokens, values: np.ndarray) -> np.ndarray:
    """Values rounded to float32; an infinite one, or one beyond float32's range, is an error."""
    with np.errstate(over="ignore"):
        values32 = values.astype(np.float32)  # (n_tokens,)
    bad = np.flatnonzero(np.isinf(values32))
    if len(bad):
        tokens.error(bad[0], "feature value is infinite or beyond the float32 range")
    return values32


def compact_block(tokens: Tokens, cols: np.ndarray, values: np.ndarray):
    """The block's tokens in the smaller of two forms, until the file's width is known.

    Dense: a float32 matrix (n_lines, largest column + 1), absent features 0.0, when it
    takes no more bytes than the sparse form; else sparse: ``(line, cols, values)``, the
    int32 line index within the block, int32 column and float32 value of every token
    (12 bytes per token; int64 columns beyond int32). So a block never takes much more
    memory than its text.
    """
    width = int(cols.max()) + 1 if len(cols) else 0
    if len(tokens.numbers) * width * 4 <= len(cols) * 12:
        block = np.zeros((len(tokens.numbers), width), dtype=np.float32)  # (n_lines, width)
        block[tokens.line, cols] = values
        return block
    return tokens.line.astype(np.int32), cols.astype(np.int32 if width <= 2**31 else np.int64), values

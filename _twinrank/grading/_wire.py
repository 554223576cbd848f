r"""What the grader and a student's process send each other: plain data, never pickle.

Grading one file is a conversation over two pipes: the grader sends the arguments of one call
of the student's function, the student's process answers with the value it returned (or what it
raised). A message is one JSON document after its length (8 bytes, big-endian). A value is
``None``, a bool, an int, a float (NaN and infinities included), a string, a NumPy array or scalar
of numbers, bools or strings (the bytes of a ``.npy`` file, base64), or a tuple, list or dict
(string keys) of values. Anything else (an object of the student's own class, an array of Python
objects) is :class:`Unsendable`.

The grader reads what a student's process wrote as untrusted data: at most :data:`MAX_MESSAGE`
bytes a message and :data:`MAX_DEPTH` levels of nesting, an array only when its header's shape
and type account for exactly the bytes that follow (``numpy.lib.format``'s header reader, then
``numpy.frombuffer``: no object arrays, no pickle, no allocation the message does not pay
for). Nothing either side receives can run code; a message that is not one this module writes
is a :class:`WireError`.
"""
from __future__ import annotations

import base64
import binascii
import io
import json
import math
import os
import select
import struct
import time

import numpy as np

MAX_MESSAGE = 64 * 2**20
"""The largest message (bytes) the grader reads: a student's answer is small."""
MAX_DEPTH = 32
"""The deepest nesting of tuples, lists and dicts in a value."""
_LENGTH = struct.Struct(">Q")


class WireError(ValueError):
    """A message that is not one this protocol sends (too long, not JSON, not a value)."""


class Unsendable(TypeError):
    """A value that is not plain data (see the module docstring)."""


def encode(value, depth: int = 0):
    """``value`` as a JSON-ready object; :class:`Unsendable` if it is not plain data."""
    if depth > MAX_DEPTH:
        raise Unsendable(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, (np.ndarray, np.generic)):  # before float: numpy.float64 is a float
        return {"scalar" if isinstance(value, np.generic) else "array": _npy(np.asarray(value))}
    if value is None:
        return None
    for kind in (bool, int, float, str):  # bool before int; a subclass (an IntEnum) as its base type
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {str(k): encode(v, depth + 1) for k, v in value.items()}}
    raise Unsendable(f"an object of type {type(value).__name__}")


def decode(message, depth: int = 0):
    """The value a JSON object of :func:`encode` stands for; :class:`WireError` if it stands for none."""
    if message is None or type(message) in (bool, int, float, str):
        return message
    if depth > MAX_DEPTH or type(message) is not dict or len(message) != 1:
        raise WireError("not a value")
    (kind, body), = message.items()
    if kind in ("array", "scalar") and type(body) is str:
        array = _array(body)
        return array[()] if kind == "scalar" else array
    if kind in ("tuple", "list") and type(body) is list:
        values = [decode(v, depth + 1) for v in body]
        return tuple(values) if kind == "tuple" else values
    if kind == "dict" and type(body) is dict:
        return {k: decode(v, depth + 1) for k, v in body.items()}
    raise WireError(f"not a value: {kind!r}")


def send(fd: int, message, seconds: float | None = None) -> None:
    """Write one message (a JSON-ready object) to the file descriptor ``fd``.

    On a non-blocking ``fd``, TimeoutError if the reader has not taken it all within ``seconds``.
    """
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    view = memoryview(_LENGTH.pack(len(data)) + data)
    end = None if seconds is None else time.monotonic() + seconds
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            left = None if end is None else max(0.0, end - time.monotonic())
            if not select.select([], [fd], [], left)[1]:
                raise TimeoutError("the reader does not read") from None


def receive(fd: int, limit: int = MAX_MESSAGE):
    """The next message read from ``fd``; None at the end of the stream (the writer closed or ended)."""
    head = _read(fd, _LENGTH.size)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    if length > limit:
        raise WireError(f"a message of {length} bytes (at most {limit})")
    data = _read(fd, length)
    if data is None:
        raise WireError("the stream ended inside a message")
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise WireError(f"not JSON: {e}") from None


def _read(fd: int, n: int) -> bytes | None:
    """Exactly ``n`` bytes of ``fd``; None if it ends before the first, WireError if it ends after."""
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 2**20))
        if not chunk:
            if got:
                raise WireError("the stream ended inside a message")
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _npy(array: np.ndarray) -> str:
    if array.dtype.hasobject:
        raise Unsendable("an array of Python objects")
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _array(text: str) -> np.ndarray:
    """The array of a base64 ``.npy`` file, checked before anything is allocated."""
    try:
        data = base64.b64decode(text, validate=True)
        stream = io.BytesIO(data)
        version = np.lib.format.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f".npy version {version}")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream)
    except (ValueError, TypeError, SyntaxError, binascii.Error) as e:
        raise WireError(f"not a .npy array: {e}") from None
    count, offset = math.prod(shape), stream.tell()
    if dtype.hasobject or (count and not dtype.itemsize) or count * dtype.itemsize != len(data) - offset:
        raise WireError(f"a .npy array of {shape} {dtype} in {len(data) - offset} bytes")
    array = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return array.reshape(shape, order="F" if fortran else "C").copy()

"""What a student's process sends the grader: plain data round-trips, and nothing else is read (no
pickle, no array the message does not pay for, no message beyond the size limit)."""
import base64
import io
import os
import struct

import numpy as np
import pytest

from twinrank.grading import _wire as wire

VALUES = [None, True, 3, -2**70, 0.1, float("nan"), float("-inf"), "exp2",
          np.arange(6, dtype=np.float32).reshape(2, 3), np.asfortranarray(np.eye(3)), np.zeros((0, 3)),
          np.array([True, False]), np.array(["a", "bc"]), np.array(2.5), np.uint8(255), np.float64("nan"),
          (1.0, 2, np.int64(7)), [np.ones(2), None], {"t": 1.5, "df": np.array([3])}, (None, (False,))]


def same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (np.ndarray, np.generic)):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return type(a) is type(b) and (a == b or bool(np.isnan(a)) and bool(np.isnan(b)))


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_plain_data_round_trips_through_a_pipe(value):
    read, write = os.pipe()
    try:
        wire.send(write, {"returned": wire.encode(value)})
        os.close(write)
        assert same(wire.decode(wire.receive(read)["returned"]), value)
        assert wire.receive(read) is None  # the end of the stream
    finally:
        os.close(read)


def nested(levels: int) -> list:
    value = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("value", [np.array([object()]), object(), {1: 2.0}, nested(wire.MAX_DEPTH + 2)],
                         ids=["object array", "object", "int keys", "too deep"])
def test_what_is_not_plain_data_is_unsendable(value):
    with pytest.raises(wire.Unsendable):
        wire.encode(value)


def npy_header(descr: str, shape: tuple) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.mark.parametrize("data", [
    npy_header("<f8", (10**12,)) + b"\0" * 8,  # a shape the bytes do not pay for: refused, nothing allocated
    npy_header("<f8", (2,)) + b"\0" * 24,  # more bytes than the shape
    npy_header("|O", (1,)) + b"\0" * 8,  # an object array: would need pickle
    b"PK\x03\x04" + b"\0" * 40,  # an .npz (zip) file
    b"\x80\x04\x95" + b"\0" * 20,  # a pickle
], ids=["huge shape", "extra bytes", "object dtype", "npz", "pickle"])
def test_an_array_is_read_only_when_its_header_accounts_for_its_bytes(data):
    with pytest.raises(wire.WireError):
        wire.decode({"array": base64.b64encode(data).decode()})


@pytest.mark.parametrize("message", [{"pickle": "gASV"}, {"array": 3}, {"tuple": [1], "list": [2]}, [1, 2],
                                     {"dict": [["k", 1]]}, {"array": "not base64!"}])
def test_a_message_that_is_not_a_value_is_refused(message):
    with pytest.raises(wire.WireError):
        wire.decode(message)


@pytest.mark.parametrize("stream", [struct.pack(">Q", wire.MAX_MESSAGE + 1) + b"{}",  # too long: not read
                                    struct.pack(">Q", 10) + b"{}",  # ends inside the message
                                    struct.pack(">Q", 3) + b"\x80\x04.",  # not JSON
                                    struct.pack(">Q", 200000) + b"[" * 100000 + b"]" * 100000,  # nested deeper
                                    # than Python's recursion
                                    b"\0\0\0"],  # ends inside the length
                         ids=["too long", "truncated", "not JSON", "deep", "short length"])
def test_a_stream_that_is_not_messages_is_refused(stream, tmp_path):
    (tmp_path / "stream").write_bytes(stream)
    fd = os.open(tmp_path / "stream", os.O_RDONLY)
    try:
        with pytest.raises(wire.WireError):
            wire.receive(fd)
    finally:
        os.close(fd)

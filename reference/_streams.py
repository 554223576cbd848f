"""Every input read once, as a stream, within bounds: plain or gzip, from a file, a pipe or a FIFO.

Each file twinrank reads (LETOR data, group files, score files, feature costs, model files,
LightGBM text models) is opened once and read from front to back: never reopened, never
sought, never measured first. So a pipe (``cat f | twinrank predict --data /dev/stdin``), a FIFO
and a process substitution (``--data <(zcat f.gz)``) are read whole, as a file is. gzip is
recognised by its first two bytes, which are read and then handed on (:func:`open_input`),
not read twice.

Nothing is read without a bound, so an endless input (``/dev/zero``, a pipe that never ends
a line) or a gzip bomb costs at most a limit's worth of memory before a clear error naming
the file, the line and the limit:

* a **line** of a text input (data, group, score, weight and costs files) holds at most
  ``MAX_LINE_BYTES`` (16 MiB) after decompression: a LETOR row of 16 MiB is a million
  ``id:value`` tokens, far beyond any data set. A data file itself may be as long as it
  likes: it is read line by line.
* a **document** read whole (a model file, a LightGBM text model) holds at most
  ``MAX_DOCUMENT_BYTES`` (2 GiB) after decompression: a twinrank model file takes 60-90 bytes
  per tree node, so 2 GiB are some 25 million nodes (10,000 trees of 1,250 leaves), and
  parsing that much JSON takes ten times as much memory.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os

from twinrank.reference.errors import DataFormatError

MAX_LINE_BYTES = 16 * 2**20  # the longest line of a text input, decompressed
MAX_DOCUMENT_BYTES = 2 * 2**30  # the largest model file or LightGBM text model, decompressed
GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 1 << 16  # what one read asks for


@contextlib.contextmanager
def open_input(path):
    """The file at ``path`` opened once for binary reading, decompressed if it starts with gzip's
    magic bytes; a buffered stream (``read``, ``readline``), closed on leaving the block."""
    raw = open(os.fspath(path), "rb", buffering=0)
    try:
        head = b""
        while len(head) < len(GZIP_MAGIC):  # a pipe may deliver the two bytes one at a time
            more = raw.read(len(GZIP_MAGIC) - len(head))
            if not more:
                break
            head += more
        stream = io.BufferedReader(_Prefixed(head, raw), buffer_size=CHUNK_BYTES)
        yield gzip.GzipFile(fileobj=stream, mode="rb") if head == GZIP_MAGIC else stream
    finally:
        raw.close()


class _Prefixed(io.RawIOBase):
    """A raw stream that returns ``head`` first, then the rest of ``raw``: the bytes read to sniff
    the format, handed back without seeking (a pipe cannot seek)."""

    def __init__(self, head: bytes, raw):
        super().__init__()
        self._head, self._raw = head, raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._raw.readinto(buffer)


def bounded_lines(path, stream):
    """``(number, line)`` of every ``\\n``-separated line of ``stream``, 1-based, without the ``\\n``;
    a line longer than ``MAX_LINE_BYTES`` is a DataFormatError naming its number, raised after
    reading at most one byte more of it."""
    limit, number = MAX_LINE_BYTES, 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if line.endswith(b"\n"):
            line = line[:-1]
        elif len(line) > limit:
            raise line_too_long(path, number, limit)
        yield number, line


def line_too_long(path, number: int, limit: int) -> DataFormatError:
    """The error of a line longer than ``limit``: the file, the line and the limit."""
    return DataFormatError(path, number, f"the line is longer than {size_text(limit)}, the longest line "
                                         "twinrank reads (is this a text file of one record per line?)")


def read_document(stream, limit: int, refuse, first: bytes = b"") -> bytearray:
    """``first`` (bytes already read) and the rest of ``stream``, whole; the error ``refuse(message)``
    makes is raised once that is more than ``limit`` bytes, after reading at most ``limit + 1``."""
    data = bytearray(first)
    while len(data) <= limit:
        chunk = stream.read(min(CHUNK_BYTES, limit + 1 - len(data)))
        if not chunk:
            return data
        data += chunk
    raise refuse(f"larger than {size_text(limit)} (decompressed), the largest file of this kind twinrank reads")


def size_text(n_bytes: int) -> str:
    """``16 MiB``, ``2 GiB`` or ``1,000 bytes``: a limit as an error message names it."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size and n_bytes % size == 0:
            return f"{n_bytes // size} {unit}"
    return f"{n_bytes:,} bytes"

"""Saying, on stderr, that numba is compiling the fast twin's kernels (a cold cache), and nothing when
the kernels load from the cache.

numba announces every compilation that misses its cache with a ``numba:compile``
event (a kernel loaded from the on-disk cache raises none), so a listener on it
knows exactly when a first run pays. The first compilation of a process opens
one line; each group of kernels (``tree``, ``lambdarank``, ``metrics``, ...) is
added when it is compiled, with its time::

    twinrank: compiling numba kernels, first run only (a cold `twinrank demo`, measured: 29 s of CPU, 2 processes, 15.7 s wall at load 1.5; cache: ~/.cache/twinrank/numba/kernels-2abca9715594a348): kernels 0.2 s, tree 3.6 s, binning 0.8 s, metrics 1.1 s, lambdarank 4.6 s, predict 2.4 s, tree (second process) 13.4 s, metrics 0.2 s

The figure in parentheses is :data:`MEASURED`: what ``benchmarks/cold_start.py`` measured last
(``benchmarks/cold_start.json``; a test keeps the two equal).

A line ends when the fit, prediction or ``metrics.evaluate`` that compiled ends
(:func:`session`), when
twinrank's own progress display writes, or, for a kernel called outside a fit, when
that kernel is compiled. A later compilation (say, the first ``predict`` after a
fit) opens a shorter line. When the kernels run uncached (no folder can be written), the
first line says so instead, naming each folder tried: ``twinrank: compiling numba kernels,
every run: no folder to cache them in can be written (...)``. The kernel cache's own notices
(a file removed, a full disk, waiting for another process) go through :meth:`CompileNotice.say`,
on lines of their own. The Python API prints the same, on ``sys.stderr``;
``TWINRANK_COMPILE_NOTICE=0`` silences all of it.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

from numba.core.event import Listener, register

from twinrank.fast.runtime import _numba_cache

# the best cold run of benchmarks/cold_start.json (its cold_min): CPU of both processes, and wall on 2 cores
# with the load it ran at (a busy machine's wall is mostly waiting for a core)
MEASURED = "a cold `twinrank demo`, measured: 17 s of CPU, 2 processes, 9.0 s wall at load 1.4-1.5 (8.4-10.6 s on the hosts and hours measured)"
FAST_TWIN = __package__.rsplit(".", 1)[0]  # twinrank.fast: the kernels of every folder of it
GROUPS = {"binning": "binning", "_grower": "tree", "_histogram": "tree", "_partition": "tree",
          "_split": "tree", "_lambdarank": "lambdarank", "objectives": "objectives",
          "_ranking": "metrics", "_graded_kernels": "metrics", "_binary_kernels": "metrics",
          "predict": "predict", "_quickscorer": "predict"}


class CompileNotice(Listener):
    """Writes the line; one instance per process (:data:`NOTICE`)."""

    def __init__(self, stream=None):
        self.stream = stream  # None: sys.stderr at the time of writing
        self.lock = threading.Lock()
        self.depth = 0  # nested compilations: a kernel compiles the kernels it calls
        self.sessions = 0  # open fits / predictions (``session``)
        self.said = False  # the process's first line was written
        self.open = False  # a line is open
        self.pending = None  # [group, seconds] compiled, not yet written (the next may add to it)
        self.written = 0  # groups written on the open line
        self.start = 0.0

    def on_start(self, event):
        if self.depth == 0 and not _ours(event):
            return
        if self.depth == 0:
            self.start = time.perf_counter()
            self._open()
        self.depth += 1

    def on_end(self, event):
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            self._add(GROUPS.get(_module(event), "kernels"), time.perf_counter() - self.start)

    def compiled_elsewhere(self, group: str, seconds: float):
        """``group`` was compiled by a helper process (``_warm``) that this one waited ``seconds`` for."""
        self._open()
        self._add(group, seconds)

    def _add(self, group: str, seconds: float):
        if self.pending and self.pending[0] == group:
            self.pending[1] += seconds
        else:
            self._flush()
            self.pending = [group, seconds]
        if self.sessions == 0:
            self.end_line()

    def _flush(self):
        """Write the pending group: ``tree 8.1 s``."""
        if self.pending:
            self._write(("," if self.written else "") + f" {self.pending[0]} {self.pending[1]:.1f} s")
            self.written += 1
            self.pending = None

    def _open(self):
        if self.open or not _enabled():
            return
        if self.said:
            self._write("twinrank: compiling numba kernels:")
        elif _numba_cache.FOLDER is None:
            self._write("twinrank: compiling numba kernels, every run: no folder to cache them in can be "
                        f"written ({_numba_cache.UNCACHED}):")
        else:
            self._write(f"twinrank: compiling numba kernels, first run only ({MEASURED}; "
                        f"cache: {_numba_cache.FOLDER}):")
        self.said = self.open = True
        self.written = 0

    def say(self, line: str):
        """Write ``line`` (a notice of the cache) on a line of its own; an open line goes on after it."""
        was_open = self.open
        self.end_line()
        self._write(line + "\n")
        if was_open:
            self._open()

    def end_line(self):
        """Close the open line, if any (before other output, or when the work that compiled ends)."""
        if self.open:
            self._flush()
            self.open = False
            self._write("\n")

    def _write(self, text: str):
        if not _enabled():
            return
        with self.lock:
            stream = self.stream or sys.stderr
            stream.write(text)
            stream.flush()


def _module(event) -> str:
    return event.data["dispatcher"].py_func.__module__.rsplit(".", 1)[-1]


def _ours(event) -> bool:
    return event.data["dispatcher"].py_func.__module__.startswith(FAST_TWIN + ".")


def _enabled() -> bool:
    return os.environ.get("TWINRANK_COMPILE_NOTICE", "1") != "0"


@contextlib.contextmanager
def session():
    """A fit or prediction: compilations inside it share one line, closed when it ends."""
    with NOTICE.lock:
        NOTICE.sessions += 1
    try:
        yield
    finally:
        with NOTICE.lock:
            NOTICE.sessions -= 1
            last = NOTICE.sessions == 0
        if last:
            NOTICE.end_line()


NOTICE = CompileNotice()
register("numba:compile", NOTICE)

r"""A student's file in a process of its own: a fresh interpreter, a folder of its own, limits, an end.

:class:`StudentProcess` (a context manager) writes the text of the student's file into a new
temporary folder that holds nothing else, and starts there, as the leader of a new session and
process group, ``python -I -u`` running :mod:`~twinrank.grading._worker`: isolated mode (no
``PYTHON*`` environment variables, no user site-packages, neither that folder nor the grader's
working directory on ``sys.path``, which is otherwise the grader's: the student imports the numpy and
twinrank the grader runs), unbuffered output, one thread for BLAS and numba, ``TMPDIR`` the
folder. The worker sets the memory limit before the student's code runs, imports the file and
answers the calls :meth:`StudentProcess.call` sends (:mod:`~twinrank.grading._wire`: plain data,
never pickle).

Every wait is bounded: ``import_seconds`` for the import, the ``seconds`` of each call, and
``file_seconds`` for the whole file. Past a limit, when the process ends, or when it answers
with something that is not an answer, the process is killed and :class:`Stopped` raised, its text
the reason for the student (a ``BaseException``: hypothesis does not shrink on it). Leaving the
context kills the whole process group (a child the student started too, unless it left the
group on purpose) and removes the folder. The first :data:`KEPT_BYTES` of standard output and
of standard error are kept (:meth:`StudentProcess.output`).

POSIX only (Linux, macOS): the conversation runs over inherited pipes and the process group is
a POSIX one. This keeps students from each other and from the grader; it is not a sandbox for
hostile code (the student's process can read and write what the grader's user can): run the
grading in a container for that (docs/course/index.md).
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from twinrank.grading import _wire as wire

KEPT_BYTES = 4000
"""Standard output and error kept of each student's process, each."""
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "from twinrank.grading._worker import main; main(sys.argv[2:])")
_LIVE: set = set()  # the processes running now, for stop_all
_LIVE_LOCK = threading.Lock()


class Stopped(BaseException):
    """The student's process cannot answer: too slow, ended, or garbled; ``str()`` says which, for the student."""


class ImportFailed(Exception):
    """The student's file cannot be imported (or defines no function of the exercise's name)."""


def stop_all() -> None:
    """Kill every student's process running now (the grader is interrupted)."""
    with _LIVE_LOCK:
        running = list(_LIVE)
    for student in running:
        student.kill()


class StudentProcess:
    """The function ``name`` of a student's file, ``source`` (its text), run in a process of its own.

    ``shown`` is the student's path, used in messages and tracebacks; ``memory_mb`` the address
    space the process may use (``RLIMIT_AS``, enforced on Linux only); ``turn`` a lock the caller
    of :meth:`call` holds, released while the call waits for the answer (None: no lock).
    """

    def __init__(self, source: str, shown, name: str, *, memory_mb: int, import_seconds: float,
                 file_seconds: float, turn=None):
        self.source, self.shown, self.name = source, str(shown), name
        self.memory_mb, self.import_seconds, self.file_seconds = memory_mb, import_seconds, file_seconds
        self.turn = turn

    def __enter__(self) -> StudentProcess:
        if os.name != "posix":
            raise OSError("grading runs each student in a process of its own, which needs Linux or macOS "
                          "(on Windows: WSL)")
        self.folder = tempfile.mkdtemp(prefix="twinrank-student-")
        copy = os.path.join(self.folder, f"{self.name}.py")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(self.source)
        to_student, self._inbox = os.pipe()
        self._answers, from_student = os.pipe()
        os.set_blocking(self._inbox, False)  # a call's arguments are sent within its time limit too
        paths = [os.path.abspath(p) for p in sys.path if p and os.path.abspath(p) != os.getcwd()]
        command = [sys.executable, "-I", "-u", "-c", _BOOT, json.dumps(paths), copy, self.shown, self.name,
                   str(to_student), str(from_student), str(self.memory_mb * 2**20)]
        env = {**os.environ, **dict.fromkeys(ONE_THREAD, "1"), "TMPDIR": self.folder}
        try:
            self.process = subprocess.Popen(command, cwd=self.folder, env=env, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            pass_fds=(to_student, from_student), start_new_session=True)
        except BaseException:
            os.close(self._inbox)
            os.close(self._answers)
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        finally:
            os.close(to_student)
            os.close(from_student)
        with _LIVE_LOCK:
            _LIVE.add(self)
        self.deadline = time.monotonic() + self.file_seconds
        self._replies: queue.Queue = queue.Queue()
        self._kept = [_Kept(self.process.stdout), _Kept(self.process.stderr)]
        self._threads = [_thread(self._read_answers)] + [_thread(kept.read) for kept in self._kept]
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
        self.process.wait()
        os.close(self._inbox)
        for thread in self._threads:  # each ends at the end of its pipe (a child that left the group may hold it)
            thread.join(timeout=1.0)
        if not self._threads[0].is_alive():
            os.close(self._answers)
        for kept, thread in zip(self._kept, self._threads[1:]):
            if not thread.is_alive():
                kept.pipe.close()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        shutil.rmtree(self.folder, ignore_errors=True)

    def load(self) -> None:
        """Wait for the import; ImportFailed (the reason, naming the file) if it fails, runs too long or ends."""
        try:
            reply = self._wait(self.import_seconds, f"it ran longer than {self.import_seconds:g} s "
                                                    "(an endless loop at import?)", "its process")
        except Stopped as e:
            raise ImportFailed(f"{self.shown} cannot be imported: {e}") from None
        if "import_error" in reply and isinstance(reply["import_error"], str):
            raise ImportFailed(reply["import_error"])
        if reply != {"ready": True}:
            self.kill()
            raise ImportFailed(f"{self.shown} cannot be imported: its process answered {_short(reply)}")

    def call(self, arguments: dict, seconds: float):
        """``(kind, value)`` of one call: ``("returned", value)``, ``("raised", "Type: message (line N)")``
        or ``("unsendable", what)``; Stopped when there is no answer."""
        too_slow = f"your function ran longer than {seconds:g} s on this input (an endless loop?)"
        try:
            wire.send(self._inbox, {"call": wire.encode(arguments)}, seconds=seconds)
        except TimeoutError:  # it does not read
            self.kill()
            raise Stopped(too_slow) from None
        except OSError:  # the process is gone: its end is the reason
            pass
        with _released(self.turn):
            reply = self._wait(seconds, too_slow, "your function's process")
        kind, value = next(iter(reply.items())) if len(reply) == 1 else (None, None)
        if kind == "returned":
            try:
                return kind, wire.decode(value)
            except wire.WireError as e:
                self.kill()
                raise Stopped(f"your function's process answered with something that is not a value "
                              f"({e})") from None
        if kind in ("raised", "unsendable") and isinstance(value, str):
            return kind, value
        self.kill()
        raise Stopped(f"your function's process answered {_short(reply)}, not a value")

    def output(self) -> tuple:
        """``(stdout, stderr)`` of the process so far, each cut to :data:`KEPT_BYTES`."""
        return tuple(kept.text() for kept in self._kept)

    def kill(self) -> None:
        """Kill the process group: the student's process and every child it started (SIGKILL)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # already gone
            pass

    def _wait(self, seconds: float, too_slow: str, who: str) -> dict:
        """The next answer; Stopped (``too_slow``, or what ``who`` did) when none comes in time."""
        left = self.deadline - time.monotonic()
        try:
            reply = self._replies.get(timeout=max(0.0, min(seconds, left)))
        except queue.Empty:
            self.kill()
            raise Stopped(too_slow if seconds <= left else f"grading this file took longer than "
                          f"{self.file_seconds:g} s in all (a slow function?)") from None
        if isinstance(reply, dict):
            return reply
        if reply is None:
            raise Stopped(f"{who} ended ({self._ended()}: os._exit, a crash, or the memory limit of "
                          f"{self.memory_mb} MiB?)")
        self.kill()
        raise Stopped(f"{who} answered with something that is not a message ({_short(reply)})")

    def _ended(self) -> str:
        try:
            code = self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:  # it closed its end of the conversation but runs on
            self.kill()
            return "it closed its answers"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    def _read_answers(self) -> None:
        """The answers of the process, in order, onto the queue; then None (its end) or the WireError."""
        try:
            while (message := wire.receive(self._answers)) is not None:
                self._replies.put(message)
        except wire.WireError as e:
            self._replies.put(e)
            return
        self._replies.put(None)


class _Kept:
    """The first KEPT_BYTES of a pipe, read to its end (the rest counted, not kept)."""

    def __init__(self, pipe):
        self.pipe, self.kept, self.total = pipe, b"", 0

    def read(self) -> None:
        while chunk := os.read(self.pipe.fileno(), 65536):
            self.total += len(chunk)
            if len(self.kept) < KEPT_BYTES:
                self.kept += chunk[:KEPT_BYTES - len(self.kept)]

    def text(self) -> str:
        cut = f"\n[... {self.total - len(self.kept)} more bytes]" if self.total > len(self.kept) else ""
        return self.kept.decode("utf-8", errors="replace") + cut


@contextlib.contextmanager
def _released(lock):
    """Release ``lock`` (held by this thread) for the block, then take it again."""
    if lock is None:
        yield
        return
    lock.release()
    try:
        yield
    finally:
        lock.acquire()


def _thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _short(reply) -> str:
    text = str(reply) if isinstance(reply, wire.WireError) else repr(reply)
    return text if len(text) <= 200 else text[:200] + "..."

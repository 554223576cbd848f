"""One compilation at a time across processes: the others wait for it, then load its kernels from the cache.

Four cold starts at once used to compile everything four times over (eight compilers, with
their helpers, on two cores: each run four times slower). A process that misses the cache
takes an exclusive lock on ``compile.lock`` in the kernels folder (``flock``) before it
compiles, and looks in the cache again once it has it: what another process compiled
meanwhile, it loads. A process that finds the lock taken says so once (naming the process
that holds it), and waits. The lock is held while one kernel compiles (with the kernels it
calls) and is saved, and for the whole life of a fit's compile helper
(``twinrank.fast.trees._warm``), which compiles into the same folder on its parent's lock: the
helper is started with ``TWINRANK_COMPILE_LOCK_HOLDER`` set to its parent's process id, and a
process whose parent holds the lock for it does not take it. Reentrant within a process; the
system releases it when the process ends, however it ends. Where ``flock`` is missing (not
POSIX) or fails (some network file systems), nothing is locked: the cache stays correct
(each file is written whole and renamed into place), only compiled more than once.

A kernel one process compiles for another (the grower's split search, which a fit's process
compiles while its helper compiles the rest of the grower) is *promised*: the compiling process
holds a lock file of its own (:func:`promised`) until the kernel is saved, and the other one,
before it looks for the kernel in the cache, waits for that lock (:func:`wait_for_promise`):
it loads the kernel instead of compiling it a second time.
"""
from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from twinrank.fast.runtime._compile_notice import NOTICE

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

HOLDER = "TWINRANK_COMPILE_LOCK_HOLDER"  # set for the compile helper: its parent's pid, who holds the lock


class CompileLock:
    """The lock of this process (:data:`LOCK`): :meth:`acquire` and :meth:`release` in pairs."""

    def __init__(self):
        self.guard = threading.Lock()
        self.holds = 0  # acquisitions not yet released
        self.descriptor: int | None = None  # the locked file while the system lock is held
        self.said = False  # the waiting notice was given

    def acquire(self, folder: Path) -> None:
        """Hold the lock of ``folder`` (the kernels' folder), waiting for the process that holds it."""
        with self.guard:
            if self.holds == 0 and fcntl is not None and os.environ.get(HOLDER) != str(os.getppid()):
                self.descriptor = self._take(folder)
            self.holds += 1

    def release(self) -> None:
        with self.guard:
            self.holds -= 1
            if self.holds == 0 and self.descriptor is not None:
                os.close(self.descriptor)  # releases the lock
                self.descriptor = None

    def _take(self, folder: Path) -> int | None:
        """The descriptor of ``folder/compile.lock``, locked; None if it cannot be locked."""
        try:
            descriptor = os.open(folder / "compile.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                                 0o600)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not self.said:
                    self.said = True
                    holder = os.pread(descriptor, 20, 0).decode("ascii", "replace").strip()
                    NOTICE.say(f"twinrank: another process{f' (pid {holder})' if holder else ''} is compiling "
                               f"kernels into {folder}; waiting for it, then loading them from the cache")
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, str(os.getpid()).encode(), 0)
            return descriptor
        except OSError:
            with contextlib.suppress(OSError):
                os.close(descriptor)
            return None
        except BaseException:  # Ctrl-C while waiting
            os.close(descriptor)
            raise


LOCK = CompileLock()


@contextlib.contextmanager
def promised(folder: Path, name: str):
    """Hold the lock file ``folder/name`` while the block compiles a kernel another process waits for
    (:func:`wait_for_promise`); nothing is held where it cannot be locked (the other compiles it too)."""
    descriptor = None
    if fcntl is not None:
        try:
            descriptor = os.open(folder / name, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if descriptor is not None:
                os.close(descriptor)
            descriptor = None
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)  # releases the lock


def wait_for_promise(folder: Path, name: str) -> None:
    """Return once no process holds the lock file ``folder/name`` (:func:`promised`): at once if none does,
    or it cannot be read."""
    if fcntl is None:
        return
    try:
        descriptor = os.open(folder / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(descriptor, fcntl.LOCK_SH)
    finally:
        os.close(descriptor)

"""Atomic file output: readers see the old file or the complete new one, never a partial one.

The new content goes to a temporary file beside the target, then ``os.replace`` puts it in
place. The file keeps the permissions of the one it replaces (a 0600 model stays 0600); a new
file gets a new file's, 0666 less the umask. The temporary file is named after the target so that a user who finds one knows
what it is: ``.model.json.twinrank-tmp-<host>-<pid>-<random>``. A process killed while
writing (``kill -9``, a power cut) leaves it behind; the next write of the same target
from the same host removes the ones whose process is gone.
"""
from __future__ import annotations

import contextlib
import gzip
import os
import socket
import stat
import tempfile

TMP_MARK = ".twinrank-tmp-"


@contextlib.contextmanager
def atomic_output(path):
    """A binary file that replaces ``path`` only once fully written (gzip if ``path`` ends in ``.gz``)."""
    path = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(path))
    prefix = f".{name}{TMP_MARK}{_host()}-"
    remove_stale(folder, prefix)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", dir=folder)
    except OSError as e:  # name the user's file, not the temporary one
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}", path) from None
    try:
        os.chmod(tmp, _mode_of(path))  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as out:
                    yield out
            else:
                yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stale(folder: str, prefix: str) -> None:
    """Remove the temporary files ``<prefix><pid>-*`` in ``folder`` whose process no longer runs.

    POSIX only: on Windows, ``os.kill(pid, 0)`` would end the process, so nothing is removed.
    """
    if os.name != "posix":
        return
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _host() -> str:
    """This host's name, without characters that would break the file name."""
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname()) or "host"


def _mode_of(path: str) -> int:
    """The permissions of the file written at ``path``: those of the file it replaces (a 0600 model
    stays 0600), else a new file's, 0666 less the umask, as ``open`` gives them."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode) & 0o777
    except OSError:  # no file there yet
        return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

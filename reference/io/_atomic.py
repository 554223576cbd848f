"""Atomic file output: readers see the old file or the complete new one, never a partial one.

The new content goes to a temporary file beside the target, then ``os.replace`` puts it in
place. The file keeps the permissions of the one it replaces (a 0600 model stays 0600); a
new file gets a new file's, 0666 less the umask. The temporary file is named after the
target so that a user who finds one knows what it is:
``.model.json.twinrank-tmp-<host>-<pid>-<random>``. A process killed while writing
(``kill -9``, a power cut) leaves it behind; the next write of the same target from the
same host removes the ones whose process is gone.

A folder of files (:func:`atomic_folder`) is written the same way: filled as a temporary
sibling folder, then renamed into place, so it is complete or absent, never a mix of two
runs' files. It never replaces a folder that holds anything.
"""
from __future__ import annotations

import contextlib
import errno
import gzip
import os
import shutil
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


@contextlib.contextmanager
def atomic_folder(path):
    """A folder that appears at ``path`` only once complete: yields the path of a temporary
    sibling folder to write the files in; they are flushed to disk and the folder renamed to
    ``path``. ``path`` must not exist or be an empty folder: a folder holding anything is refused
    (``OSError`` ``ENOTEMPTY``), never replaced or mixed into. On any error (a full disk) the
    temporary folder is removed and nothing appears at ``path``."""
    path = os.fspath(path)
    parent, name = os.path.split(os.path.abspath(path))
    prefix = f".{name}{TMP_MARK}{_host()}-"
    remove_stale(parent, prefix)
    refuse_filled_folder(path)
    try:
        tmp = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent)
    except OSError as e:
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}", path) from None
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; a new folder's permissions
        yield tmp
        for file in os.listdir(tmp):
            _fsync(os.path.join(tmp, file), os.O_RDONLY)
        _fsync(tmp, os.O_RDONLY | os.O_DIRECTORY)
        os.rename(tmp, path)  # replaces an empty folder; a filled one (made meanwhile) raises ENOTEMPTY
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def refuse_filled_folder(path: str) -> None:
    """``OSError`` (``ENOTEMPTY``, naming ``path``) if ``path`` is a folder holding anything, or a file."""
    if os.path.isdir(path) and os.listdir(path):
        raise OSError(errno.ENOTEMPTY, "the folder exists and holds files; a save never goes over or "
                                       "into another: give a new folder, or remove this one", path)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OSError(errno.EEXIST, "is a file, not a folder", path)


def _fsync(path: str, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale(folder: str, prefix: str) -> None:
    """Remove the temporary files (and folders) ``<prefix><pid>-*`` in ``folder`` whose process no
    longer runs.

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
            stale = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                shutil.rmtree(stale) if os.path.isdir(stale) and not os.path.islink(stale) else os.unlink(stale)


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

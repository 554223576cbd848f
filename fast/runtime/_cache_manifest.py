"""The SHA-256 of every kernel cache file twinrank wrote, checked before numba reads a byte of it.

numba's cache files are pickles: an index (``.nbi``) is unpickled to find a kernel, a data
file (``.nbc``) to load its machine code, which then runs. An empty or truncated file made
every run crash until the folder was deleted by hand, a flipped byte crashed the process or
silently changed a model, and a pickle planted in an index ran code. So every file twinrank
writes in its kernels folder is recorded in the folder's ``manifest.sha256`` (``sha256sum``'s
format, one ``<digest>  <path>`` a line), and numba gets a file's bytes only if they are the
bytes twinrank wrote: read once, hashed, compared, and only then unpickled, so nothing can
change between the check and the use. A file that is not recorded, differs from its record,
cannot be read, or is not a private file of this user (owned by the user, writable by nobody
else; the manifest too) is removed, and its kernels compile again: one notice a process.
A write goes to a private (0600) temporary file renamed into place, and is recorded in the
same step, under a short lock (``manifest.lock``), so that writers at once (a fit and its
compile helper) keep the manifest and the files in step.

What this protects against, and what it cannot: docs/reliability.md, "The kernel cache".
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import uuid
from pathlib import Path

from twinrank.fast.runtime._compile_notice import NOTICE
from twinrank.fast.runtime._numba_cache import own

try:
    import fcntl
except ImportError:  # not POSIX: no lock (the writes stay atomic)
    fcntl = None

MANIFEST = "manifest.sha256"
LINE = re.compile(r"([0-9a-f]{64})  (\S.*)")
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Manifest:
    """The record of the files twinrank wrote in one kernels ``folder``, and the only way
    numba's cache reads or writes them (:mod:`._kernel_cache`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.digests: dict[str, str] | None = None  # the manifest as last read (None: not yet)
        self.said = False  # the notice of a removed file was given

    def read(self, path: str) -> bytes | None:
        """The bytes of ``path`` if they are the bytes twinrank wrote there; else None (no such file,
        or it was removed)."""
        name = self._name(path)
        data = _read_own(path)
        if data is not None and self._recorded(name) == _sha256(data):
            return data
        if data is None and not os.path.lexists(path):
            return None
        with self._locked():  # a writer may have replaced it since the manifest was read: look again
            self.digests = self._load()
            data = _read_own(path)
            if data is not None and self.digests.get(name) == _sha256(data):
                return data
            _remove(path)
        self._say(path)
        return None

    def write(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` (a private file renamed into place) and record it."""
        name = self._name(path)
        with self._locked():
            digests = self._load()
            _write_private(path, data)
            digests[name] = _sha256(data)
            try:
                _write_private(str(self.folder / MANIFEST),
                               "".join(f"{digest}  {key}\n" for key, digest in sorted(digests.items())).encode())
            except OSError:
                _remove(path)  # unrecorded, it would be removed as foreign on its next read
                raise
            self.digests = digests

    def _recorded(self, name: str) -> str | None:
        if self.digests is None:
            self.digests = self._load()
        return self.digests.get(name)

    def _load(self) -> dict[str, str]:
        """The manifest's records; none if it is missing, unreadable or not this user's own file."""
        data = _read_own(str(self.folder / MANIFEST)) or b""
        records = (LINE.fullmatch(line) for line in data.decode("utf-8", "replace").splitlines())
        return {match[2]: match[1] for match in records if match}

    def _name(self, path: str) -> str:
        return Path(path).relative_to(self.folder).as_posix()

    @contextlib.contextmanager
    def _locked(self):
        """An exclusive lock on ``manifest.lock`` (none where it cannot be had: the writes stay atomic)."""
        try:
            descriptor = os.open(self.folder / "manifest.lock", os.O_RDWR | os.O_CREAT | NO_FOLLOW, 0o600)
        except OSError:
            yield
            return
        try:
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def _say(self, path: str) -> None:
        if not self.said:
            self.said = True
            NOTICE.say(f"twinrank: removed {path} from the kernel cache: it is not the file twinrank "
                       "wrote there (damaged, or written by something else); its kernels compile again")


def _read_own(path: str) -> bytes | None:
    """The bytes of ``path`` if it is a regular file owned by this user that nobody else can write
    (a link is not followed, a pipe not waited for); None otherwise, or if it cannot be read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | NO_FOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode) or not own(found, private=True):
            return None
        chunks = []
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _write_private(path: str, data: bytes) -> None:
    """Write ``data`` to a new 0600 file beside ``path`` and rename it over ``path``."""
    temporary = f"{path}.tmp-{uuid.uuid4().hex[:16]}"
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW, 0o600)
        with open(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _remove(path: str) -> None:
    """Remove what is at ``path`` (a file, a link, a folder), as far as it can be removed."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

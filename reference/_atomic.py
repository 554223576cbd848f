"""Atomic file output: readers see the old file or the complete new one, never a partial one."""
from __future__ import annotations

import contextlib
import gzip
import os
import tempfile


@contextlib.contextmanager
def atomic_output(path):
    """A binary file that replaces ``path`` only once fully written (gzip if ``path`` ends in ``.gz``)."""
    path = os.fspath(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(os.path.abspath(path)))
    except OSError as e:  # name the user's file, not the temporary one
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}", path) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
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


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

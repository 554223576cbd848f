"""Where numba keeps the fast twin's compiled kernels: beside the sources, or a per-user directory.

numba caches a ``cache=True`` kernel in the ``__pycache__`` folder beside its source
file. A read-only install (a system ``site-packages``, a container image, a shared
checkout) cannot write there, and numba then falls back to a directory of its own
choosing, without a word. :func:`choose` makes the choice explicit, before numba is
imported by twinrank (``twinrank.fast`` calls it on import):

1. ``NUMBA_CACHE_DIR`` set by the user: used as it is;
2. else, if ``fast/__pycache__`` can be written: numba's default, beside the sources;
3. else ``$XDG_CACHE_HOME/twinrank/numba`` (``~/.cache/twinrank/numba`` without
   ``XDG_CACHE_HOME``), set as ``NUMBA_CACHE_DIR``.

A per-user directory is safe to share between concurrent processes: numba writes
each cache file under a temporary name and renames it into place. ``NUMBA_CACHE_DIR``
applies to every numba function of the process, not only twinrank's.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def choose(package_dir: Path = PACKAGE_DIR) -> str:
    """Set ``NUMBA_CACHE_DIR`` if the kernels cannot be cached beside ``package_dir``; return
    the directory the cache lives in (for messages)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    beside = package_dir / "__pycache__"
    if _writable(beside):
        return str(beside)
    directory = user_cache_dir()
    os.environ["NUMBA_CACHE_DIR"] = directory
    if "numba" in sys.modules:  # numba read its configuration already: tell it too
        sys.modules["numba"].config.CACHE_DIR = directory
    return directory


def location() -> str:
    """The directory numba caches the kernels in, as :func:`choose` left it."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(PACKAGE_DIR / "__pycache__")


def user_cache_dir() -> str:
    """``$XDG_CACHE_HOME/twinrank/numba``, or ``~/.cache/twinrank/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "twinrank", "numba")


def _writable(directory: Path) -> bool:
    """Whether a file can be created in ``directory`` (made if missing), as numba would.

    Tried, not asked (``os.access``): root passes every permission check, and a
    read-only mount or a file in the folder's place fails only when written.
    """
    try:
        directory.mkdir(exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False

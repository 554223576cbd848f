"""Where numba keeps the fast twin's compiled kernels: a folder named by the sources they came from.

numba caches a ``cache=True`` kernel keyed by the text of the file that defines it,
and nothing else. A kernel compiles its callees and the constants it reads from other
files (``reference/constants.py``, ``_histogram.py`` for the grower) into its own
machine code, so after an edit of such a file, a ``git pull`` or an upgrade, numba
would load the old machine code of every kernel whose own file did not change:
stale kernels, silently (seen: ``MISSING_BIN`` changed in ``reference/constants.py``,
``apply_bins`` still wrote the old value). :func:`choose` therefore caches in a folder
named by a hash of every source file of both twins, ``kernels-<16 hex digits>``, and
removes the folders of other versions beside it; it runs before numba is imported by
twinrank (``twinrank.fast`` calls it on import). The folder lives:

1. where ``NUMBA_CACHE_DIR`` says, if the user set it (used as it is: then keeping it
   fresh is the user's part);
2. else in ``fast/__pycache__`` if that can be written;
3. else in ``$XDG_CACHE_HOME/twinrank/numba`` (``~/.cache/twinrank/numba`` without
   ``XDG_CACHE_HOME``).

In cases 2 and 3 it is set as ``NUMBA_CACHE_DIR``, which applies to every numba
function of the process, not only twinrank's (and to the processes it starts). A
per-user directory is safe to share between concurrent processes: numba writes each
cache file under a temporary name and renames it into place.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the fast twin's folder (this module is in its runtime/)
TWINS = ("fast", "reference")  # the folders (siblings of PACKAGE_DIR) whose sources the kernels compile from
KEYED = re.compile(r"kernels-[0-9a-f]{16}")


def choose(package_dir: Path = PACKAGE_DIR) -> str:
    """Set ``NUMBA_CACHE_DIR`` to the kernels' folder for the sources beside ``package_dir``, unless
    the user set it; return the directory the cache lives in (for messages)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    beside = package_dir / "__pycache__"
    base = beside if _writable(beside) else Path(user_cache_dir())
    directory = base / f"kernels-{sources_key(package_dir)}"
    _remove_other_versions(base, keep=directory.name)
    os.environ["NUMBA_CACHE_DIR"] = str(directory)
    if "numba" in sys.modules:  # numba read its configuration already: tell it too
        sys.modules["numba"].config.CACHE_DIR = str(directory)
    return str(directory)


def sources_key(package_dir: Path) -> str:
    """16 hex digits of the SHA-256 of every ``*.py`` file of the twins beside ``package_dir``, in their
    sub-folders too (their paths relative to the parent folder and their bytes, in sorted order)."""
    root = package_dir.parent
    digest = hashlib.sha256()
    for twin in TWINS:
        for path in sorted((root / twin).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def location() -> str:
    """The directory numba caches the kernels in, as :func:`choose` left it."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(PACKAGE_DIR / "__pycache__")


def user_cache_dir() -> str:
    """``$XDG_CACHE_HOME/twinrank/numba``, or ``~/.cache/twinrank/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "twinrank", "numba")


def _remove_other_versions(base: Path, keep: str) -> None:
    """Remove the kernels of other versions of the sources in ``base``, and the unkeyed cache files
    of twinrank before this scheme (``*.nbi``, ``*.nbc`` right in ``base``). Best effort: a
    folder another process still reads is only recompiled there."""
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.is_dir() and KEYED.fullmatch(entry.name) and entry.name != keep:
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.is_file() and entry.suffix in (".nbi", ".nbc"):
            entry.unlink(missing_ok=True)


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

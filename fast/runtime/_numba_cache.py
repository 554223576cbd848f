"""Where the fast twin's compiled kernels are cached: a private folder named by the sources they came from.

numba caches a ``cache=True`` kernel keyed by the text of the file that defines it,
and nothing else. A kernel compiles its callees and the constants it reads from other
files (``reference/constants.py``, ``_histogram.py`` for the grower) into its own
machine code, so after an edit of such a file, a ``git pull`` or an upgrade, numba
would load the old machine code of every kernel whose own file did not change:
stale kernels, silently (seen: ``MISSING_BIN`` changed in ``reference/constants.py``,
``apply_bins`` still wrote the old value). :func:`choose` therefore caches in a folder
named by a hash of every source file of both twins, ``kernels-<16 hex digits>``, in the
first of these places that can hold it:

1. ``$NUMBA_CACHE_DIR/kernels-<key>`` if the user set ``NUMBA_CACHE_DIR``, and only there
   (a folder the user named that cannot be written is said, not replaced by another);
2. else ``fast/__pycache__/kernels-<key>``, beside the sources;
3. else ``$XDG_CACHE_HOME/twinrank/numba/kernels-<key>`` (``~/.cache/twinrank/numba``).

A place holds the folder when the folder is, or can be made, a real directory (not a
link) owned by this user, private (0700; a wider mode of this user's folder is narrowed),
in which a file can be created. A folder owned by someone else is never used. When no
place holds it, :data:`FOLDER` is None and the kernels run uncached: each process compiles
what it uses, and the compile notice says so once, naming each folder tried and what was
wrong (:data:`UNCACHED`). The folders of other versions of the sources in the chosen
place (``kernels-<other key>``, this user's) are removed, and in places 2 and 3 the unkeyed
cache files of twinrank before this scheme.

What is inside the folder is checked file by file before numba reads it
(:mod:`._cache_manifest`), and numba's cache of twinrank's kernels is the project's own
(:mod:`._kernel_cache`): numba's settings for its own cache, ``NUMBA_CACHE_DIR`` included,
are read here and not changed, so other numba code of the process caches where it did.
Nothing here imports numba: ``twinrank.fast`` calls :func:`choose` on import, before any
kernel module is imported.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the fast twin's folder (this module is in its runtime/)
TWINS = ("fast", "reference")  # the folders (siblings of PACKAGE_DIR) whose sources the kernels compile from
KEYED = re.compile(r"kernels-[0-9a-f]{16}")
FOLDER: Path | None = None  # the kernels' folder of this process (:func:`choose`); None: uncached
UNCACHED = ""  # when FOLDER is None: each folder tried and what was wrong with it


def choose(package_dir: Path = PACKAGE_DIR) -> str | None:
    """Set :data:`FOLDER` (and :data:`UNCACHED`) by :func:`find`; return the folder, or None."""
    global FOLDER, UNCACHED
    FOLDER, UNCACHED = find(package_dir)
    return None if FOLDER is None else str(FOLDER)


def find(package_dir: Path) -> tuple[Path | None, str]:
    """The kernels' folder for the sources beside ``package_dir``, made private and ready, in the
    first place that can hold it, and ``""``; or None and each folder tried with what was wrong."""
    key = sources_key(package_dir)
    users = os.environ.get("NUMBA_CACHE_DIR")
    places = [Path(users)] if users else [package_dir / "__pycache__", Path(user_cache_dir())]
    problems = []
    for place in places:
        folder = place / f"kernels-{key}"
        problem = _prepare(folder)
        if problem is None:
            _remove_other_versions(place, keep=folder.name, unkeyed=not users)
            return folder, ""
        problems.append(f"{folder}: {problem}")
    return None, "; ".join(problems)


def sources_key(package_dir: Path) -> str:
    """16 hex digits of the SHA-256 of every ``*.py`` file of the twins beside ``package_dir``, in their
    sub-folders too (their paths relative to the parent folder and their bytes, in sorted order)."""
    root = package_dir.parent
    digest = hashlib.sha256()
    for twin in TWINS:
        for path in sorted((root / twin).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def user_cache_dir() -> str:
    """``$XDG_CACHE_HOME/twinrank/numba``, or ``~/.cache/twinrank/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "twinrank", "numba")


def own(found: os.stat_result, private: bool = False) -> bool:
    """Whether ``found`` (a ``stat``) is this user's and, if ``private``, writable by nobody else
    (POSIX: elsewhere the system's access lists decide, and every file passes)."""
    if os.name != "posix":
        return True
    return found.st_uid == os.geteuid() and not (private and found.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _prepare(folder: Path) -> str | None:
    """Make ``folder`` a private folder of this user in which a file can be created, as the cache
    needs it; None, or what is wrong (a sentence).

    Tried, not asked (``os.access``): root passes every permission check, and a
    read-only mount, a full disk or a file in the folder's place fails only when written.
    """
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode):
            return "not a folder (a file or a link is in its place)"
        if not own(found):
            return f"owned by another user (uid {found.st_uid}), so not used"
        if stat.S_IMODE(found.st_mode) != 0o700:
            os.chmod(folder, 0o700)
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as error:
        return error.strerror or str(error)


def _remove_other_versions(place: Path, keep: str, unkeyed: bool) -> None:
    """Remove this user's kernels of other versions of the sources in ``place`` and, if ``unkeyed``
    (twinrank's own places), the unkeyed cache files of twinrank before this scheme (``*.nbi``,
    ``*.nbc`` right in ``place``). Best effort: a folder another process still reads is only
    recompiled there."""
    try:
        entries = list(place.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            found = entry.lstat()
        except OSError:
            continue
        if not own(found):
            continue
        if stat.S_ISDIR(found.st_mode) and KEYED.fullmatch(entry.name) and entry.name != keep:
            shutil.rmtree(entry, ignore_errors=True)
        elif unkeyed and stat.S_ISREG(found.st_mode) and entry.suffix in (".nbi", ".nbc"):
            entry.unlink(missing_ok=True)

"""The first run says it compiles, once; a warm cache says nothing; the kernels
cache even when the package folder cannot be written, and never outlive the sources they came from.

Each test runs a fresh Python process on the smallest kernel there is
(``objectives.squared_error``, well under a second to compile), with its own
empty numba cache. No timing is asserted (``benchmarks/cold_start.py`` times).
"""
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from twinrank.fast.runtime import _numba_cache

SMALLEST = "from twinrank.fast.losses import objectives; objectives.squared_error([1.0, 2.0], [0.5, 0.5])"
NOTICE = "twinrank: compiling numba kernels, first run only"


def run(code: str, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "TWINRANK_COMPILE_NOTICE")}
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=environment)


def test_a_cold_run_says_it_compiles_once_and_a_warm_run_says_nothing(tmp_path):
    cold = run(SMALLEST, NUMBA_CACHE_DIR=str(tmp_path))
    assert cold.stderr.count(NOTICE) == 1, cold.stderr
    assert "objectives" in cold.stderr and str(tmp_path) in cold.stderr  # the group, where it caches
    warm = run(SMALLEST, NUMBA_CACHE_DIR=str(tmp_path))
    assert "compiling" not in warm.stderr, warm.stderr


def test_the_notice_can_be_silenced(tmp_path):
    quiet = run(SMALLEST, NUMBA_CACHE_DIR=str(tmp_path), TWINRANK_COMPILE_NOTICE="0")
    assert "compiling" not in quiet.stderr


def test_the_cache_dir_honours_the_users_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert _numba_cache.choose(tmp_path) == str(tmp_path / "mine")


def test_the_cache_stays_beside_a_writable_package(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    key = _numba_cache.sources_key(tmp_path)
    assert _numba_cache.choose(tmp_path) == str(tmp_path / "__pycache__" / f"kernels-{key}")
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "__pycache__" / f"kernels-{key}")


def test_an_unwritable_package_caches_per_user(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "__pycache__").write_text("a file where the folder would be")  # unwritable, even for root
    expected = str(tmp_path / "xdg" / "twinrank" / "numba" / f"kernels-{_numba_cache.sources_key(tmp_path)}")
    assert _numba_cache.choose(tmp_path) == expected
    assert os.environ["NUMBA_CACHE_DIR"] == expected


def test_the_key_follows_every_source_file_of_both_twins(tmp_path):
    for twin in ("fast", "reference"):
        (tmp_path / twin).mkdir()
        (tmp_path / twin / "kernel.py").write_text("X = 1\n")
    first = _numba_cache.sources_key(tmp_path / "fast")
    (tmp_path / "reference" / "kernel.py").write_text("X = 2\n")
    second = _numba_cache.sources_key(tmp_path / "fast")
    (tmp_path / "fast" / "notes.txt").write_text("not a source")
    assert first != second == _numba_cache.sources_key(tmp_path / "fast")
    (tmp_path / "reference" / "trees").mkdir()
    (tmp_path / "reference" / "trees" / "tree.py").write_text("X = 3\n")  # a module in a sub-folder
    assert _numba_cache.sources_key(tmp_path / "fast") != second


def test_other_versions_kernels_are_removed_and_the_users_folder_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    old = [cache / "kernels-0123456789abcdef", cache / "grower.grow-43.py311.nbi", cache / "grower.grow-43.py311.1.nbc"]
    old[0].mkdir()
    for path in old[1:]:
        path.write_bytes(b"")
    kept = [cache / "kernel.cpython-311.pyc", cache / "kernels-mine"]
    kept[0].write_bytes(b"")
    kept[1].mkdir()
    chosen = Path(_numba_cache.choose(tmp_path))
    assert not any(path.exists() for path in old) and all(path.exists() for path in kept)
    assert chosen.parent == cache and chosen.name.startswith("kernels-")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))  # the user's own folder: nothing is removed in it
    assert _numba_cache.choose(tmp_path) == str(cache) and kept[1].exists()


def copy_of_the_package(root: Path) -> Path:
    """The package copied to ``root/twinrank`` (without caches), importable with ``PYTHONPATH=root``."""
    source = Path(_numba_cache.PACKAGE_DIR).parent
    shutil.copytree(source / "_twinrank", root / "twinrank", ignore=shutil.ignore_patterns("__pycache__"))
    for twin in ("fast", "reference", "testing"):
        shutil.copytree(source / twin, root / "twinrank" / twin, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.slow
def test_an_edited_source_never_runs_stale_kernels(tmp_path):
    """A kernel compiles in the constants it reads from other files; numba keys its cache by the
    kernel's own file only. Edit ``reference/constants.py``: ``apply_bins`` must write the new value."""
    root = copy_of_the_package(tmp_path / "site")
    probe = ("import numpy as np; from twinrank.fast.trees import binning; "
             "X = np.array([[np.nan], [1.0]], dtype=np.float32); "
             "print(int(binning.apply_bins(X, binning.bin_thresholds(X, 4))[0, 0]))")
    assert run(probe, PYTHONPATH=str(root)).stdout.split() == ["255"]
    constants = root / "twinrank" / "reference" / "constants.py"
    constants.write_text(constants.read_text().replace("MISSING_BIN = 255", "MISSING_BIN = 254", 1))
    assert run(probe, PYTHONPATH=str(root)).stdout.split() == ["254"]


@pytest.fixture
def read_only_install(tmp_path):
    """A copy of the package whose folders cannot be written (a file stands where ``fast/__pycache__``
    would go, so even root cannot cache beside the sources)."""
    root = copy_of_the_package(tmp_path / "site")
    (root / "twinrank" / "fast" / "__pycache__").write_text("")
    for path in root.rglob("*"):
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    yield root
    for path in root.rglob("*"):
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_a_read_only_install_still_caches(read_only_install, tmp_path):
    xdg = tmp_path / "xdg"
    env = {"PYTHONPATH": str(read_only_install), "XDG_CACHE_HOME": str(xdg)}
    where = "import twinrank.fast as f; print(f.__file__, f.CACHE_DIR)"
    first = run(f"{SMALLEST}; {where}", **env)
    assert str(read_only_install) in first.stdout  # the copy ran, not the checkout
    assert NOTICE in first.stderr
    assert list((xdg / "twinrank" / "numba").rglob("*.nbi"))  # numba's cache index files
    second = run(SMALLEST, **env)
    assert "compiling" not in second.stderr, second.stderr

"""The first run says it compiles (issue 13, item 2), once; a warm cache says nothing; the kernels
cache even when the package folder cannot be written.

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

from twinrank.fast import _numba_cache

SMALLEST = "from twinrank.fast import objectives; objectives.squared_error([1.0, 2.0], [0.5, 0.5])"
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
    assert _numba_cache.choose(tmp_path) == str(tmp_path / "__pycache__")
    assert "NUMBA_CACHE_DIR" not in os.environ


def test_an_unwritable_package_caches_per_user(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "__pycache__").write_text("a file where the folder would be")  # unwritable, even for root
    assert _numba_cache.choose(tmp_path) == str(tmp_path / "xdg" / "twinrank" / "numba")
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "xdg" / "twinrank" / "numba")


@pytest.fixture
def read_only_install(tmp_path):
    """A copy of the package whose folders cannot be written (a file stands where ``fast/__pycache__``
    would go, so even root cannot cache beside the sources)."""
    root = tmp_path / "site"
    for twin in ("fast", "reference", "testing"):
        source = Path(_numba_cache.PACKAGE_DIR).parent / twin
        shutil.copytree(source, root / "twinrank" / twin, ignore=shutil.ignore_patterns("__pycache__"))
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

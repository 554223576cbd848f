"""The first run says it compiles, once; a warm cache says nothing; the kernels
cache even when the package folder cannot be written, in a private folder of this user's, never outlive
the sources they came from, and run uncached, said once, when no folder can be written.

Each test runs a fresh Python process on the smallest kernel there is
(``objectives.squared_error``, well under a second to compile), with its own
empty numba cache. No timing is asserted (``benchmarks/cold_start.py`` times).
"""
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from twinrank.fast.runtime import _compile_notice, _numba_cache

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


def test_the_notice_states_what_the_cold_start_benchmark_measured():
    """The first line's figure is benchmarks/cold_start.json's best cold run (rerun it, then update
    ``MEASURED``): no figure nobody measured."""
    measured = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "cold_start.json").read_text())
    assert f"{measured['cold_min']['cpu_s']:.0f} s of CPU" in _compile_notice.MEASURED


def test_the_notice_can_be_silenced(tmp_path):
    quiet = run(SMALLEST, NUMBA_CACHE_DIR=str(tmp_path), TWINRANK_COMPILE_NOTICE="0")
    assert "compiling" not in quiet.stderr


def test_the_users_cache_dir_holds_a_folder_keyed_by_the_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    key = _numba_cache.sources_key(tmp_path)
    assert _numba_cache.find(tmp_path) == (tmp_path / "mine" / f"kernels-{key}", "")


def test_the_cache_stays_beside_a_writable_package(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    key = _numba_cache.sources_key(tmp_path)
    assert _numba_cache.find(tmp_path) == (tmp_path / "__pycache__" / f"kernels-{key}", "")
    assert "NUMBA_CACHE_DIR" not in os.environ  # numba's own setting, for other numba code, is not changed


def test_an_unwritable_package_caches_per_user(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "__pycache__").write_text("a file where the folder would be")  # unwritable, even for root
    expected = tmp_path / "xdg" / "twinrank" / "numba" / f"kernels-{_numba_cache.sources_key(tmp_path)}"
    assert _numba_cache.find(tmp_path) == (expected, "")


def test_a_folder_that_is_not_this_users_own_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "__pycache__" / f"kernels-{_numba_cache.sources_key(tmp_path)}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.parent.mkdir()
    folder.symlink_to(elsewhere)  # a link where the folder would be: whose folder it leads to is anyone's guess
    chosen, problems = _numba_cache.find(tmp_path)
    assert chosen.is_relative_to(tmp_path / "xdg") and problems == ""
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # a folder of another user (only root can make one)
        os.chown(chosen, 65534, 65534)
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(chosen.parent))
        chosen_again, problems = _numba_cache.find(tmp_path)
        assert chosen_again is None and "owned by another user" in problems and str(chosen) in problems


def test_a_wider_folder_of_this_user_is_made_private(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    folder = tmp_path / f"kernels-{_numba_cache.sources_key(tmp_path)}"
    folder.mkdir()
    folder.chmod(0o777)
    assert _numba_cache.find(tmp_path) == (folder, "")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_other_versions_kernels_are_removed_and_nothing_else(tmp_path, monkeypatch):
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
    chosen, _ = _numba_cache.find(tmp_path)
    assert not any(path.exists() for path in old) and all(path.exists() for path in kept)
    assert chosen.parent == cache and chosen.name.startswith("kernels-")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))  # the user's folder: other versions' kernels go, and only they
    old[0].mkdir()
    old[1].write_bytes(b"")
    assert _numba_cache.find(tmp_path) == (chosen, "")
    assert not old[0].exists() and old[1].exists() and all(path.exists() for path in kept)


def copy_of_the_package(root: Path) -> Path:
    """The package copied to ``root/twinrank`` (without caches), importable with ``PYTHONPATH=root``."""
    source = Path(_numba_cache.PACKAGE_DIR).parent
    shutil.copytree(source / "_twinrank", root / "twinrank", ignore=shutil.ignore_patterns("__pycache__"))
    for twin in ("fast", "reference", "testing"):
        shutil.copytree(source / twin, root / "twinrank" / twin, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("users_cache_dir", [False, True])
def test_an_edited_source_never_runs_stale_kernels(tmp_path, users_cache_dir):
    """A kernel compiles in the constants it reads from other files; numba keys its cache by the
    kernel's own file only. Edit ``reference/constants.py``: ``apply_bins`` must write the new value,
    with the cache beside the sources and in a ``NUMBA_CACHE_DIR`` of the user's."""
    root = copy_of_the_package(tmp_path / "site")
    env = {"PYTHONPATH": str(root), **({"NUMBA_CACHE_DIR": str(tmp_path / "mine")} if users_cache_dir else {})}
    probe = ("import numpy as np; from twinrank.fast.trees import binning; "
             "X = np.array([[np.nan], [1.0]], dtype=np.float32); "
             "print(int(binning.apply_bins(X, binning.bin_thresholds(X, 4))[0, 0]))")
    assert run(probe, **env).stdout.split() == ["255"]
    constants = root / "twinrank" / "reference" / "constants.py"
    constants.write_text(constants.read_text().replace("MISSING_BIN = 255", "MISSING_BIN = 254", 1))
    assert run(probe, **env).stdout.split() == ["254"]


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


def test_a_read_only_install_with_no_writable_cache_home_runs_uncached(read_only_install, tmp_path):
    """Nowhere to cache: ``import twinrank.fast`` and the kernels still run, compiled each run, with one
    notice naming each folder tried; nothing is cached anywhere else (numba's own folders)."""
    (tmp_path / "xdg").write_text("a file where the cache home would be")
    env = {"PYTHONPATH": str(read_only_install), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    for _ in range(2):  # uncached: the second run compiles again
        out = run(f"{SMALLEST}; import twinrank.fast as f; print(f.CACHE_DIR)", **env)
        assert out.stdout.split() == ["None"]
        [notice] = [line for line in out.stderr.splitlines() if "compiling numba kernels" in line]
        assert "every run" in notice and str(tmp_path / "xdg" / "twinrank" / "numba" / "kernels-") in notice
        assert str(read_only_install / "twinrank" / "fast" / "__pycache__" / "kernels-") in notice
    assert not list(tmp_path.rglob("*.nbi"))


def test_an_unwritable_users_cache_dir_is_said_not_replaced(tmp_path):
    """``NUMBA_CACHE_DIR`` names a folder that cannot be written: uncached, said; not numba's unkeyed
    cache beside the sources (that folder could be written), nor the per-user one."""
    root = copy_of_the_package(tmp_path / "site")
    (tmp_path / "mine").write_text("a file where the folder would be")
    out = run(SMALLEST, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(tmp_path / "mine"),
              XDG_CACHE_HOME=str(tmp_path / "xdg"))
    [notice] = [line for line in out.stderr.splitlines() if "compiling numba kernels" in line]
    assert "every run" in notice and str(tmp_path / "mine" / "kernels-") in notice
    assert not list(tmp_path.rglob("*.nbi"))

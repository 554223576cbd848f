"""The kernel cache can never crash, fool or run code: a damaged, planted or foreign cache file is removed
and its kernel compiled again (one notice, no traceback); a cache that cannot be written runs uncached
with one notice; one process compiles at a time, the others wait and load; the compile helper does not
import from the working directory.

Each test runs fresh Python processes on the smallest kernel there is (``objectives.squared_error``,
well under a second to compile), on a cache folder of its own. No timing is asserted.
"""
import hashlib
import os
import pickle
import platform
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numba
import pytest

from twinrank.fast.runtime._kernel_cache import X86_MACHINES

KERNEL = "from twinrank.fast.losses import objectives; gradients = objectives.squared_error([1.0, 2.0], [0.5, 0.5])[0]"
SMALLEST = KERNEL + "; print(gradients.tolist())"
RESULT = "[-0.5, -1.5]"
COMPILING = "twinrank: compiling numba kernels"
REMOVED = "from the kernel cache: it is not the file twinrank wrote there"
FAST = Path(__file__).resolve().parents[2] / "fast"


def run(code: str, cache: Path, preexec_fn=None, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "TWINRANK_COMPILE_NOTICE"}
    environment.update(NUMBA_CACHE_DIR=str(cache), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          preexec_fn=preexec_fn, timeout=300)


def cache_files(cache: Path, suffix: str) -> list[Path]:
    return sorted(cache.rglob(f"*{suffix}"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache folder in which the smallest kernel was compiled and saved."""
    cache = tmp_path_factory.mktemp("warm")
    out = run(SMALLEST, cache)
    assert out.returncode == 0 and COMPILING in out.stderr, out.stderr
    return cache


@pytest.fixture
def cache(warm_cache, tmp_path) -> Path:
    """A copy of the warm cache, for this test to damage."""
    copy = tmp_path / "cache"
    shutil.copytree(warm_cache, copy)
    return copy


class RunsCode:
    """A pickle that, unpickled, makes the folder ``path``: the proof that code ran."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return os.mkdir, (self.path,)


def damage(path: Path, how: str, marker: Path) -> None:
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped byte":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1:])
    elif how == "pickle that runs code":  # numba's index: its version, then the pickle it loads
        path.write_bytes(pickle.dumps(numba.__version__) + pickle.dumps(RunsCode(marker)))
    elif how == "another user's file":  # the very bytes twinrank wrote, in a file it does not own
        os.chown(path, 65534, 65534)


@pytest.mark.parametrize(("suffix", "how"), [
    (".nbi", "empty"), (".nbi", "truncated"), (".nbi", "pickle that runs code"),
    (".nbc", "flipped byte"), (".nbc", "truncated"), (".nbc", "pickle that runs code"),
    pytest.param(".nbc", "another user's file",
                 marks=pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")),
])
def test_a_damaged_or_planted_cache_file_is_removed_and_compiled_again(cache, tmp_path, suffix, how):
    marker = tmp_path / "code-ran"
    [path] = cache_files(cache, suffix)
    damage(path, how, marker)
    out = run(SMALLEST, cache)
    assert out.returncode == 0 and out.stdout.strip() == RESULT, out.stderr
    assert not marker.exists()  # the planted pickle was never unpickled
    assert "Traceback" not in out.stderr
    assert out.stderr.count(REMOVED) == 1 and str(path) in out.stderr, out.stderr
    assert COMPILING in out.stderr
    assert recorded(path)  # compiled again and saved: the next run loads it


def recorded(path: Path) -> bool:
    """Whether ``path`` is a file whose bytes its kernels folder's manifest records."""
    [folder] = [parent for parent in path.parents if parent.name.startswith("kernels-")]
    manifest = (folder / "manifest.sha256").read_text().splitlines()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{digest}  {path.relative_to(folder).as_posix()}" in manifest


def test_a_file_nobody_wrote_is_removed_before_numba_reads_it(cache, tmp_path):
    """A pickle planted beside the kernels under a name numba would look for (a second data file)."""
    marker = tmp_path / "code-ran"
    [index] = cache_files(cache, ".nbi")
    planted = index.with_name(index.name.replace(".nbi", ".2.nbc"))
    planted.write_bytes(pickle.dumps(RunsCode(marker)))
    index.write_bytes(b"")  # and the index damaged, so that numba compiles and saves again
    out = run(SMALLEST, cache)
    assert out.returncode == 0 and out.stdout.strip() == RESULT and not marker.exists(), out.stderr


def test_the_cache_is_private(warm_cache):
    [folder] = warm_cache.glob("kernels-*")
    modes = {path.relative_to(warm_cache).as_posix(): stat.S_IMODE(path.lstat().st_mode)
             for path in [folder, *folder.rglob("*")]}
    assert modes and all(mode == (0o700 if (warm_cache / name).is_dir() else 0o600) for name, mode in modes.items()), modes


def test_a_cache_that_cannot_be_written_runs_uncached_with_one_notice(tmp_path):
    """A write refused by the system while the kernel is saved (``RLIMIT_FSIZE``: the same refusal,
    mid-write, as a full disk's ENOSPC, without filling one)."""
    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # refused writes fail with EFBIG, not a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = run(SMALLEST, tmp_path, preexec_fn=small_files)
    assert out.returncode == 0 and out.stdout.strip() == RESULT, out.stderr
    assert "Traceback" not in out.stderr
    notices = [line for line in out.stderr.splitlines() if "cannot write the kernel cache" in line]
    assert len(notices) == 1 and str(tmp_path) in notices[0] and "not cached" in notices[0], out.stderr


def test_other_processes_wait_for_a_compilation_then_load_its_kernels(tmp_path):
    """One process holds the compile lock (as while it compiles), another misses the cache: it says it
    waits, and does; the first compiles the kernel and releases the lock; the second loads it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\n"
         "from twinrank.fast.runtime import _numba_cache\n"
         "from twinrank.fast.runtime._compile_lock import LOCK\n"
         "LOCK.acquire(_numba_cache.FOLDER); print('held', flush=True); sys.stdin.readline()\n"
         f"{KERNEL}\n"
         "LOCK.release(); print('released', flush=True); sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "TWINRANK_COMPILE_NOTICE": "0"})
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = subprocess.Popen([sys.executable, "-c", SMALLEST], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env={k: v for k, v in {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}.items()
                                                  if k != "TWINRANK_COMPILE_NOTICE"})
        notice = waiter.stderr.readline()
        assert "waiting for it" in notice and f"pid {holder.pid}" in notice, notice
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        stdout, stderr = waiter.communicate(timeout=300)
        assert waiter.returncode == 0 and stdout.strip() == RESULT, stderr
        assert COMPILING not in stderr, stderr  # loaded what the holder compiled
    finally:
        holder.kill()
        holder.wait()


def test_the_compile_helper_does_not_import_from_the_working_directory(tmp_path):
    """The helper's command line (``_warm.helper_command``), run in a folder holding a ``numpy.py``:
    it must import the real numpy. The parent id given is not its parent's, so it exits at once."""
    from twinrank.fast.trees import _warm

    (tmp_path / "numpy.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\nraise SystemExit(7)\n")
    command = _warm.helper_command(parent=0)
    helper = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert not (tmp_path / "imported").exists(), helper.stderr
    assert helper.returncode == 1, helper.stderr  # its watch: not started by process 0


CALLER_AND_CALLEE = """
from twinrank.fast.runtime._kernel_cache import njit


@njit(cache=True)
def callee(x):
    return x + 1.0


@njit(cache=True)
def caller(x):
    return 2.0 * callee(x)


@njit(cache=True)
def another_caller(x):
    return 3.0 * callee(x)
"""
ENTRIES = "[has_entry(compiled) for compiled in callee.overloads.values()]"
LINKED = "[isinstance(compiled.library, LinkedLibrary) for compiled in callee.overloads.values()]"


def test_a_callee_gets_its_python_entry_point_only_when_python_calls_it(tmp_path):
    """A kernel compiled for its caller has no Python entry point and no machine code of its own, and is
    cached as such: another caller links it from the cache; a call from Python compiles it again with
    its entry point, in the process that compiled it and in a later one on its cache (loading the
    callee's cache entry there would call a null entry point)."""
    (tmp_path / "kernels_of_a_test.py").write_text(CALLER_AND_CALLEE)
    head = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
            "from kernels_of_a_test import another_caller, callee, caller\n"
            "from twinrank.fast.runtime._kernel_cache import LinkedLibrary, has_entry\n")
    cold = run(head + f"print(caller(1.0), {ENTRIES}, {LINKED}, callee(1.0), {ENTRIES}, {LINKED})",
               tmp_path / "cache")
    assert cold.returncode == 0 and cold.stdout.split() == ["4.0", "[False]", "[True]", "2.0", "[True]", "[False]"], (
        cold.stderr)  # linked into its caller, the callee was not compiled to machine code (LinkedLibrary)
    fresh = tmp_path / "fresh"
    run(head + "print(caller(1.0))", fresh)  # the callee cached without its entry point only
    warm = run(head + f"print(another_caller(1.0), callee(1.0), {ENTRIES}, caller(1.0))", fresh)
    assert warm.returncode == 0 and warm.stdout.split() == ["6.0", "2.0", "[True]", "4.0"], warm.stderr


SEARCH = """
import numba
import numpy as np
from twinrank.fast.runtime._kernel_cache import njit


def search(values, t):  # the binning's search: steps of binary lifting, a select on the data
    position = np.zeros(len(values), dtype=np.uint32)
    step = np.uint32(128)
    while step > 0:
        for r in range(len(values)):
            p = position[r]
            position[r] = p + step if t[np.uint64(p + step - np.uint32(1))] < values[r] else p
        step >>= np.uint32(1)
    return position


values, t = np.arange(4, dtype=np.float32), np.arange(255, dtype=np.float32)
for name, dispatcher in [("before", numba.njit(search)), ("kernel", njit(search)), ("after", numba.njit(search))]:
    print("@@", name, flush=True)
    dispatcher(values, t)
"""


def _search_assembly(dump: str) -> dict:
    """The machine code of ``search`` that numba wrote while it compiled (``NUMBA_DUMP_ASSEMBLY``), by
    compilation: its instructions' mnemonics."""
    compiled = {}
    for part in re.split(r"^@@ ", dump, flags=re.M)[1:]:
        name, _, text = part.partition("\n")
        section = re.split(r"^-+ASSEMBLY search-+$", text, flags=re.M)[1].split("=" * 80)[0]
        compiled[name] = re.findall(r"^\s+([a-z][a-z0-9]*)\b", section, flags=re.M)
    return compiled


@pytest.mark.skipif(platform.machine().lower() not in X86_MACHINES, reason="an option of LLVM's x86 backend")
def test_a_kernels_selects_stay_conditional_moves_and_other_numba_code_compiles_as_before(tmp_path):
    """LLVM's x86 pass that turns a loop's conditional moves into branches (a mispredicted branch per
    value on random data, on CPUs modelled as Haswell or Sapphire Rapids) is off while a twinrank
    kernel compiles, and on again after: numba code outside twinrank compiles as it did before. Read
    in the machine code as it was made (numba makes it again, with LLVM's options of the moment, for
    ``inspect_asm``)."""
    compiled = run(SEARCH, tmp_path / "cache", NUMBA_DUMP_ASSEMBLY="1")
    assert compiled.returncode == 0, compiled.stderr
    code = _search_assembly(compiled.stdout)
    assert any(mnemonic.startswith("cmov") for mnemonic in code["kernel"])
    assert code["after"] == code["before"]


def test_every_kernel_is_cached_by_the_project():
    """A kernel decorated with numba's own ``njit(cache=True)`` would bypass every check above."""
    offenders = [path.relative_to(FAST).as_posix() for path in FAST.rglob("*.py")
                 if path.name != "_kernel_cache.py"
                 and any(line.startswith("from numba import") and "njit" in line or "numba.njit" in line
                         for line in path.read_text().splitlines())]
    assert offenders == []


@pytest.mark.parametrize("what", ["a link to the same bytes", "a folder", "a named pipe", "writable by the group"])
def test_what_is_not_a_private_file_is_removed_unread(tmp_path, what):
    """The manifest's read, in this process: the path must be this user's own regular file, whatever
    its bytes (a pipe must not make it wait, a link is not followed)."""
    from twinrank.fast.runtime._cache_manifest import Manifest

    manifest = Manifest(tmp_path)
    path = tmp_path / "kernel.nbi"
    manifest.write(str(path), b"the index")
    assert manifest.read(str(path)) == b"the index"
    if what == "writable by the group":
        path.chmod(0o620)
    else:
        path.rename(tmp_path / "elsewhere")
        if what == "a link to the same bytes":
            path.symlink_to(tmp_path / "elsewhere")
        elif what == "a folder":
            path.mkdir()
        else:
            os.mkfifo(path)
    assert manifest.read(str(path)) is None
    assert not os.path.lexists(path)

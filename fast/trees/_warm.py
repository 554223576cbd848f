"""A cold cache: the tree grower compiles in a second process while this one compiles the rest.

numba compiles under one lock per process, so threads cannot share the first
run's compilation, but two processes can: the grower (``_grower.grow`` and its
callees, about half of a cold fit's compile time) is compiled by a helper
process into the shared on-disk cache while this process compiles the grower's split
search (:func:`compile_split_search`), then the binning, objective and metric kernels. The
kernels a fit calls after its first tree (scoring the trees, :data:`SCORING`) are compiled
by whichever of the two is free first (:func:`compile_scorers`). The fast engine
(``engine.FAST``) wraps the two kernels every fit calls: its first, ``bin_thresholds``,
starts the helper (:func:`starting_helper`); ``grow_tree`` / ``grow_trees`` wait for it
(:func:`after_helper`), then load the grower from the cache::

    this process   import | spawn, split search | binning, lambdarank, metrics | scoring jobs | wait | trees ...
    helper                | import | compile grow (tiny tree): loads the split search | scoring jobs | exit

Both end about together on two free cores (``benchmarks/cold_start.py`` draws the timeline).
The split search (``_grower._evaluate_nodes`` and its callees, about a fifth of the grower's
compile time) is compiled with the exact types ``grow`` calls it with
(``_grower.split_search_types``), as a callee, under a lock file taken before the helper
starts (``_compile_lock.promised``): the helper, typing ``grow``, reaches it after the
histograms, waits for that lock if it is still held, and loads it from the cache. A scoring
job is claimed by the process that first makes its file in the kernels' folder (the
claims of killed processes are swept before a helper starts: :func:`_sweep_claims`).

The helper grows one tiny tree through :func:`~.tree.grow_tree`, the fit's own
code path, so it compiles exactly the fit's signatures (the bins read-only,
Fortran-ordered uint8; row ids int32; float64 gradients) and the cache hits
(a cache hit). Concurrent writers are safe: each index and data file is written
under a unique temporary name, renamed into place and recorded in the cache's
manifest under a short lock (:mod:`twinrank.fast.runtime._cache_manifest`), and this
process reads the grower's files only after the helper has exited.

No helper when the grower is already cached (one small index file read), when
fewer than two threads may run (``n_threads=1``, one core), when the kernels are not
cached (nowhere to share them), or when ``TWINRANK_COMPILE_HELPER=0``. The helper
compiles under this process's compile lock (:mod:`twinrank.fast.runtime._compile_lock`):
taken before the helper starts (a fit that finds another process compiling waits for
it, then finds the grower cached and starts no helper), released when the helper has
ended. The helper is started isolated (``python -I``: no ``PYTHON*`` variables, the
working directory not on ``sys.path``, so a ``numpy.py`` there is not imported), with
this process's ``sys.path`` but for the working directory. It is killed when this
process exits (``atexit``; Ctrl-C reaches both, as one process group), and exits by
itself if its parent dies (it polls its parent id). If it fails, this process compiles
the grower itself, as without a helper. Done, it ends with ``os._exit(0)``: its cache files are
written and renamed into place by then, and the interpreter's teardown with numba and LLVM
loaded (about 0.4 s on the benchmark machine) would only hold up the fit that waits for it.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import subprocess
import sys
import threading
import time

import numba
import numpy as np
from numba.core.compiler_lock import global_compiler_lock

from twinrank.fast.runtime import _numba_cache
from twinrank.fast.runtime._compile_lock import HOLDER, LOCK, promised
from twinrank.fast.runtime._compile_notice import NOTICE
from twinrank.fast.runtime._kernel_cache import KernelCache, cached_signatures, caching
from twinrank.fast.trees._grower import _evaluate_nodes, big_nodes, grow, split_search_types
from twinrank.fast.trees._layout import missing_mask, sparse_layout
from twinrank.fast.trees._partition import PARALLEL_ROWS
from twinrank.fast.trees.predict import (
    WALK_ROWS,
    WALK_ROWS_ALONE,
    add_leaf_values,
    predict_ensemble,
    predict_tree_binned,
)
from twinrank.fast.trees.tree import grow_tree, grower_arguments
from twinrank.reference.constants import LEAF
from twinrank.reference.io.model import Ensemble, Tree
from twinrank.reference.params import TreeParams
from twinrank.reference.trees._checks import _checked_inputs

HELPER_CODE = ("import os, sys; sys.path[:0] = sys.argv[3:]; from twinrank.fast.trees import _warm; "
               "_warm.helper_main(int(sys.argv[1]), sys.argv[2] == 'big'); os._exit(0)")  # no teardown (docstring)
SPLIT_SEARCH = "split-search.lock"  # held by a fit's process while it compiles the split search for its helper
_helper: dict = {}  # the running helper (at most one): "process", "start" (perf_counter), until waited for


def starting_helper(kernel):
    """``kernel`` that first starts the helper (:func:`start_grower_helper`) for the grower of its first
    argument's shape (``_grower.big_nodes``): a fit's first kernel, ``bin_thresholds(X, ...)``."""
    @functools.wraps(kernel)
    def started(X, *args, **kwargs):
        shape = np.shape(X)
        start_grower_helper(len(shape) == 2 and big_nodes(*shape))
        return kernel(X, *args, **kwargs)
    return started


def after_helper(kernel):
    """``kernel`` that first waits for a running helper (:func:`wait_for_helper`): the grower."""
    @functools.wraps(kernel)
    def waited(*args, **kwargs):
        wait_for_helper()
        return kernel(*args, **kwargs)
    return waited


def start_grower_helper(big: bool = False) -> None:
    """Spawn the helper if the grower (with or without ``big`` nodes: ``_grower.big_nodes``) is not
    cached and two threads may run (a fit's start)."""
    if _helper or os.environ.get("TWINRANK_COMPILE_HELPER", "1") == "0":
        return
    if numba.get_num_threads() < 2 or _cores() < 2 or not caching() or grower_is_cached(big):
        return
    LOCK.acquire(_numba_cache.FOLDER)  # the helper's lock, released when it has ended (_release_after)
    if grower_is_cached(big):  # compiled by the process this one waited for
        LOCK.release()
        return
    _sweep_claims()
    env = dict(os.environ, TWINRANK_COMPILE_NOTICE="0", TWINRANK_COMPILE_HELPER="0", **{HOLDER: str(os.getpid())})
    with promised(_numba_cache.FOLDER, SPLIT_SEARCH):  # taken before the helper starts: it waits for it
        _helper["start"], _helper["big"] = time.perf_counter(), big
        try:
            _helper["process"] = subprocess.Popen(helper_command(os.getpid(), big), env=env,
                                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL)
        except OSError:
            _helper.clear()
            LOCK.release()
            return
        threading.Thread(target=_release_after, args=(_helper["process"],), daemon=True).start()
        compile_split_search(big)


def helper_command(parent: int, big: bool = False) -> list[str]:
    """The helper's command line: this Python, isolated, with this process's ``sys.path`` but for
    the working directory (the same twinrank, the same numba), compiling the grower with or without
    ``big`` nodes."""
    try:
        here = os.getcwd()
    except OSError:  # it was removed
        here = None
    paths = [path for path in sys.path if os.path.isabs(path) and os.path.normpath(path) != here]  # "": cwd
    return [sys.executable, "-I", "-c", HELPER_CODE, str(parent), "big" if big else "small", *paths]


def _release_after(process: subprocess.Popen) -> None:
    process.wait()
    LOCK.release()


def wait_for_helper() -> None:
    """Compile the scorers (:func:`compile_scorers`), then wait for a running helper to exit (the
    grower then loads from the cache). The compile notice shows the helper's time as ``tree``."""
    if not _helper:
        return
    compile_scorers(_helper["big"])
    _helper["process"].wait()
    _unclaim(os.getpid())
    NOTICE.compiled_elsewhere("tree (second process)", time.perf_counter() - _helper.pop("start"))
    _helper.clear()


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def grower_is_cached(big: bool = False) -> bool:
    """Whether the cache holds the exact grower (``_grower.grow`` with ``packing=None``; the
    quantized one is another signature), with or without ``big`` nodes, for the current sources."""
    return any(signature[-1] == numba.types.none and (signature[1].types[-1] == numba.types.none) != big
               for signature in cached_signatures(grow))


def compile_grower(big: bool = False) -> None:
    """Grow one tree: compiles the grower with the types of a fit (see the module docstring), on four
    rows, or with ``big`` nodes on more than ``PARALLEL_ROWS`` (a few milliseconds)."""
    grow_tree(*_tiny_tree(big))


def compile_split_search(big: bool = False) -> None:
    """Compile the grower's split search (``_grower._evaluate_nodes`` and its callees) as the grower of
    :func:`compile_grower` calls it: as a callee (``_kernel_cache.Kernel``, no Python entry point),
    into the cache, where the helper finds it."""
    job = _checked_inputs(*_tiny_tree(big), None, None, None)
    data, rules, out, work, _ = grower_arguments(job, np.empty(0, dtype=np.int32), None, True)
    with global_compiler_lock:  # a compilation that starts under numba's lock is a callee's
        _evaluate_nodes.compile(split_search_types(data, rules, out, work))


def _tiny_tree(big: bool) -> tuple:
    """``grow_tree``'s arguments for a tree of 3 leaves on four rows (more than ``PARALLEL_ROWS`` with
    ``big`` nodes) of two features, typed as a fit's: the bins read-only, Fortran-ordered uint8."""
    n_rows = PARALLEL_ROWS + 1 if big else 4
    binned = np.asfortranarray(np.arange(2 * n_rows).reshape(n_rows, 2) % 8, dtype=np.uint8)  # as apply_bins
    binned.flags.writeable = False
    return binned, np.linspace(-1.0, 1.0, n_rows), np.ones(n_rows), [np.arange(7.0)] * 2, TreeParams(max_leaves=3)


def compile_scorers(big: bool = False) -> None:
    """Compile the kernels a fit and its first prediction call after the grower (:data:`SCORING`), those
    of them the helper has not claimed: each job is claimed by one process of the pair (the fit's
    while it waits, the helper's once the grower is compiled), whichever is free first."""
    for job in _claimed(os.getpid()):
        job(big)


def _score_features(big: bool) -> None:
    """Score a stump on float32 features as ``predict`` does (QuickScorer: at least ``WALK_ROWS`` rows)."""
    predict_ensemble(Ensemble(trees=[_stump()], tree_weights=[1.0], n_features=2),
                     np.array([[0.0, 0.0], [1.0, 1.0]] * (WALK_ROWS // 2 + 1), dtype=np.float32))


def _score_bins(big: bool) -> None:
    """Score a stump on bins as a fit scores each new tree on its validation rows (a walk; QuickScorer
    on bins when the data are ``big``, ``_grower.big_nodes``, as their validation rows may well be), and
    add its leaf values to scores as a round does."""
    stump = _stump()
    n_rows = WALK_ROWS_ALONE if big else 2
    # two columns: a one-column array is also C-contiguous, which numba would type as C layout
    binned = np.asfortranarray(np.arange(2 * n_rows).reshape(n_rows, 2) % 2, dtype=np.uint8)  # as apply_bins
    binned.flags.writeable = False
    predict_tree_binned(stump, binned)
    add_leaf_values(np.zeros(2), stump.value, np.zeros(2, dtype=np.int32), 1.0)


def _lay_out_bins(big: bool) -> None:
    """Lay out bins as a fit's first tree does: the sparse features' entries, the features with missing
    values."""
    sparse = np.asfortranarray(np.array([[0, 1], [0, 2], [0, 1], [1, 3]], dtype=np.uint8))  # feature 0 sparse
    sparse.flags.writeable = False
    sparse_layout(sparse)
    missing_mask(sparse)


# compile_scorers' jobs, the longest first (in a cold demo's timeline 0.95, 0.47 and 0.21 s of CPU), each taken by
# the first process free, so that the two end about together
SCORING = (_score_features, _lay_out_bins, _score_bins)


def _stump() -> Tree:
    return Tree(feature=[0, LEAF, LEAF], threshold=[0.5, 0.0, 0.0], bin_threshold=[0, LEAF, LEAF],
                left=[1, LEAF, LEAF], right=[2, LEAF, LEAF], missing=[1, LEAF, LEAF], value=[0.0, -1.0, 1.0],
                gain=[1.0, 0.0, 0.0], count=[2, 1, 1], hessian_sum=[2.0, 1.0, 1.0])


def _claimed(parent: int):
    """The jobs of :data:`SCORING` this process claims, one at a time: a job is claimed by the process that
    makes its file (``warm-<parent>-<job>`` in the kernels' folder; removed once the helper has ended)."""
    for i, job in enumerate(SCORING):
        try:
            os.close(os.open(_numba_cache.FOLDER / f"warm-{parent}-{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        except OSError:  # cannot be written: the fit's process compiles it, or loads it where the helper did
            if os.getpid() != parent:
                continue
        yield job


def _unclaim(parent: int) -> None:
    for i in range(len(SCORING)):
        with contextlib.suppress(OSError):
            os.unlink(_numba_cache.FOLDER / f"warm-{parent}-{i}")


def _sweep_claims() -> None:
    """Remove the claims left by processes that ended without :func:`_unclaim` (killed), and any of
    this process's id (left by an ended process that had it before): a new pair claims afresh."""
    for path in _numba_cache.FOLDER.glob("warm-*-*"):
        try:
            owner = int(path.name.split("-")[1])
        except ValueError:
            continue
        if owner == os.getpid() or not _alive(owner):
            with contextlib.suppress(OSError):
                path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def helper_main(parent: int, big: bool = False) -> None:
    """The helper process: compile the grower (:func:`compile_grower`), or exit as soon as ``parent``
    is gone."""
    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    if isinstance(_evaluate_nodes._cache, KernelCache):  # the parent compiles the split search meanwhile
        _evaluate_nodes._cache.promise = SPLIT_SEARCH
    compile_grower(big)
    for job in _claimed(parent):
        job(big)


@atexit.register
def _kill_helper() -> None:
    if _helper:
        _helper["process"].kill()
        _helper["process"].wait()

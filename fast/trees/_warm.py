"""A cold cache: the tree grower compiles in a second process while this one compiles the rest.

numba compiles under one lock per process, so threads cannot share the first
run's compilation, but two processes can: the grower (``_grower.grow`` and its
callees, about half of a cold fit's compile time) is compiled by a helper
process into the shared on-disk cache while this process compiles the binning,
objective, metric and prediction kernels (those of scoring the trees,
:func:`compile_scorers`, while it waits). The fast engine (``engine.FAST``) wraps
the two kernels every fit calls: its first, ``bin_thresholds``, starts the helper
(:func:`starting_helper`); ``grow_tree`` / ``grow_trees`` wait for it
(:func:`after_helper`), then load the grower from the cache::

    this process   import | fit starts: spawn | binning, lambdarank, metrics ... | wait | load grow | trees ...
    helper                                    | import | compile grow (tiny tree) -> cache | exit

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
the grower itself, as without a helper.
"""
from __future__ import annotations

import atexit
import functools
import os
import subprocess
import sys
import threading
import time

import numba
import numpy as np

from twinrank.fast.runtime import _numba_cache
from twinrank.fast.runtime._compile_lock import HOLDER, LOCK
from twinrank.fast.runtime._compile_notice import NOTICE
from twinrank.fast.runtime._kernel_cache import cached_signatures, caching
from twinrank.fast.trees._grower import big_nodes, grow
from twinrank.fast.trees._layout import missing_mask, sparse_layout
from twinrank.fast.trees._partition import PARALLEL_ROWS
from twinrank.fast.trees.predict import WALK_ROWS, add_leaf_values, predict_ensemble, predict_tree_binned
from twinrank.fast.trees.tree import grow_tree
from twinrank.reference.constants import LEAF
from twinrank.reference.io.model import Ensemble, Tree
from twinrank.reference.params import TreeParams

HELPER_CODE = ("import sys; sys.path[:0] = sys.argv[3:]; from twinrank.fast.trees import _warm; "
               "_warm.helper_main(int(sys.argv[1]), sys.argv[2] == 'big')")
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
    env = dict(os.environ, TWINRANK_COMPILE_NOTICE="0", TWINRANK_COMPILE_HELPER="0", **{HOLDER: str(os.getpid())})
    _helper["start"] = time.perf_counter()
    try:
        _helper["process"] = subprocess.Popen(helper_command(os.getpid(), big), env=env,
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
    except OSError:
        _helper.clear()
        LOCK.release()
        return
    threading.Thread(target=_release_after, args=(_helper["process"],), daemon=True).start()


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
    compile_scorers()
    _helper["process"].wait()
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
    n_rows = PARALLEL_ROWS + 1 if big else 4
    binned = np.asfortranarray(np.arange(2 * n_rows).reshape(n_rows, 2) % 8, dtype=np.uint8)  # as apply_bins
    binned.flags.writeable = False
    gradients = np.linspace(-1.0, 1.0, n_rows)
    grow_tree(binned, gradients, np.ones(n_rows), [np.arange(7.0)] * 2, TreeParams(max_leaves=3))


def compile_scorers() -> None:
    """Score a stump as a fit scores each new tree (bins) and as ``predict`` does (float32
    features), add its leaf values to scores as a round does, and lay out bins as a fit's first
    tree does (the sparse features' entries, the features with missing values): the kernels a fit
    and its first prediction compile after the grower, compiled by this process while the helper
    compiles the grower."""
    stump = Tree(feature=[0, LEAF, LEAF], threshold=[0.5, 0.0, 0.0], bin_threshold=[0, LEAF, LEAF],
                 left=[1, LEAF, LEAF], right=[2, LEAF, LEAF], missing=[1, LEAF, LEAF],
                 value=[0.0, -1.0, 1.0], gain=[1.0, 0.0, 0.0], count=[2, 1, 1],
                 hessian_sum=[2.0, 1.0, 1.0])
    # two columns: a one-column array is also C-contiguous, which numba would type as C layout
    binned = np.asfortranarray(np.array([[0, 0], [1, 1]], dtype=np.uint8))  # as apply_bins returns
    binned.flags.writeable = False
    predict_tree_binned(stump, binned)
    add_leaf_values(np.zeros(2), stump.value, np.zeros(2, dtype=np.int32), 1.0)
    sparse = np.asfortranarray(np.array([[0, 1], [0, 2], [0, 1], [1, 3]], dtype=np.uint8))  # feature 0 sparse
    sparse.flags.writeable = False
    sparse_layout(sparse)
    missing_mask(sparse)
    predict_ensemble(Ensemble(trees=[stump], tree_weights=[1.0], n_features=2),  # QuickScorer: WALK_ROWS rows
                     np.array([[0.0, 0.0], [1.0, 1.0]] * (WALK_ROWS // 2 + 1), dtype=np.float32))


def helper_main(parent: int, big: bool = False) -> None:
    """The helper process: compile the grower (:func:`compile_grower`), or exit as soon as ``parent``
    is gone."""
    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    compile_grower(big)


@atexit.register
def _kill_helper() -> None:
    if _helper:
        _helper["process"].kill()
        _helper["process"].wait()

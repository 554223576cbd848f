"""Running numba kernels on a chosen number of threads, and splitting a kernel's work over them.

Two ways to run in parallel. A kernel called many times from compiled code (the
tree grower's histograms, partitions and split scans) uses ``prange``. A kernel
called once per round or per evaluation from Python (metrics, LambdaRank
gradients) is instead a serial, ``nogil`` kernel over a range of work items, and
:func:`over_chunks` runs contiguous chunks of that range on Python threads: the
same parallelism, but ``parallel=True`` costs seconds of compilation per kernel
(measured in ``benchmarks/cold_start.py``) and a plain loop a fraction of that.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numba.np.ufunc.parallel

from twinrank.fast.runtime._compile_notice import session
from twinrank.fast.runtime._workspace import reusing
from twinrank.reference._param_checks import check_n_threads

CHUNKS_PER_THREAD = 4
THREAD_SAFE_LAYERS = {"tbb": "tbbpool", "omp": "omppool"}  # numba's layers that two threads may enter at once


def _choose_thread_safe_layer() -> None:
    """Replace ``NUMBA_THREADING_LAYER=workqueue`` by a thread-safe layer, saying so on one line.

    numba's ``workqueue`` layer aborts the whole process (``SIGABRT``, exit status 134) when
    two threads launch parallel kernels at once: two fits on two threads of one program,
    a random forest growing several trees at once. twinrank grows trees concurrently only on
    ``omp`` or ``tbb`` (``trees.tree.trees_at_once``), but a program around it may call it
    from several threads; so a ``workqueue`` asked for is replaced, before any kernel runs,
    by the first of ``tbb`` and ``omp`` this numba can load (in the environment too, so that
    the processes twinrank starts need not say it again). With neither, it is kept.
    """
    if numba.config.THREADING_LAYER != "workqueue" or numba.np.ufunc.parallel._is_initialized:
        return
    for layer, library in THREAD_SAFE_LAYERS.items():
        try:
            importlib.import_module(f"numba.np.ufunc.{library}")
        except ImportError:
            continue
        numba.config.THREADING_LAYER = os.environ["NUMBA_THREADING_LAYER"] = layer  # also the child processes'
        print(f"twinrank: NUMBA_THREADING_LAYER=workqueue aborts the process when two threads run kernels at "
              f"once; using the thread-safe '{layer}' layer instead", file=sys.stderr)
        return


_choose_thread_safe_layer()


class threads:
    """Run the block with ``n_threads`` numba threads, then restore the old count.

    ``n_threads``: a positive count, capped at the threads numba was started with
    (``NUMBA_NUM_THREADS``, by default the cores); None or -1: all of them. 0 and
    other negatives are a ParameterError (``check_n_threads``). The block is one
    compile-notice session (``_compile_notice``): a fit or a prediction that compiles
    kernels says so on one line. Within it, the tree grower keeps its buffers from one
    tree to the next on this thread (``_workspace``).

    A class rather than a generator, and the count set only when it changes: a
    ``predict`` of one row spends about 3 us here, not 6 (``benchmarks/predict_latency.py``).
    """

    __slots__ = ("n_threads", "old", "session", "reusing")

    def __init__(self, n_threads):
        if n_threads.__class__ is not int or n_threads < 1:  # a positive int needs no more checks
            check_n_threads("n_threads", n_threads)
        self.n_threads = None if n_threads is None or n_threads == -1 else n_threads

    def __enter__(self):
        self.session, self.reusing = session(), reusing()
        self.session.__enter__()
        self.reusing.__enter__()
        self.old = None
        if self.n_threads is not None:
            old, new = numba.get_num_threads(), min(int(self.n_threads), numba.config.NUMBA_NUM_THREADS)
            if new != old:
                numba.set_num_threads(new)
                self.old = old

    def __exit__(self, *exception):
        try:
            if self.old is not None:
                numba.set_num_threads(self.old)
        finally:
            self.reusing.__exit__(*exception)
            self.session.__exit__(*exception)


def over_chunks(kernel, n_items: int, *args, parallel: bool = True) -> None:
    """``kernel(first, last, *args)`` over ``[0, n_items)``: one call, or (``parallel``) one call per
    contiguous chunk, the chunks taken in turn by the calling thread and
    ``numba.get_num_threads() - 1`` pool threads (``kernel`` must be ``nogil``).

    ``CHUNKS_PER_THREAD`` chunks a thread even out uneven work (queries of unequal
    size). Chunks write disjoint outputs, so the result never depends on the threads. The
    call returns once every chunk is done, without waiting for a pool thread that other jobs
    kept from starting (its chunks were taken by the others).
    """
    if n_items <= 1 or not parallel:
        kernel(0, n_items, *args)
        return
    n_threads = numba.get_num_threads()
    n_chunks = min(n_threads * CHUNKS_PER_THREAD, n_items)
    if n_threads <= 1 or n_chunks <= 1:
        kernel(0, n_items, *args)
        return
    bounds = [n_items * i // n_chunks for i in range(n_chunks + 1)]
    chunks, lock = iter(range(n_chunks)), threading.Lock()

    def work():
        while True:
            with lock:
                i = next(chunks, None)
            if i is None:
                return
            kernel(bounds[i], bounds[i + 1], *args)

    helpers = [_pool().submit(work) for _ in range(n_threads - 1)]
    work()
    for helper in helpers:  # every chunk is taken: a helper not started yet (a busy machine) never runs
        if not helper.cancel():
            helper.result()


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The process's worker threads for :func:`over_chunks`, made on first use."""
    return ThreadPoolExecutor(numba.config.NUMBA_NUM_THREADS, thread_name_prefix="twinrank")

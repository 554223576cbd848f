"""Running numba kernels on a chosen number of threads."""
from __future__ import annotations

import contextlib

import numba

from twinrank.reference._param_checks import check_n_threads


@contextlib.contextmanager
def threads(n_threads):
    """Run the block with ``n_threads`` numba threads, then restore the old count.

    ``n_threads``: a positive count, capped at the threads numba was started with
    (``NUMBA_NUM_THREADS``, by default the cores); None or -1: all of them. 0 and
    other negatives are a ParameterError (``check_n_threads``).
    """
    check_n_threads("n_threads", n_threads)
    if n_threads is None or n_threads == -1:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(old)

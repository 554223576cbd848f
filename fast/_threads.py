"""Running numba kernels on a chosen number of threads."""
from __future__ import annotations

import contextlib

import numba


@contextlib.contextmanager
def threads(n_threads):
    """Run the block with ``n_threads`` numba threads (None: all), then restore the old count."""
    if n_threads is None:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)

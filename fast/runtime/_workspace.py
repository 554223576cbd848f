"""The tree grower's buffers, kept from one tree to the next while a fit runs.

A boosting fit grows one tree after another on the same rows, each needing the
same buffers: a histogram pool of ``(max_leaves + 1) x d x 258`` slots (36 MB at
136 features and 31 leaves), the two row-partition buffers, the gathered
gradients. Fresh arrays come from the system as untouched pages, and the first
write to each page is a page fault: at 1M rows, about 9,000 faults per tree.
Within :func:`reusing`, :func:`empty` hands the same thread the same array again,
so only the first tree pays (one tree, 1M x 136, 2 threads: see docs/benchmarks.md).

The scope is per thread (``threading.local``): the kernels' context
(``_threads.threads``, the context a fit runs in) opens it on the thread that
fits, and a forest's worker threads, which grow trees at once, allocate their own
as before. Leaving the outermost scope drops the arrays: nothing is held after a
fit. The buffers are scratch space, fully written before they are read, so no
tree depends on what an earlier tree left in them.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

_local = threading.local()


@contextlib.contextmanager
def reusing():
    """Within the block, :func:`empty` on this thread hands out the buffer it made last time under
    the same name; the outermost block drops them at its end."""
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield
    finally:
        _local.depth = depth
        if depth == 0:
            _local.arrays = {}


def empty(name: str, shape: tuple, dtype=np.float64) -> np.ndarray:
    """``np.empty(shape, dtype)``; within :func:`reusing`, a C-ordered view of the buffer kept under
    ``name`` when it has this dtype and room enough (else a new buffer, kept in its place): row
    sampling draws rounds of unequal sizes, and the largest so far serves them all."""
    if not getattr(_local, "depth", 0):
        return np.empty(shape, dtype)
    size = int(np.prod(shape))
    arrays = _local.__dict__.setdefault("arrays", {})
    kept = arrays.get(name)
    if kept is None or kept.dtype != np.dtype(dtype) or kept.size < size:
        arrays[name] = None  # the old buffer is freed before the new one is made
        kept = arrays[name] = np.empty(size, dtype)
    return kept[:size].reshape(shape)

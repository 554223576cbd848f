"""NUMBA_THREADING_LAYER=workqueue, which aborts a process whose threads run kernels at once, is replaced."""
import importlib
import os
import subprocess
import sys

import pytest

from twinrank.fast.runtime._threads import THREAD_SAFE_LAYERS

TWO_FITS_AT_ONCE = """
import threading, numba
import numpy as np
from twinrank.fast import LambdaMART
rng = np.random.default_rng(0)
X, y, qid = rng.random((400, 5)).astype(np.float32), rng.integers(0, 3, 400).astype(float), np.repeat(np.arange(20), 20)
fits = [threading.Thread(target=lambda: LambdaMART(n_trees=5, min_samples_leaf=2).fit(X, y, qid)) for _ in range(2)]
[t.start() for t in fits]; [t.join() for t in fits]
print(numba.threading_layer())
"""


def _loadable(library: str) -> bool:
    try:
        importlib.import_module(f"numba.np.ufunc.{library}")
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not any(_loadable(lib) for lib in THREAD_SAFE_LAYERS.values()), reason="no thread-safe layer")
def test_workqueue_is_replaced_by_a_thread_safe_layer_with_one_line():
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    done = subprocess.run([sys.executable, "-c", TWO_FITS_AT_ONCE], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr  # workqueue: SIGABRT, -6 (134 from a shell)
    assert done.stdout.strip() in THREAD_SAFE_LAYERS
    notices = [line for line in done.stderr.splitlines() if "NUMBA_THREADING_LAYER" in line]
    assert notices == [f"twinrank: NUMBA_THREADING_LAYER=workqueue aborts the process when two threads run "
                       f"kernels at once; using the thread-safe '{done.stdout.strip()}' layer instead"]

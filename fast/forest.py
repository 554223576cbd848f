"""Numba-parallel twin of `twinrank.reference.forest`: the same forests on the fast kernels.

The loop (draw order, batches, history, model assembly) is the reference's
:func:`twinrank.reference.forest.run_forest`; only the kernels it calls differ.
``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numba

from twinrank.reference import forest as _reference
from twinrank.reference.forest import TREES_PER_BATCH, run_forest, tree_sample

from . import _grower, binning, boosting, metrics, objectives, predict, tree
from . import missing as missing_strategies
from ._threads import threads

__all__ = ["RandomForest", "IGBRT", "grow_forest", "grow_trees", "trees_at_once", "run_forest",
           "tree_sample", "KERNELS", "TREES_PER_BATCH"]


def grow_trees(binned, gradients, hessians, thresholds, params, samples) -> list:
    """Numba-parallel twin of `twinrank.reference.forest.grow_trees`.

    Grows :func:`trees_at_once` trees at a time, each on one numba thread, when that
    is more than one; else one tree after the other, each on all threads. Each tree
    is the same either way (the grower's result never depends on its thread count).
    """
    def grow_one(sample, n_threads=None):
        rows, mask = sample
        with threads(n_threads):
            return tree.grow_tree(binned, gradients, hessians, thresholds, params, rows=rows,
                                  feature_mask=mask)

    n_workers = min(len(samples), trees_at_once())
    if n_workers <= 1:
        return [grow_one(sample) for sample in samples]
    with ThreadPoolExecutor(n_workers) as pool:
        return list(pool.map(lambda sample: grow_one(sample, n_threads=1), samples))


def trees_at_once() -> int:
    """How many trees :func:`grow_trees` grows at once: numba's thread count, or 1.

    Several trees at once need a grower that releases the GIL (``nogil``) and a
    threading layer that may be entered from several threads (``omp`` or ``tbb``;
    ``workqueue`` may not). Deep forest trees have many small nodes, where one tree
    per thread beats all threads on each node.
    """
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet: no layer chosen
        return 1
    if layer not in ("omp", "tbb") or not _grower.grow.targetoptions.get("nogil", False):
        return 1
    return numba.get_num_threads()


KERNELS = SimpleNamespace(
    bin_thresholds=binning.bin_thresholds, apply_bins=binning.apply_bins, grow_trees=grow_trees,
    predict_tree_binned=predict.predict_tree_binned, evaluate=metrics.evaluate,
)


def grow_forest(train, params, *, valid=None, algorithm="random_forest", model_params=None,
                callback=None):
    """Numba-parallel twin of `twinrank.reference.forest.grow_forest` (same loop, fast kernels)."""
    return run_forest(KERNELS, train, params, valid=valid, algorithm=algorithm,
                      model_params=model_params, callback=callback)


class RandomForest(_reference.RandomForest):
    __doc__ = "Numba-parallel twin of `twinrank.reference.forest.RandomForest`.\n" + (
        _reference.RandomForest.__doc__ or "")

    _engine = SimpleNamespace(grow_forest=grow_forest, predict=predict,
                              missing=missing_strategies)

    def _threads(self):
        return threads(self.n_threads)


class IGBRT(_reference.IGBRT):
    __doc__ = "Numba-parallel twin of `twinrank.reference.forest.IGBRT`.\n" + (
        _reference.IGBRT.__doc__ or "")

    _engine = SimpleNamespace(RandomForest=RandomForest, boosting=boosting, objectives=objectives,
                              predict=predict, missing=missing_strategies)

    def _threads(self):
        return threads(self.n_threads)

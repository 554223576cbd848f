"""Numba-parallel twin of `twinrank.reference.rankers.forest`: the same forests on the engine ``FAST``.

The loop (draw order, batches, history, model assembly) is the reference's
:func:`twinrank.reference.rankers.forest.run_forest`; its trees are grown by the fast
:func:`~twinrank.fast.trees.tree.grow_trees` (several trees at once on several threads).
``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.fast.evaluation import metrics  # noqa: F401  (forest.metrics: the metrics its history records)
from twinrank.fast.trees.tree import grow_trees, trees_at_once
from twinrank.reference.rankers import forest as _reference
from twinrank.reference.rankers.forest import TREES_PER_BATCH, run_forest, tree_sample

__all__ = ["RandomForest", "IGBRT", "grow_forest", "grow_trees", "trees_at_once", "run_forest",
           "tree_sample", "TREES_PER_BATCH"]


def grow_forest(train, params, *, valid=None, algorithm="random_forest", model_params=None,
                callback=None, costs=None):
    """Numba-parallel twin of `twinrank.reference.rankers.forest.grow_forest` (same loop, engine ``FAST``)."""
    return run_forest(FAST, train, params, valid=valid, algorithm=algorithm,
                      model_params=model_params, callback=callback, costs=costs)


class RandomForest(_reference.RandomForest):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.forest.RandomForest`.\n" + (
        _reference.RandomForest.__doc__ or "")
    engine = FAST


class IGBRT(_reference.IGBRT):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.forest.IGBRT`.\n" + (
        _reference.IGBRT.__doc__ or "")
    engine = FAST

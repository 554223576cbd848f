"""Numba-parallel twin of `twinrank.reference.engine`: :data:`FAST`, the fast twin's kernels.

A fast estimator is the reference's class with ``engine = FAST``; the shared loops
run the same code on these kernels.
"""
from __future__ import annotations

from twinrank.reference.engine import Engine

from . import binning, combine, exits, metrics, objectives, predict, tree
from ._threads import threads

__all__ = ["Engine", "FAST"]

FAST = Engine(
    name="fast",
    bin_thresholds=binning.bin_thresholds, apply_bins=binning.apply_bins,
    grow_tree=tree.grow_tree, grow_trees=tree.grow_trees,
    predict_tree_binned=predict.predict_tree_binned, predict_ensemble=predict.predict_ensemble,
    predict_exits=exits.predict_exits,
    squared_error=objectives.SquaredError, logistic=objectives.Logistic,
    lambdarank=objectives.LambdaRank,
    evaluate=metrics.evaluate,
    optimal_combination=combine.optimal_combination,
    threads=threads,
)

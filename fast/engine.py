"""Numba-parallel twin of `twinrank.reference.engine`: :data:`FAST`, the fast twin's kernels.

A fast estimator is the reference's class with ``engine = FAST``; the shared loops
run the same code on these kernels.
"""
from __future__ import annotations

from twinrank.reference.engine import Engine

from . import bag_rules, binning, combine, exits, metrics, objectives, predict, tree
from ._warm import after_helper, starting_helper
from ._threads import threads

__all__ = ["Engine", "FAST"]

FAST = Engine(
    name="fast",
    # a cold cache: the grower compiles in a helper process from a fit's first kernel on (_warm)
    bin_thresholds=starting_helper(binning.bin_thresholds), apply_bins=binning.apply_bins,
    grow_tree=after_helper(tree.grow_tree), grow_trees=after_helper(tree.grow_trees),
    quantize_gradients=tree.quantize_gradients,
    predict_tree_binned=predict.predict_tree_binned, add_leaf_values=predict.add_leaf_values,
    predict_ensemble=predict.predict_ensemble,
    predict_exits=exits.predict_exits,
    squared_error=objectives.SquaredError, logistic=objectives.Logistic,
    lambdarank=objectives.LambdaRank,
    evaluate=metrics.evaluate,
    optimal_combination=combine.optimal_combination,
    combine_scores=bag_rules.combine_scores,
    threads=threads,
)

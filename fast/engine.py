"""Numba-parallel twin of `twinrank.reference.engine`: :data:`FAST`, the fast twin's kernels.

A fast estimator is the reference's class with ``engine = FAST``; the shared loops
run the same code on these kernels.
"""
from __future__ import annotations

from twinrank.fast.attribution import contributions
from twinrank.fast.combination import bag_rules, combine
from twinrank.fast.costs import exits
from twinrank.fast.evaluation import metrics, variance
from twinrank.fast.losses import objectives
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees import binning, predict, tree
from twinrank.fast.trees._layout import low_memory
from twinrank.fast.trees._warm import after_helper, starting_helper
from twinrank.reference.engine import Engine

__all__ = ["Engine", "FAST"]

FAST = Engine(
    name="fast",
    # a cold cache: the grower compiles in a helper process from a fit's first kernel on (_warm)
    bin_thresholds=starting_helper(binning.bin_thresholds), apply_bins=binning.apply_bins,
    grow_tree=after_helper(tree.grow_tree), grow_trees=after_helper(tree.grow_trees),
    quantize_gradients=tree.quantize_gradients,
    predict_tree=predict.predict_tree, predict_tree_binned=predict.predict_tree_binned,
    add_leaf_values=predict.add_leaf_values,
    predict_ensemble=predict.predict_ensemble,
    predict_contributions=contributions.predict_contributions,
    predict_exits=exits.predict_exits, frozen_now=exits.frozen_now,
    squared_error=objectives.SquaredError, logistic=objectives.Logistic,
    lambdarank=objectives.LambdaRank,
    evaluate=metrics.evaluate, decompose=variance.decompose,
    optimal_combination=combine.optimal_combination,
    combine_scores=bag_rules.combine_scores,
    threads=threads,
    low_memory=low_memory,
)

"""Numba-parallel twin of `twinrank.reference.analysis.cost`: model cost and metric-cost curves on the engine ``FAST``.

The bookkeeping (the cumulative cost $C(t)$, the curve's loop) is the reference's
(:func:`~twinrank.reference.analysis.cost.run_model_cost`,
:func:`~twinrank.reference.analysis.cost.run_metric_cost_curve`); the exits, the per-tree
scores and the metric are the fast engine's.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.analysis.cost import (
    EarlyExit,
    ModelCost,
    cumulative_cost,
    model_trees,
    run_metric_cost_curve,
    run_model_cost,
)

__all__ = ["ModelCost", "model_cost", "metric_cost_curve", "run_model_cost", "run_metric_cost_curve",
           "cumulative_cost", "model_trees", "EarlyExit"]


def model_cost(model, X, feature_costs=None, tree_cost: float = 1.0, exits=None) -> ModelCost:
    """Numba-parallel twin of `twinrank.reference.analysis.cost.model_cost` (exits in the fast scorer)."""
    return run_model_cost(FAST, model, X, feature_costs, tree_cost, exits)


def metric_cost_curve(model, data, feature_costs=None, *, metric: str = "ndcg@10",
                      convention: str = "lightgbm", tree_cost: float = 1.0, exits=None) -> dict:
    """Numba-parallel twin of `twinrank.reference.analysis.cost.metric_cost_curve`."""
    return run_metric_cost_curve(FAST, model, data, feature_costs, metric=metric, convention=convention,
                                 tree_cost=tree_cost, exits=exits)

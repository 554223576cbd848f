"""Numba-parallel twin of `twinrank.reference.costs.cost`: model cost and metric-cost curves on the fast scorer.

The bookkeeping (the cumulative cost $C(t)$, the curve's loop) is the reference's;
the exits come from :func:`twinrank.fast.costs.exits.predict_exits`, the per-tree scores
from :func:`twinrank.fast.trees.predict.predict_tree` and the metric from the fast metrics.
"""
from __future__ import annotations

from twinrank.fast.costs import exits as _exits
from twinrank.fast.evaluation import metrics
from twinrank.fast.trees import predict
from twinrank.reference.costs.cost import ModelCost, cost_with, cumulative_cost, curve_with, model_trees
from twinrank.reference.costs.exits import EarlyExit

__all__ = ["ModelCost", "model_cost", "metric_cost_curve", "cumulative_cost", "model_trees",
           "EarlyExit"]


def model_cost(model, X, feature_costs=None, tree_cost: float = 1.0, exits=None) -> ModelCost:
    """Numba-parallel twin of `twinrank.reference.costs.cost.model_cost` (exits in the fast scorer)."""
    return cost_with(_exits.predict_exits, model, X, feature_costs, tree_cost, exits)


def metric_cost_curve(model, data, feature_costs=None, *, metric: str = "ndcg@10",
                      convention: str = "lightgbm", tree_cost: float = 1.0, exits=None) -> dict:
    """Numba-parallel twin of `twinrank.reference.costs.cost.metric_cost_curve`."""
    return curve_with(predict.predict_tree, _exits.frozen_now, metrics.evaluate, model, data,
                      feature_costs, metric, convention, tree_cost, exits)

r"""The cumulative cost of the first $t$ trees of a model (Mohan 2010, Eqs. 6.2-6.4).

A document scored by the first $t$ trees of a model pays, per tree, an evaluation
cost $e$ (``tree_cost``) plus the costs of the features that tree newly
introduces; a feature is computed once per document (free after first use), so

$$C(t) = e\,t + \sum_{f \in F_t} c(f), \qquad F_t = \bigcup_{s \le t} \mathrm{features}(f_s),$$

and a document that exits after $t_i$ trees (:mod:`~twinrank.reference.costs.exits`)
costs $C(t_i)$. The model's cost is the mean over documents; reported per tree
it is cumulative, $\bar C(t) = \frac1n \sum_i C(\min(t, t_i))$, so it grows with
the trees and falls with early exits. The thesis prints $\frac1T$ times the sum
(Eq. 6.4) but plots a cost that grows with the trees: we implement the sum; divide
by $T$ for the thesis's per-tree average. A prior model's trees are the first trees
(:func:`~twinrank.reference.costs.exits.flat_model`); a McRank model's classifiers are
evaluated one after the other, all on every document (no exits).

This module is the bookkeeping; :mod:`~twinrank.reference.analysis.cost` scores a model
with it (:func:`~twinrank.reference.analysis.cost.model_cost`, the metric-cost curve).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference._feature_costs import feature_cost_array
from twinrank.reference.costs.exits import flat_model
from twinrank.reference.errors import ParameterError

__all__ = ["ModelCost", "model_trees", "cumulative_cost", "cost_summary", "costs_of"]

@dataclass
class ModelCost:
    """The cost of scoring documents with a model (the module docstring).

    Attributes
    ----------
    per_document : float64 (n_rows,), $C(t_i)$
    exit_tree : int64 (n_rows,), $t_i$, the trees each document was scored with
    cost_per_tree : float64 (T,), $\\bar C(t)$ for $t = 1..T$
    mean_cost : float, $\\bar C(T)$, the mean of ``per_document``
    mean_feature_cost : float, the same without the per-tree evaluation cost
    new_feature_cost : float64 (T,), the costs of the features each tree newly introduces
    """

    per_document: np.ndarray
    exit_tree: np.ndarray
    cost_per_tree: np.ndarray
    mean_cost: float
    mean_feature_cost: float
    new_feature_cost: np.ndarray


def model_trees(model) -> list:
    """The trees a model evaluates, in order (a prior model's first; McRank's classifiers')."""
    if hasattr(model, "classifiers"):
        return [t for c in model.classifiers for t in flat_model(c)[0]]
    return flat_model(model)[0]


def cumulative_cost(trees: list, costs: np.ndarray, tree_cost: float = 1.0) -> tuple:
    """``(C, new)``: $C(t)$ for $t = 0..T$ (float64 (T + 1,)) and each tree's new feature costs (T,)."""
    paid = np.zeros(len(costs), dtype=bool)
    new = np.zeros(len(trees))  # (T,)
    for t, tree in enumerate(trees):
        used = np.zeros(len(costs), dtype=bool)
        used[tree.feature[tree.feature >= 0]] = True
        new[t] = costs[used & ~paid].sum()
        paid |= used
    return np.r_[0.0, np.cumsum(new + tree_cost)], new


def cost_summary(C, new, exit_tree, tree_cost) -> ModelCost:
    """The :class:`ModelCost` of documents exiting after ``exit_tree`` trees, from $C(t)$ and the new costs."""
    T = len(C) - 1
    t = np.arange(1, T + 1)  # (T,)
    per_tree = np.array([C[np.minimum(k, exit_tree)].mean() for k in t]) if len(exit_tree) else np.zeros(T)
    per_document = C[exit_tree]  # (n_rows,)
    mean = float(per_document.mean()) if len(per_document) else 0.0
    return ModelCost(per_document, exit_tree, per_tree, mean,
                     mean - tree_cost * float(exit_tree.mean() if len(exit_tree) else 0.0), new)


def costs_of(model, feature_costs) -> np.ndarray:
    """The feature costs (float64 (n_features,)): given, or stored in the model."""
    if feature_costs is None:
        feature_costs = (getattr(model, "params", None) or {}).get("feature_costs")
        if feature_costs is None:
            raise ParameterError("no feature costs: give feature_costs (the model stores none)")
    return feature_cost_array(feature_costs, model.n_features)

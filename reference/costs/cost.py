r"""The cost of scoring with a model, with and without early exits (Mohan 2010, Eqs. 6.2-6.4).

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

:func:`metric_cost_curve` pairs $\bar C(t)$ with the metric of the scores after $t$
trees, staged: each tree's predictions are computed once and accumulated.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference._feature_costs import feature_cost_array
from twinrank.reference.costs import exits as _exits
from twinrank.reference.costs.exits import EarlyExit, flat_model
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics
from twinrank.reference.io.data import Dataset
from twinrank.reference.params import check_real
from twinrank.reference.trees import predict

__all__ = ["ModelCost", "model_cost", "metric_cost_curve", "cumulative_cost", "model_trees",
           "EarlyExit"]


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


def model_cost(model, X, feature_costs=None, tree_cost: float = 1.0,
               exits: EarlyExit | None = None) -> ModelCost:
    """The cost of scoring the rows of ``X`` (a Dataset, or an array: one query) with ``model``.

    ``feature_costs``: an array (n_features,), a costs file (``feature cost`` lines), or None
    for the costs stored in the model (``params["feature_costs"]``). ``exits``: an
    :class:`~twinrank.reference.costs.exits.EarlyExit` (per query for a Dataset).
    """
    return cost_with(_exits.predict_exits, model, X, feature_costs, tree_cost, exits)


def cost_with(predict_exits, model, X, feature_costs, tree_cost, exits) -> ModelCost:
    """:func:`model_cost` with the exit tree of each row from ``predict_exits`` (a twin's)."""
    check_real("tree_cost", tree_cost, low=0.0)
    costs = costs_of(model, feature_costs)
    trees = model_trees(model)
    C, new = cumulative_cost(trees, costs, tree_cost)
    X, offsets = (X.X, X.query_offsets) if isinstance(X, Dataset) else (np.asarray(X), None)
    if hasattr(model, "classifiers"):
        if exits is not None:
            raise ParameterError("early exits need one ensemble; a McRank model has one per class")
        exit_tree = np.full(len(X), len(trees), dtype=np.int64)
    else:
        exit_tree = predict_exits(model, X, offsets, exits).exit_tree
    return _summary(C, new, exit_tree, tree_cost)


def _summary(C, new, exit_tree, tree_cost) -> ModelCost:
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


def metric_cost_curve(model, data: Dataset, feature_costs=None, *, metric: str = "ndcg@10",
                      convention: str = "lightgbm", tree_cost: float = 1.0,
                      exits: EarlyExit | None = None) -> dict:
    """The metric and the mean cost after each tree, for metric-vs-cost plots.

    Returns ``{"n_trees": (T,), "cost": (T,) the cumulative mean cost, metric: (T,)}``,
    the metric of the scores after $t$ trees (exited documents placed by ``exits``);
    ``metric`` may be a list of names (one entry each).
    """
    return curve_with(predict.predict_tree, _exits.frozen_now, metrics.evaluate, model, data,
                      feature_costs, metric, convention, tree_cost, exits)


def curve_with(predict_tree, frozen_now, evaluate, model, data, feature_costs, metric, convention,
               tree_cost, exits) -> dict:
    """:func:`metric_cost_curve` on a twin's ``predict_tree``, ``frozen_now`` and ``evaluate``."""
    if hasattr(model, "classifiers"):
        raise ParameterError("metric_cost_curve needs one ensemble, not a McRank model")
    costs = costs_of(model, feature_costs)
    trees, weights, base = flat_model(model)
    C, _ = cumulative_cost(trees, costs, tree_cost)
    X = predict.missing_applied(model, np.asarray(data.X))
    T, n = len(trees), data.n_rows
    stages = exits or EarlyExit(every=max(1, T), fraction=0.0, exited="keep")
    groups = _exits.groups_of(n, data.query_offsets, stages)
    scores, active = np.full(n, base), np.ones(n, dtype=bool)  # (n_rows,)
    exit_tree = np.full(n, T, dtype=np.int64)  # survivors so far: T
    names = [metric] if isinstance(metric, str) else list(metric)
    values, cost = {name: np.zeros(T) for name in names}, np.zeros(T)
    for t in range(T):
        rows = np.flatnonzero(active)
        scores[rows] += weights[t] * predict_tree(trees[t], X[rows])
        if t + 1 < T and (t + 1) % stages.every == 0:
            out = frozen_now(scores, active, groups, stages)
            exit_tree[out], active[out] = t + 1, False
        placed = _exits.placed(scores, exit_tree, stages)
        found = evaluate(names, data.y, placed, data.query_offsets, convention=convention)
        for name in names:
            values[name][t] = found[name]
        cost[t] = C[np.minimum(t + 1, exit_tree)].mean()
    return {"n_trees": np.arange(1, T + 1), "cost": cost, **values}

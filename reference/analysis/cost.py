r"""The cost of scoring with a model, with and without early exits (Mohan 2010, Eqs. 6.2-6.4).

A document that exits after $t_i$ trees (:mod:`~twinrank.reference.costs.exits`) costs
$C(t_i) = e\,t_i + \sum_{f \in F_{t_i}} c(f)$, the evaluation cost of its trees plus each
feature they use once (:mod:`~twinrank.reference.costs.cumulative`, where the thesis's
Eq. 6.4 and our reading of it are). :func:`model_cost` scores a model's documents with
their exits and reports the mean cost, per document and per tree; :func:`metric_cost_curve`
pairs the mean cost after $t$ trees with the metric of the scores after $t$ trees, staged:
each tree's predictions are computed once and accumulated. Both run on an engine
(``run_model_cost``, ``run_metric_cost_curve``): the exits, the per-tree scores and the
metric are the twin's kernels.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.costs import exits as _exits
from twinrank.reference.costs.cumulative import (
    ModelCost,
    cost_summary,
    costs_of,
    cumulative_cost,
    model_trees,
)
from twinrank.reference.costs.exits import EarlyExit, flat_model
from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset
from twinrank.reference.params import check_real
from twinrank.reference.trees import predict

__all__ = ["ModelCost", "model_cost", "metric_cost_curve", "run_model_cost", "run_metric_cost_curve",
           "cumulative_cost", "model_trees", "EarlyExit"]


def model_cost(model, X, feature_costs=None, tree_cost: float = 1.0,
               exits: EarlyExit | None = None) -> ModelCost:
    """The cost of scoring the rows of ``X`` (a Dataset, or an array: one query) with ``model``.

    ``feature_costs``: an array (n_features,), a costs file (``feature cost`` lines), or None
    for the costs stored in the model (``params["feature_costs"]``). ``exits``: an
    :class:`~twinrank.reference.costs.exits.EarlyExit` (per query for a Dataset).
    """
    return run_model_cost(REFERENCE, model, X, feature_costs, tree_cost, exits)


def run_model_cost(engine: Engine, model, X, feature_costs=None, tree_cost: float = 1.0,
                   exits: EarlyExit | None = None) -> ModelCost:
    """:func:`model_cost` with the exit tree of each row from ``engine.predict_exits``."""
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
        exit_tree = engine.predict_exits(model, X, offsets, exits).exit_tree
    return cost_summary(C, new, exit_tree, tree_cost)


def metric_cost_curve(model, data: Dataset, feature_costs=None, *, metric: str = "ndcg@10",
                      convention: str = "lightgbm", tree_cost: float = 1.0,
                      exits: EarlyExit | None = None) -> dict:
    """The metric and the mean cost after each tree, for metric-vs-cost plots.

    Returns ``{"n_trees": (T,), "cost": (T,) the cumulative mean cost, metric: (T,)}``,
    the metric of the scores after $t$ trees (exited documents placed by ``exits``);
    ``metric`` may be a list of names (one entry each).
    """
    return run_metric_cost_curve(REFERENCE, model, data, feature_costs, metric=metric, convention=convention,
                                 tree_cost=tree_cost, exits=exits)


def run_metric_cost_curve(engine: Engine, model, data: Dataset, feature_costs=None, *, metric: str = "ndcg@10",
                          convention: str = "lightgbm", tree_cost: float = 1.0,
                          exits: EarlyExit | None = None) -> dict:
    """:func:`metric_cost_curve` on ``engine``'s ``predict_tree``, ``frozen_now`` and ``evaluate``."""
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
        scores[rows] += weights[t] * engine.predict_tree(trees[t], X[rows])
        if t + 1 < T and (t + 1) % stages.every == 0:
            out = engine.frozen_now(scores, active, groups, stages)
            exit_tree[out], active[out] = t + 1, False
        placed = _exits.placed(scores, exit_tree, stages)
        found = engine.evaluate(names, data.y, placed, data.query_offsets, convention=convention)
        for name in names:
            values[name][t] = found[name]
        cost[t] = C[np.minimum(t + 1, exit_tree)].mean()
    return {"n_trees": np.arange(1, T + 1), "cost": cost, **values}

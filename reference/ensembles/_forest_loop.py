"""The loop of a random forest for ranking, written once for both twins: draws, batches, history, model.

What a forest is, its draws and their order: :mod:`~twinrank.reference.rankers.forest`, whose
public names these are.
"""
from __future__ import annotations

import warnings

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.ensembles.boosting import why_no_split
from twinrank.reference.errors import TwinrankWarning
from twinrank.reference.io.data import Dataset, named_sets, query_rows
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import ForestParams
from twinrank.reference.sampling import bootstrap, feature_masks, make_rng, subsample

TREES_PER_BATCH = ForestParams.cost_batch_size  # trees drawn, then grown, at a time (default)


def grow_forest(train: Dataset, params: ForestParams, *, valid: Dataset | None = None,
                algorithm: str = "random_forest", model_params: dict | None = None,
                callback=None, costs=None) -> Ensemble:
    r"""Grow a random forest of ``params.n_trees`` trees on ``train`` (:mod:`~twinrank.reference.rankers.forest`).

    Parameters
    ----------
    train : Dataset
    params : ForestParams
    valid : Dataset, or a list of ``(name, Dataset)`` pairs, optional; every metric of
        ``params.metrics`` of the forest of the first ``t`` trees is recorded on each for
        ``t = 1 .. T`` (no early stopping: more trees do not overfit).
    algorithm, model_params : stored on the model.
    callback : callable ``(iteration, record)`` called after every tree, ``record`` a dict
        of metric values (``"train:ndcg@10"`` in-sample, ``"valid:ndcg@10"``). When it returns
        True the forest stops: it is the mean of the trees so far (a batch's later trees, grown
        at once, are dropped).
    costs : CostLedger, optional (:mod:`~twinrank.reference._feature_costs`); the trees of
        a batch of ``params.cost_batch_size`` are grown on the same costs, then the batch
        is paid for (free after use). None: no costs.

    Returns
    -------
    Ensemble with tree weights $1/T$ and base score 0.
    """
    return run_forest(REFERENCE, train, params, valid=valid, algorithm=algorithm,
                      model_params=model_params, callback=callback, costs=costs)


def run_forest(engine: Engine, train, params, *, valid=None, algorithm="random_forest",
               model_params=None, callback=None, costs=None) -> Ensemble:
    """The loop of :func:`grow_forest`, on the kernels of ``engine``."""
    rng = make_rng(params.seed)
    thresholds = engine.bin_thresholds(train.X, params.max_bins, params.subsample_for_bin, params.seed)
    binned = engine.apply_bins(train.X, thresholds)
    gradients, hessians = -train.y, np.ones(train.n_rows)  # leaf value -G/H = mean label
    if train.weight is not None:  # the weighted mean label, -sum w g / sum w h (the rows' weights)
        gradients, hessians = gradients * train.weight, hessians * train.weight
    scored = [(train, binned, np.zeros(train.n_rows), "train")]  # running sums of tree scores
    scored += [(data, engine.apply_bins(data.X, thresholds), np.zeros(data.n_rows), name)
               for name, data in named_sets(valid)]
    trees, history, stopped = [], {}, False
    while len(trees) < params.n_trees and not stopped:
        n_batch = min(params.cost_batch_size, params.n_trees - len(trees))
        samples = [tree_sample(rng, train, params) for _ in range(n_batch)]
        batch = engine.grow_trees(binned, gradients, hessians, thresholds, params.tree, samples,
                                  feature_cost=None if costs is None else costs.current)
        if costs is not None:
            costs.pay(batch)
        for f in batch:
            trees.append(f)
            record = _record(engine, params, scored, f, len(trees))
            for key, value in record.items():
                history.setdefault(key, []).append(value)
            if callback is not None and callback(len(trees), record):
                stopped = True
                break
    if all(f.n_nodes == 1 for f in trees):
        why = why_no_split(train, thresholds, gradients, None, params.tree)
        warnings.warn(f"every tree of the forest is a single leaf: {why}; the model scores every row "
                      "the mean label", TwinrankWarning, stacklevel=2)
    return Ensemble(trees=trees, tree_weights=np.full(len(trees), 1.0 / len(trees)),
                    base_score=0.0, n_features=train.n_features, algorithm=algorithm,
                    params=dict(model_params or {}), history=history)


def _record(engine, params: ForestParams, scored: list, f, n_trees: int) -> dict:
    """Add tree ``f`` to each data set's running sum; every metric of the mean of ``n_trees`` trees."""
    record = {}
    for data, data_binned, sums, name in scored:
        sums += engine.predict_tree_binned(f, data_binned)  # (n_rows,) in place
        values = engine.evaluate(list(params.metrics), data.y, sums / n_trees, data.query_offsets,
                                 convention=params.convention)
        record.update({f"{name}:{metric}": float(values[metric]) for metric in params.metrics})
    return record


def tree_sample(rng, train: Dataset, params: ForestParams):
    """One tree's ``(rows, feature_mask)``: rows None for all rows; the draws in documented order."""
    rows = None
    if params.query_subsample < 1.0:
        queries = subsample(rng, train.n_queries, params.query_subsample)
        rows = query_rows(train.query_offsets, queries)  # (n_sampled_rows,)
    if params.bootstrap:
        pool = np.arange(train.n_rows) if rows is None else rows
        rows = pool[bootstrap(rng, len(pool))]  # (len(pool),) sorted, rows may repeat
    k = params.tree.n_features_per_node(train.n_features)
    n_nodes = params.tree.nodes_for(train.n_rows if rows is None else len(rows))  # the nodes its rows can fill
    mask = feature_masks(rng, n_nodes, train.n_features, k)  # (n_nodes, n_features)
    return rows, mask

r"""DART and X-DART: LambdaMART with dropout, and with dropout and pruning (both twins share this loop).

The ensemble $E$ grows one LambdaMART tree per iteration (Lucchese, Nardini, Orlando,
Perego & Trani, SIGIR 2017, Alg. 1; DART: Vinayak & Gilad-Bachrach 2015):

1. $k$ from the drop strategy (:class:`DropCount`), at most $|E|$;
2. the dropout set $D$: $k$ trees of $E$ drawn uniformly without replacement;
3. the new tree $T$ is fit to the lambdas of the scores of $E \setminus D$,
   its Newton leaf values shrunk by $\eta$;
4. **DART** normalises: $T$ enters with weight $1/(k+\eta)$ (so $\eta/(k+\eta)$ of its
   Newton values) and every tree of $D$ is scaled by $k/(k+\eta)$;
   **X-DART** first tests pruning: if the validation loss $L = 1 - M$ of
   $E \setminus D \cup \{T\}$ is below the best loss seen so far, $D$ leaves the ensemble
   for good and $T$ stays as it is ($\eta$ times its Newton values); otherwise it
   normalises as DART. The best loss becomes the loss of the resulting model when that is lower.

With $k = 0$ nothing is dropped and $T$ enters at $\eta$ in both, as in XGBoost's and
LightGBM's DART (the paper's rule read literally gives weight 1: a whole Newton step, which
with $\eta < 1$ would leave the first $1/r$ trees of the ratio strategy unshrunk). Pruning removes trees, so $|E|$ is
not monotone: the loop ends when $|E|$ reaches ``n_trees`` or after the iteration cap
(``DARTParams.iteration_cap``).

**Randomness.** Each iteration draws, from the run's one generator and in this order: the
dropout set (nothing when $k = 0$), the round's query sample, the node feature subsets
(:func:`~twinrank.reference.boosting.grow_round`). The contributions of the dropped trees are
recomputed from the binned data, $k$ tree predictions per iteration; no trees x rows
matrix is held.

**History** (one value per iteration): ``size`` ($|E|$ after it), ``dropped`` ($k$),
``branch`` (``"prune"``, ``"normalize"``, or ``"add"`` when $k = 0$), ``valid_loss`` and
``best_loss`` (with validation data), and ``valid:<metric>``.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._dart_params import DARTParams
from ._ensemble import Snapshot
from .boosting import grow_round, initial_scores, warn_no_tree
from .data import Dataset
from .engine import Engine
from .errors import ParameterError
from .model import Ensemble
from .objectives import Loss
from .params import BoostParams
from .sampling import dropout_set, make_rng

__all__ = ["run_dart", "DropCount", "on_grid", "TIE_GRID"]

TIE_GRID = 2.0 ** 24  # scores are ranked on multiples of 1 / TIE_GRID (:func:`on_grid`)


class DropCount:
    r"""How many trees an iteration drops: the ratio, fixed or adaptive strategy.

    ``ratio``: $\lfloor r |E| \rfloor$; ``fixed``: $k$; ``adaptive``: $\lfloor k \rfloor$
    with $k$ starting at 1, $k \leftarrow \min(k + \mathrm{step}, UB)$ after an iteration
    and $k \leftarrow 1$ after one that improved the best loss. Never more than $|E|$.
    """

    def __init__(self, params: DARTParams):
        self.params = params
        self.k = 1.0  # the adaptive strategy's running k

    def next(self, size: int) -> int:
        """$k$ of the next iteration, for an ensemble of ``size`` trees."""
        p = self.params
        k = {"ratio": math.floor(p.drop_rate * size), "fixed": p.drop_k,
             "adaptive": math.floor(min(self.k, p.cap(size)))}[p.drop]
        return min(int(k), size)

    def update(self, improved: bool, size: int) -> None:
        """After an iteration: the adaptive k grows, or returns to 1 after an improvement."""
        self.k = 1.0 if improved else min(self.k + self.params.drop_step, self.params.cap(size))


class _Side:
    """One data set's binned features and the running scores of $E$ on it."""

    def __init__(self, engine: Engine, data: Dataset, thresholds, init_model, init_scores):
        self.data = data
        self.binned = engine.apply_bins(data.X, thresholds)
        self.scores = initial_scores(engine, data, init_model, init_scores, 0.0)  # (n_rows,)

    def contribution(self, engine, trees, weights) -> np.ndarray:
        r"""$\sum_{j} w_j f_j(x)$ over the given trees, one tree prediction each."""
        total = np.zeros(self.data.n_rows)
        for tree, weight in zip(trees, weights):
            total += weight * engine.predict_tree_binned(tree, self.binned)
        return total


# --8<-- [start:run_dart]
def run_dart(engine: Engine, train: Dataset, loss: Loss, params: BoostParams, dart: DARTParams, *,
             prune: bool, valid: Dataset | None = None, init_model=None, init_scores=None,
             algorithm: str = "dart", model_params: dict | None = None, callback=None) -> Ensemble:
    """Grow a DART (``prune=False``) or X-DART (``prune=True``) ensemble of ``params.n_trees`` trees.

    ``loss`` gives the lambdas; ``params`` the trees, learning rate, sampling and the
    recorded metric; ``dart`` the drop strategy, cap, prune metric and snapshot sizes.
    X-DART and the adaptive strategy need ``valid``.
    """
    if (prune or dart.drop == "adaptive") and valid is None:
        raise ParameterError("X-DART's pruning test and the adaptive drop strategy read a validation loss: "
                             "give validation data (fit(..., eval_set=[valid]); --valid)")
    rng = make_rng(params.seed)
    thresholds = engine.bin_thresholds(train.X, params.max_bins)
    fit = _Side(engine, train, thresholds, init_model, init_scores)
    held = None if valid is None else _Side(engine, valid, thresholds, init_model, None)
    n_features_per_node = params.tree.n_features_per_node(train.n_features)
    g, h = np.empty(train.n_rows), np.empty(train.n_rows)  # (n_rows,) float64, each round's
    trees, weights, ids = [], [], []  # E: its trees, their weights, the iteration each was grown in
    grown, snapshots, history = {}, {}, {}
    counts = DropCount(dart)
    best = None if held is None else 1.0 - _value(engine, params, dart.prune_metric, held)
    eta = params.learning_rate
    for it in range(dart.iteration_cap(params.n_trees)):
        if len(trees) >= params.n_trees:
            break
        k = counts.next(len(trees))
        drop = dropout_set(rng, len(trees), k)  # (k,) indices into E
        dropped = ([trees[j] for j in drop], [weights[j] for j in drop])
        train_drop = fit.contribution(engine, *dropped)  # (n_rows,)
        f, rows = grow_round(engine, rng, train, fit.binned, thresholds, loss, on_grid(fit.scores - train_drop), params,
                             n_features_per_node, g, h)
        if f.n_nodes == 1:  # no split improves the loss
            if not trees:
                warn_no_tree(train, thresholds, g, rows, params.tree, init_model)
            break
        f = dataclasses.replace(f, value=f.value * eta)
        train_step = engine.predict_tree_binned(f, fit.binned)  # (n_rows,) eta times the Newton step
        if held is not None:
            valid_drop = held.contribution(engine, *dropped)
            valid_step = engine.predict_tree_binned(f, held.binned)
        record = {"dropped": k}
        pruned = False
        if prune and k > 0:
            candidate = 1.0 - _value(engine, params, dart.prune_metric, held,
                                     held.scores - valid_drop + valid_step)
            pruned = candidate < best
        if pruned:  # E <- E \ D + T, T as it is
            keep = np.setdiff1d(np.arange(len(trees)), drop)
            trees, weights, ids = [trees[j] for j in keep], [weights[j] for j in keep], [ids[j] for j in keep]
            fit.scores = fit.scores - train_drop + train_step
            if held is not None:
                held.scores = held.scores - valid_drop + valid_step
            new_weight = 1.0
        else:  # normalise: T at eta / (k + eta), D scaled by k / (k + eta)
            new_weight = 1.0 / (k + eta) if k > 0 else 1.0  # times the eta already in T's leaves
            shrink = k / (k + eta) if k > 0 else 1.0
            for j in drop:
                weights[j] *= shrink
            fit.scores = fit.scores - (1.0 - shrink) * train_drop + new_weight * train_step
            if held is not None:
                held.scores = held.scores - (1.0 - shrink) * valid_drop + new_weight * valid_step
        trees.append(f)
        weights.append(new_weight)
        ids.append(it)
        grown[it] = f
        record["branch"] = "add" if k == 0 else ("prune" if pruned else "normalize")
        improved = False
        if held is not None:
            value = _value(engine, params, params.metric, held)
            prune_value = value if dart.prune_metric == params.metric else _value(
                engine, params, dart.prune_metric, held)
            record["valid_loss"] = 1.0 - prune_value
            improved = record["valid_loss"] < best
            best = min(best, record["valid_loss"])
            record["best_loss"] = best
            record[f"valid:{params.metric}"] = value
        counts.update(improved, len(trees))
        record["size"] = len(trees)
        if len(trees) in dart.snapshot_sizes and len(trees) not in snapshots:
            snapshots[len(trees)] = (list(ids), list(weights))
        for key, value in record.items():
            history.setdefault(key, []).append(value)
        if callback is not None:
            callback(it + 1, {key: v for key, v in record.items() if key.startswith("valid:")})
    return _ensemble(train, trees, weights, ids, grown, snapshots, init_model, algorithm, model_params, history)
# --8<-- [end:run_dart]


def _value(engine, params: BoostParams, metric: str, side: _Side, scores=None) -> float:
    """``metric`` of ``scores`` (default: the side's running scores) on the side's data, in ``params.convention``."""
    data = side.data
    scores = on_grid(side.scores if scores is None else scores)
    return float(engine.evaluate([metric], data.y, scores, data.query_offsets, convention=params.convention)[metric])


def on_grid(scores: np.ndarray) -> np.ndarray:
    r"""``scores`` rounded to the nearest multiple of $2^{-24}$, exactly (``TIE_GRID``).

    Dropping a tree subtracts its term: $(s + v) - v$ is not $s$ in floating point, so two
    documents that share every leaf but the dropped tree's, tied in real arithmetic, differ
    in their last bits, and the bits differ between twins (whose leaf values are summed in
    other orders). The loop ranks, for the lambdas and the validation loss, by scores on a
    grid far coarser than that noise and far finer than any score gap that matters: real ties
    are ties again, broken by input order (DESIGN.md), in both twins.
    """
    return np.rint(scores * TIE_GRID) / TIE_GRID  # exact: a power of two scales without rounding


def _ensemble(train, trees, weights, ids, grown, snapshots, init_model, algorithm, model_params,
              history) -> Ensemble:
    """The final $E$, its snapshots indexing the pool ``trees + retired_trees`` (retired: in a snapshot only)."""
    retired = sorted({i for members, _ in snapshots.values() for i in members} - set(ids))
    position = {tree_id: p for p, tree_id in enumerate(list(ids) + retired)}
    return Ensemble(
        trees=trees, tree_weights=np.array(weights, dtype=np.float64), base_score=0.0,
        n_features=train.n_features, init_model=init_model, algorithm=algorithm,
        params=dict(model_params or {}), history=history, best_iteration=None,
        snapshots=[Snapshot(size, [position[i] for i in members], w) for size, (members, w) in
                   sorted(snapshots.items())],
        retired_trees=[grown[i] for i in retired],
    )

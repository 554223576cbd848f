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
(:func:`~twinrank.reference.ensembles.boosting.grow_round`). The contributions of the dropped trees are
recomputed from the binned data, $k$ tree predictions per iteration; no trees x rows
matrix is held.

**History** (one value per iteration): ``size`` ($|E|$ after it), ``dropped`` ($k$),
``branch`` (``"prune"``, ``"normalize"``, or ``"add"`` when $k = 0$), ``valid_loss`` and
``best_loss`` (with validation data: the prune metric's loss on the first set), and
``<set>:<metric>`` of every metric on every validation set (``valid:ndcg@10``).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from twinrank.reference._dart_params import DARTParams
from twinrank.reference.engine import Engine
from twinrank.reference.ensembles.boosting import TIE_GRID, grow_round, initial_scores, on_grid, warn_no_tree
from twinrank.reference.io._ensemble import Snapshot
from twinrank.reference.io.data import Dataset, named_sets
from twinrank.reference.io.model import Ensemble
from twinrank.reference.losses.objectives import Loss
from twinrank.reference.params import BoostParams
from twinrank.reference.sampling import dropout_set, make_rng

__all__ = ["run_dart", "DropCount", "normalisation", "on_grid", "TIE_GRID"]

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

    def __init__(self, engine: Engine, data: Dataset, thresholds, init_model, init_scores, name: str = "train"):
        self.data, self.name = data, name
        self.binned = engine.apply_bins(data.X, thresholds)
        self.scores = initial_scores(engine, data, init_model, init_scores, 0.0)  # (n_rows,)

    def contribution(self, engine, trees, weights) -> np.ndarray:
        r"""$\sum_{j} w_j f_j(x)$ over the given trees, one tree prediction each."""
        total = np.zeros(self.data.n_rows)
        for tree, weight in zip(trees, weights):
            total += weight * engine.predict_tree_binned(tree, self.binned)
        return total

    def move(self, dropped: np.ndarray, step: np.ndarray, keep: float, new_weight: float) -> None:
        """Scores after the dropped trees keep ``keep`` of their term and the new tree enters at ``new_weight``."""
        self.scores = self.scores - (1.0 - keep) * dropped + new_weight * step  # (n_rows,)


class _Trees:
    """The ensemble $E$: its trees, their weights, and the iteration each tree was grown in."""

    def __init__(self):
        self.trees, self.weights, self.ids = [], [], []

    def __len__(self) -> int:
        return len(self.trees)

    def subset(self, drop) -> tuple:
        return [self.trees[j] for j in drop], [self.weights[j] for j in drop]

    def remove(self, drop) -> None:
        keep = np.setdiff1d(np.arange(len(self)), drop)
        self.trees, self.weights, self.ids = ([v[j] for j in keep] for v in (self.trees, self.weights, self.ids))

    def scale(self, drop, factor: float) -> None:
        for j in drop:
            self.weights[j] *= factor

    def add(self, tree, weight: float, iteration: int) -> None:
        self.trees.append(tree)
        self.weights.append(weight)
        self.ids.append(iteration)


def normalisation(k: int, eta: float) -> tuple[float, float]:
    r"""DART's rule: the dropped trees keep $k/(k+\eta)$ of their weight, the new tree (its leaves
    already times $\eta$) enters at $1/(k+\eta)$; with nothing dropped, ``(1, 1)``: the $\eta$ step."""
    return (k / (k + eta), 1.0 / (k + eta)) if k > 0 else (1.0, 1.0)


# --8<-- [start:run_dart]
def run_dart(engine: Engine, train: Dataset, loss: Loss, params: BoostParams, dart: DARTParams, *,
             prune: bool, valid: Dataset | None = None, init_model=None, init_scores=None,
             algorithm: str = "dart", model_params: dict | None = None, callback=None) -> Ensemble:
    """Grow a DART (``prune=False``) or X-DART (``prune=True``) ensemble of ``params.n_trees`` trees.

    ``loss`` gives the lambdas; ``params`` the trees, learning rate, sampling and the
    recorded metric; ``dart`` the drop strategy, cap, prune metric and snapshot sizes.
    X-DART and the adaptive strategy need ``valid`` (the estimator checks it:
    :meth:`~twinrank.reference.rankers.dart.DART.needs_validation`): a Dataset, or a list of
    ``(name, Dataset)`` pairs, each scored by every metric of ``params.metrics``; pruning and the
    adaptive strategy read the first. ``callback(iteration, record)`` returning True stops the
    loop; the model keeps the ensemble of that iteration.
    """
    rng = make_rng(params.seed)
    thresholds = engine.bin_thresholds(train.X, params.max_bins, params.subsample_for_bin, params.seed)
    sides = [_Side(engine, train, thresholds, init_model, init_scores)]
    sides += [_Side(engine, data, thresholds, init_model, None, name) for name, data in named_sets(valid)]
    fit, held = sides[0], (sides[1] if len(sides) > 1 else None)
    n_features_per_node = params.tree.n_features_per_node(train.n_features)
    g, h = np.empty(train.n_rows), np.empty(train.n_rows)  # (n_rows,) float64, each round's
    E, grown, snapshots, history = _Trees(), {}, {}, {}
    counts = DropCount(dart)
    best = None if held is None else 1.0 - _value(engine, params, dart.prune_metric, held)
    for it in range(dart.iteration_cap(params.n_trees)):
        if len(E) >= params.n_trees:
            break
        k = counts.next(len(E))
        drop = dropout_set(rng, len(E), k)  # (k,) indices into E
        dropped = [side.contribution(engine, *E.subset(drop)) for side in sides]  # (n_rows,) each
        f, rows = grow_round(engine, rng, train, fit.binned, thresholds, loss, on_grid(fit.scores - dropped[0]),
                             params, n_features_per_node, g, h)
        if f.n_nodes == 1:  # no split improves the loss
            if not len(E):
                warn_no_tree(train, thresholds, g, rows, params.tree, init_model)
            break
        f = dataclasses.replace(f, value=f.value * params.learning_rate)
        steps = [engine.predict_tree_binned(f, side.binned) for side in sides]  # (n_rows,) each, eta x Newton
        pruned = prune and k > 0 and 1.0 - _value(engine, params, dart.prune_metric, held,
                                                  held.scores - dropped[1] + steps[1]) < best
        keep, new_weight = (0.0, 1.0) if pruned else normalisation(k, params.learning_rate)
        if pruned:
            E.remove(drop)  # E \ D, for good
        else:
            E.scale(drop, keep)  # D scaled by k / (k + eta)
        for side, d, step in zip(sides, dropped, steps):
            side.move(d, step, keep, new_weight)
        E.add(f, new_weight, it)
        grown[it] = f
        record = {"dropped": k, "branch": "add" if k == 0 else ("prune" if pruned else "normalize")}
        improved = False
        if held is not None:
            record.update(_validation(engine, params, dart, sides[1:], best))
            improved, best = record["valid_loss"] < best, record["best_loss"]
        counts.update(improved, len(E))
        record["size"] = len(E)
        if len(E) in dart.snapshot_sizes and len(E) not in snapshots:
            snapshots[len(E)] = (list(E.ids), list(E.weights))
        for key, value in record.items():
            history.setdefault(key, []).append(value)
        if callback is not None and callback(it + 1, {key: v for key, v in record.items() if ":" in key}):
            break
    return _ensemble(train, E, grown, snapshots, init_model, algorithm, model_params, history)
# --8<-- [end:run_dart]


def _validation(engine, params: BoostParams, dart: DARTParams, held: list, best: float) -> dict:
    """The iteration's validation record: the loss $1 - M$ of the prune metric on the first set, the
    best loss so far, and every metric of ``params.metrics`` on every set (``"<set>:<metric>"``)."""
    values = {f"{side.name}:{metric}": _value(engine, params, metric, side) for side in held
              for metric in params.metrics}
    first = f"{held[0].name}:{dart.prune_metric}"
    loss = 1.0 - (values[first] if first in values else _value(engine, params, dart.prune_metric, held[0]))
    return {"valid_loss": loss, "best_loss": min(best, loss), **values}


def _value(engine, params: BoostParams, metric: str, side: _Side, scores=None) -> float:
    """``metric`` of ``scores`` (default: the side's running scores) on the side's data, in ``params.convention``."""
    data = side.data
    scores = on_grid(side.scores if scores is None else scores)
    return float(engine.evaluate([metric], data.y, scores, data.query_offsets, convention=params.convention)[metric])


def _ensemble(train, E: _Trees, grown, snapshots, init_model, algorithm, model_params, history) -> Ensemble:
    """The final $E$, its snapshots indexing the pool ``trees + retired_trees`` (retired: in a snapshot only)."""
    retired = sorted({i for members, _ in snapshots.values() for i in members} - set(E.ids))
    position = {tree_id: p for p, tree_id in enumerate(list(E.ids) + retired)}
    return Ensemble(
        trees=E.trees, tree_weights=np.array(E.weights, dtype=np.float64), base_score=0.0,
        n_features=train.n_features, init_model=init_model, algorithm=algorithm,
        params=dict(model_params or {}), history=history, best_iteration=None,
        snapshots=[Snapshot(size, [position[i] for i in members], w) for size, (members, w) in
                   sorted(snapshots.items())],
        retired_trees=[grown[i] for i in retired],
    )

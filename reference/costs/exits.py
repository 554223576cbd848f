r"""Early exits ("weeding out", Mohan 2010, Sec. 6.1; Cambazoglu et al., WSDM 2010).

An ensemble scores documents tree by tree. Every ``every`` trees (after trees
$X, 2X, \dots < T$), the bottom ``fraction`` of the still-active documents by
partial score are **frozen**: they skip the remaining trees. The bottom is taken
per query (``scope="query"``, as Cambazoglu et al.) or over all documents
(``scope="global"``): of $n$ active documents, $\lfloor y\,n \rfloor$ freeze,
the lowest partial scores, ties broken by input order (the later document of a
tie ranks lower, :mod:`~twinrank.reference.evaluation.metrics`' rule, so it freezes first).

A frozen document keeps its partial score (``exited="keep"``), or is placed
below every document that went on (``exited="below"``): its score is shifted by
$s \cdot S$, $s = \lceil t / X \rceil$ for a document scored with $t$ trees
(survivors: $t = T$) and $S$ one more than the spread of all partial scores, so a ranking orders documents by the trees they
were scored with, then by score.

The sum of a document's score is the one of :func:`predict.predict_ensemble`
(prior model, base score, then trees in order), truncated at its exit tree; a
prior model's trees count as the first trees (:func:`flat_model`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import check_int, check_real
from twinrank.reference.trees import predict

__all__ = ["EarlyExit", "ExitScores", "flat_model", "checkpoints", "frozen_now", "placed",
           "predict_exits"]

SCOPES, EXITED = ("query", "global"), ("below", "keep")


@dataclass(frozen=True)
class EarlyExit:
    """Every ``every`` trees the bottom ``fraction`` of the active documents exit.

    Parameters
    ----------
    every : int >= 1, trees between checkpoints (the thesis: 100).
    fraction : float in [0, 1), the share of active documents frozen at each checkpoint.
    scope : ``"query"`` (the bottom of each query) or ``"global"`` (of all documents).
    exited : ``"below"`` (frozen documents rank under the survivors) or ``"keep"``.
    """

    every: int = 100
    fraction: float = 0.2
    scope: str = "query"
    exited: str = "below"

    def __post_init__(self):
        check_int("every", self.every, low=1)
        check_real("fraction", self.fraction)
        if not 0.0 <= self.fraction < 1.0:
            raise ParameterError(f"the exit fraction must be in [0, 1), got {self.fraction!r}")
        if self.scope not in SCOPES:
            raise ParameterError(f"scope must be one of {SCOPES}, got {self.scope!r}")
        if self.exited not in EXITED:
            raise ParameterError(f"exited must be one of {EXITED}, got {self.exited!r}")


@dataclass
class ExitScores:
    """What scoring with exits returns.

    Attributes
    ----------
    scores : float64 (n_rows,), placed by ``exited``
    exit_tree : int64 (n_rows,), the number of trees each document was scored with
    cost : float64 (n_rows,) or None, each document's cost (:func:`cost.model_cost`)
    """

    scores: np.ndarray
    exit_tree: np.ndarray
    cost: np.ndarray | None = None


def flat_model(ensemble: Ensemble) -> tuple[list, np.ndarray, float]:
    """``(trees, weights, base)``: a prior model's trees first, then the model's, and the sum of
    the base scores. A prior model with a missing-value strategy of its own is refused."""
    if ensemble.init_model is None:
        return list(ensemble.trees), np.asarray(ensemble.tree_weights, dtype=np.float64), float(ensemble.base_score)
    if ensemble.init_model.missing is not None:
        raise ParameterError("early exits need one missing-value strategy; the prior model has its own")
    trees, weights, base = flat_model(ensemble.init_model)
    return (trees + list(ensemble.trees), np.concatenate([weights, ensemble.tree_weights]),
            base + float(ensemble.base_score))


def checkpoints(n_trees: int, every: int) -> list[int]:
    """The tree counts after which documents may exit: ``every, 2 every, ... < n_trees``."""
    return list(range(every, n_trees, every))


def frozen_now(scores: np.ndarray, active: np.ndarray, groups: np.ndarray, exits: EarlyExit) -> np.ndarray:
    """Bool (n_rows,): the active rows that exit now, the bottom ``floor(fraction * n)`` of each group.

    ``groups``: int64 (n_rows,), each row's query (or zeros for ``scope="global"``), rows of a
    group contiguous. Within a group, rows rank by descending score, ties by input order.
    """
    rows = np.flatnonzero(active)  # (n_active,) in input order
    order = rows[np.lexsort((rows, -scores[rows], groups[rows]))]  # by group, then rank
    group_of = groups[order]  # (n_active,)
    starts = np.flatnonzero(np.r_[True, group_of[1:] != group_of[:-1]])  # (n_groups,)
    sizes = np.diff(np.r_[starts, len(order)])  # (n_groups,)
    n_out = np.floor(exits.fraction * sizes).astype(np.int64)  # (n_groups,)
    rank = np.arange(len(order)) - np.repeat(starts, sizes)  # (n_active,) 0 = the group's top
    leaving = rank >= np.repeat(sizes - n_out, sizes)  # (n_active,)
    out = np.zeros(len(scores), dtype=bool)
    out[order[leaving]] = True
    return out


def groups_of(n_rows: int, query_offsets, exits: EarlyExit) -> np.ndarray:
    """Each row's group: its query (``scope="query"`` with offsets), else 0."""
    if exits.scope == "global" or query_offsets is None:
        return np.zeros(n_rows, dtype=np.int64)
    offsets = np.asarray(query_offsets, dtype=np.int64)
    if offsets[0] != 0 or offsets[-1] != n_rows or (np.diff(offsets) < 0).any():
        raise ParameterError(f"query_offsets must rise from 0 to the {n_rows} rows")
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def placed(scores: np.ndarray, exit_tree: np.ndarray, exits: EarlyExit) -> np.ndarray:
    """The returned scores: as they are (``"keep"``), or shifted by stage (``"below"``)."""
    if exits.exited == "keep" or len(scores) == 0:
        return scores
    stage = np.ceil(exit_tree / exits.every)  # (n_rows,) k for an exit after k * every trees; most for survivors
    spread = float(scores.max() - scores.min()) + 1.0
    return scores + stage * spread


def predict_exits(ensemble: Ensemble, X, query_offsets=None, exits: EarlyExit | None = None) -> ExitScores:
    r"""Score the rows of ``X`` with early exits (the module docstring).

    Parameters
    ----------
    ensemble : Ensemble
    X : float array (n_rows, n_features)
    query_offsets : int64 (n_queries + 1,), the queries of ``X`` (None: one query)
    exits : EarlyExit or None (no exit: every document passes every tree)

    Returns
    -------
    ExitScores with ``cost`` None. Cost: O(T n) tree evaluations at most, and a sort of
    the active documents at each checkpoint.
    """
    X = np.asarray(X)
    predict._check_n_features(X, ensemble.n_features)
    X = predict.missing_applied(ensemble, X)
    trees, weights, base = flat_model(ensemble)
    exits = exits or EarlyExit(every=max(1, len(trees)), fraction=0.0, exited="keep")
    groups = groups_of(len(X), query_offsets, exits)
    scores = np.full(len(X), base)  # (n_rows,)
    exit_tree = np.full(len(X), len(trees), dtype=np.int64)  # (n_rows,)
    active = np.ones(len(X), dtype=bool)
    bounds = [0, *checkpoints(len(trees), exits.every), len(trees)]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        rows = np.flatnonzero(active)
        for t in range(start, stop):
            scores[rows] += weights[t] * predict.predict_tree(trees[t], X[rows])
        if stop < len(trees):
            out = frozen_now(scores, active, groups, exits)
            exit_tree[out], active[out] = stop, False
    return ExitScores(placed(scores, exit_tree, exits), exit_tree)


"""Numba-parallel twin of `twinrank.reference.costs.exits`: early exits inside the fast scorer.

Between checkpoints the active rows are scored by the compiled scorer of
:mod:`.predict` (QuickScorer for trees of at most 64 leaves, else the packed
walker) on the stage's trees only, each row adding the trees in order as the
reference does, so the scores and exits are the reference's bit for bit. The
documents that exit at a checkpoint are chosen by a compiled kernel, parallel
over queries. Scoring without exits (``predict_ensemble``) is untouched.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.fast.trees import _quickscorer
from twinrank.fast.trees.predict import ROW_BLOCK, _floats, _packed, _predict_packed, missing_applied
from twinrank.reference.costs.exits import EarlyExit, ExitScores, checkpoints, flat_model, groups_of, placed
from twinrank.reference.io.model import Ensemble
from twinrank.reference.trees.predict import _check_n_features

__all__ = ["EarlyExit", "ExitScores", "flat_model", "checkpoints", "frozen_now", "placed",
           "predict_exits"]


def frozen_now(scores, active, groups, exits: EarlyExit) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.costs.exits.frozen_now` (parallel over groups)."""
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if len(groups) else np.zeros(0, np.int64)
    offsets = np.r_[starts, len(groups)].astype(np.int64)  # (n_groups + 1,)
    out = np.zeros(len(scores), dtype=bool)
    _frozen(np.ascontiguousarray(scores, dtype=np.float64), active, offsets, float(exits.fraction), out)
    return out


@njit(parallel=True, cache=True)
def _frozen(scores, active, offsets, fraction, out):
    # IN scores (n_rows,), active (n_rows,) bool, offsets (n_groups + 1,); OUT out (n_rows,) bool
    for q in prange(len(offsets) - 1):
        rows = np.flatnonzero(active[offsets[q]:offsets[q + 1]]) + offsets[q]  # input order
        n_out = int(np.floor(fraction * len(rows)))
        if n_out == 0:
            continue
        order = rows[np.argsort(-scores[rows], kind="mergesort")]  # stable: ties by input order
        for i in range(len(rows) - n_out, len(rows)):
            out[order[i]] = True


def predict_exits(ensemble: Ensemble, X, query_offsets=None, exits: EarlyExit | None = None) -> ExitScores:
    """Numba-parallel twin of `twinrank.reference.costs.exits.predict_exits`.

    Each stage packs its trees (O(nodes)) and scores a contiguous copy of the active rows.
    """
    X = _floats(np.asarray(X))
    _check_n_features(X, ensemble.n_features)
    X = missing_applied(ensemble, X)
    trees, weights, base = flat_model(ensemble)
    exits = exits or EarlyExit(every=max(1, len(trees)), fraction=0.0, exited="keep")
    groups = groups_of(len(X), query_offsets, exits)
    scores = np.full(len(X), base)  # (n_rows,)
    exit_tree = np.full(len(X), len(trees), dtype=np.int64)  # (n_rows,)
    active = np.ones(len(X), dtype=bool)
    bounds = [0, *checkpoints(len(trees), exits.every), len(trees)]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        rows = np.flatnonzero(active)
        stage = Ensemble(trees=trees[start:stop], tree_weights=weights[start:stop],
                         n_features=ensemble.n_features)
        part = scores[rows]  # (n_active,) a copy, scored in place
        _score_stage(stage, np.ascontiguousarray(X[rows]), part)
        scores[rows] = part
        if stop < len(trees):
            out = frozen_now(scores, active, groups, exits)
            exit_tree[out], active[out] = stop, False
    return ExitScores(placed(scores, exit_tree, exits), exit_tree)


def _score_stage(stage: Ensemble, X, scores) -> None:
    """``scores += `` the stage's trees, in order (the scorer ``predict_ensemble`` would use)."""
    if stage.n_trees == 0 or len(X) == 0:
        return
    weights = np.ascontiguousarray(stage.tree_weights, dtype=np.float64)
    if _quickscorer.fits(stage):
        _quickscorer.score(X, _quickscorer.pack(stage, X.dtype), weights, scores)
    else:
        over_chunks(_predict_packed, (len(X) + ROW_BLOCK - 1) // ROW_BLOCK, X, *_packed(stage), weights, scores)

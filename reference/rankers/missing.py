r"""Missing feature values: the strategies of Mohan's thesis (2010, Ch. 4, Alg. 2), for every algorithm.

A strategy is fitted on the training features ``X`` (NaN = missing) and stored in
the model (``Ensemble.missing``); scoring applies the same :meth:`MissingValues.transform`
to every ``X`` before the trees see it, and training applies it before binning.
Observed values are never changed; only NaN entries are filled.

* ``"learn"`` (default): no preprocessing; every split learns where NaN rows go
  (the grower's missing direction, :mod:`tree`).
* ``"separate"``: no preprocessing either; every split whose feature has enough
  missing rows sends them to a third child of their own (Ch. 4's separate
  branch; ``TreeParams.missing_split="separate"``, :mod:`tree`).
* ``"zero"``, ``"one"``: NaN becomes 0 or 1.
* ``"mean"``, ``"median"``: NaN of feature $j$ becomes the mean / median of
  its observed training values (``np.nanmean`` / ``np.nanmedian`` in float64, then
  rounded to float32); a feature with no observed value fills 0.
* ``"iterative"`` (Alg. 2): start from the mean fill, then for
  ``ITERATIVE_ROUNDS`` rounds predict every feature $j$ that has both missing
  and observed training values from all the other features, and refill its
  missing entries with the prediction. The model of feature $j$ in round
  $r$ is a small least-squares GBRT (``IMPUTER``): base score the mean of
  $x_j$ over the rows where it is observed, ``IMPUTER.n_trees`` trees grown
  by :func:`tree.grow_tree` on those rows only, with gradients
  $F(x) - x_j$, hessians 1, feature $j$ masked out at every node,
  bins (``IMPUTER.max_bins``) of the round's filled matrix, each tree weighted
  ``IMPUTER.learning_rate``. A round is a Jacobi sweep: all its models are fitted
  on, and predict from, the matrix as it was at the start of the round; the
  predictions then replace the round's missing entries at once (rounded to the
  dtype of ``X``), so the feature order does not matter. No randomness.
  :meth:`MissingValues.transform` replays the same sweeps on new rows with the
  fitted models; a feature never missing in training is only mean-filled.

The fill values are float32-representable, so a filled float32 matrix is the same
in both twins; the iterative models agree across twins as trees do (bit for bit on
exactly representable sums, else in the last bits).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.io import model
from twinrank.reference.io.model import SPLIT_STRATEGIES, STRATEGIES, Ensemble, check_strategy, refilled
from twinrank.reference.params import TreeParams

__all__ = ["MissingValues", "fit_missing", "run_fit", "fill_values", "check_strategy", "STRATEGIES",
           "SPLIT_STRATEGIES", "ITERATIVE_ROUNDS", "IMPUTER"]

ITERATIVE_ROUNDS = 3
IMPUTER = SimpleNamespace(n_trees=4, learning_rate=0.5, max_leaves=8, min_samples_leaf=20,
                          max_bins=32)


MissingValues = model.MissingValues  # a fitted strategy, as its model stores it (one class, both twins)


def fit_missing(X, strategy: str = "learn") -> MissingValues:
    """Fit ``strategy`` on the training features ``X`` (n_rows, n_features), NaN = missing."""
    return run_fit(REFERENCE, X, strategy)


def run_fit(engine: Engine, X, strategy: str) -> model.MissingValues:
    """:func:`fit_missing` on the kernels of ``engine`` (which also scores the imputers)."""
    check_strategy(strategy)
    X = np.asarray(X)
    if strategy in SPLIT_STRATEGIES:
        return model.MissingValues(strategy)
    fill = fill_values(X, "mean" if strategy == "iterative" else strategy)
    if strategy != "iterative":
        return model.MissingValues(strategy, fill)
    missing = np.isnan(X)  # (n, d)
    filled = np.where(missing, fill, X).astype(X.dtype)  # (n, d)
    targets = np.flatnonzero(missing.any(axis=0) & ~missing.all(axis=0))  # features to impute
    imputers = []
    for _ in range(ITERATIVE_ROUNDS):
        thresholds = engine.bin_thresholds(filled, IMPUTER.max_bins)
        binned = engine.apply_bins(filled, thresholds)  # (n, d) bins of the round's matrix
        stage = [(int(f), _imputer(engine, binned, thresholds, filled[:, f], ~missing[:, f], f))
                 for f in targets]
        filled = refilled(filled, missing,
                          [(f, lambda A, m=m: engine.predict_ensemble(m, A)) for f, m in stage])
        imputers.append(stage)
    return model.MissingValues(strategy, fill, imputers)


def fill_values(X, strategy: str) -> np.ndarray:
    """Per-feature fill values (float64, float32-representable) of a fill strategy; 0 if never observed."""
    X = np.asarray(X, dtype=np.float64)
    if strategy in ("zero", "one"):
        return np.full(X.shape[1], 0.0 if strategy == "zero" else 1.0)
    observed = ~np.isnan(X).all(axis=0)  # (d,) features with a value
    stat = np.nanmean if strategy == "mean" else np.nanmedian
    fill = np.zeros(X.shape[1])  # (d,)
    fill[observed] = stat(X[:, observed], axis=0)
    return fill.astype(np.float32).astype(np.float64)


def _imputer(engine, binned, thresholds, column, observed, f: int) -> Ensemble:
    """The least-squares GBRT predicting feature ``f`` (``column``) from the others, on the ``observed`` rows."""
    params = TreeParams(max_leaves=IMPUTER.max_leaves, min_samples_leaf=IMPUTER.min_samples_leaf)
    target = column.astype(np.float64)  # (n,)
    rows = np.flatnonzero(observed)
    mask = np.ones((params.max_nodes, binned.shape[1]), dtype=bool)
    mask[:, f] = False
    base = float(np.mean(target[rows]))
    scores, trees = np.full(len(target), base), []  # (n,)
    for _ in range(IMPUTER.n_trees):
        tree = engine.grow_tree(binned, scores - target, np.ones(len(target)), thresholds, params,
                                 rows=rows, feature_mask=mask)
        trees.append(tree)
        scores = scores + IMPUTER.learning_rate * engine.predict_tree_binned(tree, binned)
    return Ensemble(trees=trees, tree_weights=np.full(len(trees), IMPUTER.learning_rate),
                    base_score=base, n_features=binned.shape[1], algorithm="imputer")

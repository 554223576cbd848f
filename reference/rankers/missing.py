r"""Missing feature values: the strategies of Mohan's thesis (2010, Sec. 2.2, Table 2.1), for every algorithm.

A strategy is fitted on the training features ``X`` (NaN = missing) and stored in
the model (``Ensemble.missing``); scoring applies the same :meth:`MissingValues.transform`
to every ``X`` before the trees see it, and training applies it before binning.
Observed values are never changed; only NaN entries are filled.

* ``"learn"`` (default): no preprocessing; every split learns where NaN rows go
  (the grower's missing direction, :mod:`tree`).
* ``"separate"``: no preprocessing either; every split whose feature has enough
  missing rows sends them to a third child of their own (Sec. 2.2's three-way
  split; ``TreeParams.missing_split="separate"``, :mod:`tree`).
* ``"zero"``, ``"one"``: NaN becomes 0 or 1.
* ``"mean"``, ``"median"``: NaN of feature $j$ becomes the mean / median of
  its observed training values (``np.nanmean`` / ``np.nanmedian`` in float64, then
  rounded to float32); a feature with no observed value fills 0.
* ``"iterative"``: the thesis's Algorithm 2, random-forest imputation repeated until
  convergence (below).

**Algorithm 2.** Let $C = \{k : x_{ik} \text{ observed for every row } i\}$ be the
*complete* features, and for each *incomplete* feature $j$ (observed on the rows
$O_j \ne \emptyset$, missing on $M_j \ne \emptyset$) let its inputs be $I_j = C$.
Start from the mean fill $x^{(0)}$. Round $r = 1, 2, \dots$ fits, for every incomplete
$j$, a random forest regressor $f^{(r)}_j$
(:func:`~twinrank.reference.ensembles._forest_loop.run_forest` on the engine, with
``IMPUTER``: a small forest, bootstrap rows, a third of the inputs drawn at each node,
seed $j$) on the pairs $\{(x_{i, I_j},\, x_{ij}) : i \in O_j\}$ of the current
matrix, and refills

$$
x_{ij} \leftarrow f^{(r)}_j\big(x_{i, I_j}\big) \quad (i \in M_j),
$$

rounded to the dtype of ``X``. The rounds stop after the first round whose change

$$
\delta_r = \max_j \max_{i \in M_j} \frac{|x^{(r)}_{ij} - x^{(r-1)}_{ij}|}{s_j} < \mathrm{tol}
\qquad (s_j = \text{the range of the observed } x_{\cdot j}\text{, or 1 if it is 0}),
$$

or after ``max_rounds`` rounds (``ITERATIVE_TOL`` = 1e-3, a thousandth of each feature's
range, and ``ITERATIVE_MAX_ROUNDS`` = 10 by default).

*With complete features* (the thesis's case) no imputed value is an input ($I_j = C$): a
second round would refit the same forests (same rows, same inputs, same seeds) and change
nothing, $\delta_2 = 0$. Round 1 is the fixed point, and the loop ends there without
refitting: one forest per incomplete feature, all refilled at once (one stage).

*Without a complete feature* the thesis leaves the inputs open. Here each $j$ reads every
other feature with an observed value, $I_j = \{k \ne j\}$, starting from their mean fill,
and a round refills the features one after another in index order, each forest fitted on
the matrix as the previous one left it (Gauss-Seidel, the order of chained-equation and
missForest imputation; refilled all at once, the imputations of a feature in rows where its
best predictor is missing too can jump across its whole range every round). Each round's
imputations are the next round's inputs, so the rounds are real iterations. They need not
converge (a forest refitted on moved inputs is another forest, and on small data the
imputations can cycle), and ``max_rounds`` then ends them.

A feature never observed in training stays 0; one with no input to learn from stays
mean-filled. The forests are stored as the model's ``imputers``, in the order they refilled
(one stage with complete features; one stage per feature and round without), each tree's
split features renumbered to the columns of ``X``, so :meth:`MissingValues.transform`
replays them on new rows (a feature complete in training but missing in a new row is
mean-filled, then read as the forests' input).

``"iterative"`` names Algorithm 2 itself, not a variant beside it: before, the name held a
3-round least-squares GBRT started from the mean fill, which was not the thesis's algorithm.
Model files saved with that version still load and score as they were fitted: a stored
strategy is its stages of ``(feature, Ensemble)`` imputers, replayed the same way whatever
grew them (theirs have ``algorithm="imputer"``, the forests ``IMPUTER_ALGORITHM``).

The fill values are float32-representable, so a filled float32 matrix is the same
in both twins; the forests agree across twins as trees do (bit for bit on
exactly representable sums, else in the last bits).
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from twinrank.reference._param_checks import check_int, check_real
from twinrank.reference.constants import LEAF
from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.ensembles._forest_loop import run_forest
from twinrank.reference.errors import ParameterError, TwinrankWarning
from twinrank.reference.io import model
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.model import SPLIT_STRATEGIES, STRATEGIES, Ensemble, check_strategy, refilled
from twinrank.reference.params import ForestParams, TreeParams

__all__ = ["MissingValues", "fit_missing", "run_fit", "fill_values", "check_strategy", "STRATEGIES",
           "SPLIT_STRATEGIES", "ITERATIVE_TOL", "ITERATIVE_MAX_ROUNDS", "IMPUTER", "IMPUTER_ALGORITHM"]

ITERATIVE_TOL = 1e-3  # stop when no imputation moves by a thousandth of its feature's range
ITERATIVE_MAX_ROUNDS = 10  # the round cap, for data whose imputations keep moving
IMPUTER = ForestParams(  # each feature's forest (its seed: the feature's index), small to stay cheap
    n_trees=10, tree=TreeParams(max_leaves=64, min_samples_leaf=5, feature_fraction=1 / 3), max_bins=64)
IMPUTER_ALGORITHM = "imputer_forest"  # the ``algorithm`` of a stored imputer forest


MissingValues = model.MissingValues  # a fitted strategy, as its model stores it (one class, both twins)


def fit_missing(X, strategy: str = "learn", *, tol: float = ITERATIVE_TOL,
                max_rounds: int = ITERATIVE_MAX_ROUNDS) -> MissingValues:
    """Fit ``strategy`` on the training features ``X`` (n_rows, n_features), NaN = missing.

    ``tol`` and ``max_rounds`` stop the rounds of ``"iterative"`` (module docstring); the other
    strategies ignore them.
    """
    return run_fit(REFERENCE, X, strategy, tol=tol, max_rounds=max_rounds)


def run_fit(engine: Engine, X, strategy: str, *, tol: float = ITERATIVE_TOL,
            max_rounds: int = ITERATIVE_MAX_ROUNDS) -> model.MissingValues:
    """:func:`fit_missing` on the kernels of ``engine`` (which grows the forests and scores them)."""
    check_strategy(strategy)
    check_real("tol", tol, low=0.0)
    check_int("max_rounds", max_rounds, low=1)
    X = _checked_features(X)
    if strategy in SPLIT_STRATEGIES:
        return model.MissingValues(strategy)
    fill = fill_values(X, "mean" if strategy == "iterative" else strategy)
    if strategy != "iterative":
        return model.MissingValues(strategy, fill)
    return model.MissingValues(strategy, fill, _rounds(engine, X, fill, tol, max_rounds))


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


def _checked_features(X) -> np.ndarray:
    """``X`` as a 2-D array of numbers without infinities; ParameterError otherwise."""
    X = np.asarray(X)
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise ParameterError(f"X must be a 2-D array of numbers (n_rows, n_features), got shape {X.shape} "
                             f"of {X.dtype}")
    if np.isinf(X).any():
        r, c = np.argwhere(np.isinf(X))[0]
        raise ParameterError(f"X[{r}, {c}] is infinite; use NaN for a missing value")
    return X if X.dtype.kind == "f" else X.astype(np.float64)


def _rounds(engine, X, fill, tol: float, max_rounds: int) -> list:
    """Algorithm 2's rounds from the mean fill: the stages of ``(feature, forest)`` to replay."""
    missing = np.isnan(X)  # (n, d)
    filled = np.where(missing, fill, X).astype(X.dtype)  # (n, d): x^(0)
    inputs = {int(j): _inputs(missing, j) for j in np.flatnonzero(missing.any(axis=0) & ~missing.all(axis=0))}
    inputs = {j: cols for j, cols in inputs.items() if len(cols)}  # features with something to learn from
    if not inputs:
        return []
    complete = (~missing).all(axis=0).any()  # inputs never imputed: round 1 is the fixed point
    groups = [list(inputs)] if complete else [[j] for j in inputs]  # the features of a stage
    scale = _scales(X, list(inputs))  # (d,) s_j
    stages = []
    for _ in range(1 if complete else max_rounds):
        start = filled
        for group in groups:
            stage = [(j, _forest(engine, filled, missing[:, j], inputs[j], j)) for j in group]
            scorers = [(j, lambda A, m=m: engine.predict_ensemble(m, A)) for j, m in stage]
            filled = refilled(filled, missing, scorers)
            stages.append(stage)
        if np.max(np.abs(filled - start) / scale) < tol:  # delta_r: only imputed entries move
            break
    return stages


def _inputs(missing, j: int) -> np.ndarray:
    """The columns feature ``j``'s forest reads: the complete features, else every other observed one."""
    complete = ~missing.any(axis=0)  # (d,)
    if complete.any():
        return np.flatnonzero(complete)
    return np.flatnonzero(~missing.all(axis=0) & (np.arange(missing.shape[1]) != j))


def _scales(X, targets: list) -> np.ndarray:
    """$s_j$: the range of each target feature's observed values (1 if it is 0, and for the other features)."""
    scale = np.ones(X.shape[1])  # (d,)
    for j in targets:
        column = X[~np.isnan(X[:, j]), j].astype(np.float64)
        scale[j] = (column.max() - column.min()) or 1.0
    return scale


def _forest(engine, filled, missing_j, cols, j: int) -> Ensemble:
    """Feature ``j``'s random forest on the rows where it is observed, reading columns ``cols`` of ``filled``.

    A forest that cannot split imputes (about) the mean of the observed values, as the mean fill
    does: its single-leaf warning would tell the user of a ranker nothing, so it is not shown.
    """
    rows = np.flatnonzero(~missing_j)
    train = Dataset(filled[np.ix_(rows, cols)], filled[rows, j], np.array([0, len(rows)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TwinrankWarning)
        forest = run_forest(engine, train, dataclasses.replace(IMPUTER, seed=j), algorithm=IMPUTER_ALGORITHM)
    trees = [dataclasses.replace(t, feature=np.where(t.feature == LEAF, LEAF, cols[np.maximum(t.feature, 0)]))
             for t in forest.trees]  # split features renumbered to the columns of X
    return Ensemble(trees=trees, tree_weights=forest.tree_weights, base_score=forest.base_score,
                    n_features=filled.shape[1], algorithm=IMPUTER_ALGORITHM)

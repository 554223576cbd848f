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
* ``"mean"``, ``"median"``: NaN of feature :math:`j` becomes the mean / median of
  its observed training values (``np.nanmean`` / ``np.nanmedian`` in float64, then
  rounded to float32); a feature with no observed value fills 0.
* ``"iterative"`` (Alg. 2): start from the mean fill, then for
  ``ITERATIVE_ROUNDS`` rounds predict every feature :math:`j` that has both missing
  and observed training values from all the other features, and refill its
  missing entries with the prediction. The model of feature :math:`j` in round
  :math:`r` is a small least-squares GBRT (``IMPUTER``): base score the mean of
  :math:`x_j` over the rows where it is observed, ``IMPUTER.n_trees`` trees grown
  by :func:`tree.grow_tree` on those rows only, with gradients
  :math:`F(x) - x_j`, hessians 1, feature :math:`j` masked out at every node,
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

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from . import boosting
from .errors import ModelFormatError, ParameterError
from .model import Ensemble
from .params import TreeParams

STRATEGIES = ("learn", "separate", "zero", "one", "mean", "median", "iterative")
SPLIT_STRATEGIES = ("learn", "separate")  # left to the grower (TreeParams.missing_split): no fill
ITERATIVE_ROUNDS = 3
IMPUTER = SimpleNamespace(n_trees=4, learning_rate=0.5, max_leaves=8, min_samples_leaf=20,
                          max_bins=32)


@dataclass
class MissingValues:
    """A fitted missing-value strategy: per-feature fill values and, for ``"iterative"``, its models.

    Attributes
    ----------
    strategy : one of ``STRATEGIES``
    fill : float64 array (n_features,), float32-representable; empty for ``"learn"`` and ``"separate"``
    imputers : list over rounds of lists of ``(feature, Ensemble)``; empty unless ``"iterative"``
    """

    strategy: str
    fill: np.ndarray = field(default_factory=lambda: np.zeros(0))
    imputers: list = field(default_factory=list)

    def __post_init__(self):
        check_strategy(self.strategy)
        self.fill = np.asarray(self.fill, dtype=np.float64)

    def transform(self, X) -> np.ndarray:
        """A copy of ``X`` with its NaN entries filled (``X`` itself for ``"learn"`` and ``"separate"``)."""
        X = np.asarray(X)
        if not len(self.fill):
            return X
        if X.ndim != 2 or X.shape[1] != len(self.fill):
            raise ParameterError(f"X has shape {X.shape} but the missing-value strategy was fitted "
                                 f"on {len(self.fill)} features")
        missing = np.isnan(X) if X.dtype.kind == "f" else np.zeros(X.shape, dtype=bool)  # (n, d)
        filled = np.where(missing, self.fill, X).astype(X.dtype if X.dtype.kind == "f" else np.float64)
        for stage in self.imputers:
            filled = _refilled(filled, missing, [(f, predict_ensemble_of(m)) for f, m in stage])
        return filled

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "fill": self.fill.tolist(),
                "imputers": [[[int(f), m.to_dict()] for f, m in stage] for stage in self.imputers]}

    @classmethod
    def from_dict(cls, d: dict) -> "MissingValues":
        try:
            return cls(d["strategy"], np.array(d["fill"], dtype=np.float64),
                       [[(int(f), Ensemble.from_dict(m)) for f, m in stage] for stage in d["imputers"]])
        except (KeyError, TypeError, ValueError, ParameterError) as e:
            raise ModelFormatError(f"bad missing-value strategy in the model: {e}") from None


def check_strategy(strategy) -> None:
    if strategy not in STRATEGIES:
        raise ParameterError(f"missing must be one of {', '.join(STRATEGIES)}; got {strategy!r}")


def fit_missing(X, strategy: str = "learn") -> MissingValues:
    """Fit ``strategy`` on the training features ``X`` (n_rows, n_features), NaN = missing."""
    return run_fit(boosting.KERNELS, X, strategy)


def run_fit(kernels, X, strategy: str) -> MissingValues:
    """:func:`fit_missing` on the kernels of one twin (``boosting.KERNELS``)."""
    check_strategy(strategy)
    X = np.asarray(X)
    if strategy in SPLIT_STRATEGIES:
        return MissingValues(strategy)
    fill = fill_values(X, "mean" if strategy == "iterative" else strategy)
    if strategy != "iterative":
        return MissingValues(strategy, fill)
    missing = np.isnan(X)  # (n, d)
    filled = np.where(missing, fill, X).astype(X.dtype)  # (n, d)
    targets = np.flatnonzero(missing.any(axis=0) & ~missing.all(axis=0))  # features to impute
    imputers = []
    for _ in range(ITERATIVE_ROUNDS):
        thresholds = kernels.bin_thresholds(filled, IMPUTER.max_bins)
        binned = kernels.apply_bins(filled, thresholds)  # (n, d) bins of the round's matrix
        stage = [(int(f), _imputer(kernels, binned, thresholds, filled[:, f], ~missing[:, f], f))
                 for f in targets]
        filled = _refilled(filled, missing,
                           [(f, lambda A, m=m: kernels.predict_ensemble(m, A)) for f, m in stage])
        imputers.append(stage)
    return MissingValues(strategy, fill, imputers)


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


def _refilled(filled, missing, predictors) -> np.ndarray:
    """One Jacobi sweep: every ``(feature, predict)`` refills its missing entries from ``filled``."""
    out = filled.copy()
    for f, predict in predictors:
        rows = missing[:, f]  # (n,)
        if rows.any():
            out[rows, f] = predict(filled[rows])
    return out


def _imputer(kernels, binned, thresholds, column, observed, f: int) -> Ensemble:
    """The least-squares GBRT predicting feature ``f`` (``column``) from the others, on the ``observed`` rows."""
    params = TreeParams(max_leaves=IMPUTER.max_leaves, min_samples_leaf=IMPUTER.min_samples_leaf)
    target = column.astype(np.float64)  # (n,)
    rows = np.flatnonzero(observed)
    mask = np.ones((2 * params.max_leaves - 1, binned.shape[1]), dtype=bool)
    mask[:, f] = False
    base = float(np.mean(target[rows]))
    scores, trees = np.full(len(target), base), []  # (n,)
    for _ in range(IMPUTER.n_trees):
        tree = kernels.grow_tree(binned, scores - target, np.ones(len(target)), thresholds, params,
                                 rows=rows, feature_mask=mask)
        trees.append(tree)
        scores = scores + IMPUTER.learning_rate * kernels.predict_tree_binned(tree, binned)
    return Ensemble(trees=trees, tree_weights=np.full(len(trees), IMPUTER.learning_rate),
                    base_score=base, n_features=binned.shape[1], algorithm="imputer")


def predict_ensemble_of(model: Ensemble):
    """``X -> predict.predict_ensemble(model, X)`` (imported late: :mod:`predict` applies this module)."""
    from .predict import predict_ensemble
    return lambda X: predict_ensemble(model, X)

"""A fitted missing-value strategy as stored in a model: ``MissingValues`` and its helpers."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io._ensemble import Ensemble
from twinrank.reference.io._model_fields import float_array, int_value
from twinrank.reference.params import MISSING_STRATEGIES as STRATEGIES

SPLIT_STRATEGIES = ("learn", "separate")  # missing values left to the grower (TreeParams.missing_split)


@dataclass
class MissingValues:
    """A fitted missing-value strategy: per-feature fill values and, for ``"iterative"``, its models.

    The strategies and how they are fitted: :mod:`~twinrank.reference.rankers.missing`.

    Attributes
    ----------
    strategy : one of ``STRATEGIES``
    fill : float64 array (n_features,), float32-representable; empty for ``"learn"`` and ``"separate"``
    imputers : list over rounds of lists of ``(feature, Ensemble)``; empty unless ``"iterative"``.
        Each Ensemble reads all ``n_features`` columns of the filled matrix and predicts
        ``feature`` (Mohan 2010, Sec. 2.2, Alg. 2: a random forest on the complete features,
        ``algorithm="imputer_forest"``). Files saved before Alg. 2 hold least-squares GBRTs
        (``algorithm="imputer"``) under the same strategy name; :meth:`transform` replays
        any stages the same way, so those models still score as they were fitted.
    """

    strategy: str
    fill: np.ndarray = field(default_factory=lambda: np.zeros(0))
    imputers: list = field(default_factory=list)

    def __post_init__(self):
        check_strategy(self.strategy)
        self.fill = np.asarray(self.fill, dtype=np.float64)
        for stage in self.imputers:
            for f, model in stage:
                if not 0 <= f < len(self.fill) or model.n_features != len(self.fill):
                    raise ModelFormatError(f"imputer of feature {f} (taking {model.n_features} features) does "
                                           f"not fit {len(self.fill)} features")

    def transform(self, X, predict_ensemble=None) -> np.ndarray:
        """A copy of ``X`` with its NaN entries filled (``X`` itself for ``"learn"`` and ``"separate"``).

        ``predict_ensemble`` (a twin's ``predict_ensemble(model, X)``, e.g. ``engine.predict_ensemble``)
        scores the iterative imputers: the strategy is data, the twin that scores it is the caller's
        choice. The other strategies do not need it.
        """
        X = np.asarray(X)
        if not len(self.fill):
            return X
        if X.ndim != 2 or X.shape[1] != len(self.fill):
            raise ParameterError(f"X has shape {X.shape} but the missing-value strategy was fitted "
                                 f"on {len(self.fill)} features")
        if self.imputers and predict_ensemble is None:
            raise ParameterError("the iterative strategy's imputers are models: give the twin that scores "
                                 "them, transform(X, predict_ensemble) (e.g. twinrank.fast.trees.predict."
                                 "predict_ensemble)")
        score = predict_ensemble
        missing = np.isnan(X) if X.dtype.kind == "f" else np.zeros(X.shape, dtype=bool)  # (n, d)
        filled = np.where(missing, self.fill, X).astype(X.dtype if X.dtype.kind == "f" else np.float64)
        for stage in self.imputers:
            filled = refilled(filled, missing, [(f, lambda A, m=m: score(m, A)) for f, m in stage])
        return filled

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "fill": self.fill.tolist(),
                "imputers": [[[int(f), m.to_dict()] for f, m in stage] for stage in self.imputers]}

    @classmethod
    def from_dict(cls, d: dict) -> "MissingValues":
        try:
            return cls(d["strategy"], float_array(d["fill"], "missing.fill"),
                       [[(int_value(f, "missing.imputers"), Ensemble.from_dict(m, "missing.imputers"))
                         for f, m in stage] for stage in d["imputers"]])
        except (KeyError, TypeError, ValueError, ParameterError) as e:
            raise ModelFormatError(f"bad missing-value strategy in the model: {e}") from None


def check_strategy(strategy) -> None:
    """Raise ParameterError unless ``strategy`` is one of ``STRATEGIES``."""
    if strategy not in STRATEGIES:
        raise ParameterError(f"missing must be one of {', '.join(STRATEGIES)}; got {strategy!r}")


def refilled(filled, missing, predictors) -> np.ndarray:
    """One Jacobi sweep: every ``(feature, predict)`` refills its missing entries from ``filled``."""
    out = filled.copy()
    for f, predict in predictors:
        rows = missing[:, f]  # (n,)
        if rows.any():
            out[rows, f] = predict(filled[rows])
    return out


def with_missing(model, fitted: MissingValues | None):
    """``model`` (an Ensemble, or every classifier of an McRankModel) storing the fitted strategy."""
    for ensemble in getattr(model, "classifiers", [model]):
        ensemble.missing = None if fitted is None else fitted.to_dict()
    return model

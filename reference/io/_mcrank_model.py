"""The McRank model: one logistic ``Ensemble`` per label threshold, and the relevance weights; and
Mohan's form of it, one regression ``Ensemble`` per threshold (:class:`CumulativeRegressionModel`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._ensemble import Ensemble
from twinrank.reference.io._model_fields import (
    float_array,
    join,
    refuse_unknown,
    require,
    typed,
    width,
)
from twinrank.reference.io._model_json import FORMAT, MCRANK, VERSION, ModelFile, _encode, check_header

CUMULATIVE_REGRESSION = "cumulative-regression"  # the algorithm of a CumulativeRegressionModel document
MCRANK_FIELDS = ("format", "version", "checksum", "algorithm", "n_features", "labels", "relevance_weights",
                 "params", "classifiers")


@dataclass
class McRankModel(ModelFile):
    """A fitted McRank: one logistic :class:`Ensemble` per threshold, and the relevance weights.

    Attributes
    ----------
    classifiers : list of K-1 Ensemble; classifier ``j`` scores the log-odds of ``y > labels[j]``
    labels : ndarray of float64, shape (K,), the sorted distinct training labels
    relevance_weights : ndarray of float64, shape (K,), $F(c_k)$
    n_features : int
    params : dict, the estimator's parameters (JSON-serialisable)

    On disk it is one JSON document of the model format (``format``, ``version``) with
    ``algorithm = "mcrank"``, ``labels``, ``relevance_weights``, ``params`` and
    ``classifiers``, each a complete model document of its own.
    """

    classifiers: list
    labels: np.ndarray
    relevance_weights: np.ndarray
    n_features: int
    params: dict = field(default_factory=dict)

    algorithm = MCRANK  # class constants, not fields: what the CLI reports of any model
    best_iteration = None
    described = "an McRank model"  # how a refusal names the kind

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype=np.float64)
        self.relevance_weights = np.asarray(self.relevance_weights, dtype=np.float64)
        k = len(self.labels)
        if k < 2 or not np.all(np.diff(self.labels) > 0) or not np.all(np.isfinite(self.relevance_weights)):
            raise ModelFormatError(f"McRank labels must be >= 2 increasing numbers and the weights finite, got "
                                   f"{self.labels.tolist()} and {self.relevance_weights.tolist()}")
        if len(self.classifiers) != k - 1 or self.relevance_weights.shape != (k,):
            raise ModelFormatError(f"{k} labels need {k - 1} classifiers and {k} weights, got "
                                   f"{len(self.classifiers)} and {len(self.relevance_weights)}")
        if any(c.n_features != self.n_features for c in self.classifiers):
            raise ModelFormatError(f"every classifier must take {self.n_features} features")

    @property
    def n_trees(self) -> int:
        return sum(c.n_trees for c in self.classifiers)

    def to_dict(self) -> dict:
        """The model as one JSON-ready document: labels, weights and every classifier."""
        return {"format": FORMAT, "version": VERSION, "algorithm": self.algorithm,
                "n_features": int(self.n_features), "labels": _encode(self.labels),
                "relevance_weights": _encode(self.relevance_weights), "params": self.params,
                "classifiers": [c.to_dict() for c in self.classifiers]}

    @classmethod
    def from_dict(cls, d: dict, path: str = "") -> "McRankModel":
        """The model of :meth:`to_dict`; ModelFormatError naming the field (``classifiers[1].trees[3]...``)."""
        check_header(d, path)
        if d.get("algorithm") != cls.algorithm:
            raise ModelFormatError(f"a {d.get('algorithm')!r} model is not {cls.described}")
        refuse_unknown(d, MCRANK_FIELDS, path)
        classifiers = typed(require(d, "classifiers", path), list, join(path, "classifiers"))
        return cls(classifiers=[Ensemble.from_dict(c, join(path, f"classifiers[{i}]"))
                                for i, c in enumerate(classifiers)],
                   labels=float_array(require(d, "labels", path), join(path, "labels")),
                   relevance_weights=float_array(require(d, "relevance_weights", path),
                                                 join(path, "relevance_weights")),
                   n_features=width(require(d, "n_features", path), join(path, "n_features")),
                   params=typed(d.get("params", {}), dict, join(path, "params")))


@dataclass
class CumulativeRegressionModel(McRankModel):
    r"""A fitted :class:`~twinrank.reference.rankers.classification.CumulativeRegression` (Mohan 2010,
    Alg. 5): McRank's fields, but ``classifiers`` are K-1 squared-loss regression ensembles
    (random forests, or IGBRT models holding their forest as ``init_model``), ensemble ``j``
    predicting $P(y > c_j)$ itself rather than its log-odds, and ``relevance_weights`` fitted by
    least squares. On disk: the McRank document with ``algorithm = "cumulative-regression"``.
    """

    algorithm = CUMULATIVE_REGRESSION
    described = "a cumulative-regression model"

"""The McRank model: one logistic ``Ensemble`` per label threshold, and the relevance weights."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._ensemble import Ensemble
from ._model_json import FORMAT, MCRANK, VERSION, _decode, _encode, _read_json, write_json_atomic
from .errors import ModelFormatError


@dataclass
class McRankModel:
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

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype=np.float64)
        self.relevance_weights = np.asarray(self.relevance_weights, dtype=np.float64)
        k = len(self.labels)
        if k < 2 or np.any(np.diff(self.labels) <= 0):
            raise ModelFormatError(f"McRank labels must be >= 2 increasing numbers, got {self.labels.tolist()}")
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
        return {"format": FORMAT, "version": VERSION, "algorithm": MCRANK,
                "n_features": int(self.n_features), "labels": _encode(self.labels),
                "relevance_weights": _encode(self.relevance_weights), "params": self.params,
                "classifiers": [c.to_dict() for c in self.classifiers]}

    @classmethod
    def from_dict(cls, d: dict) -> "McRankModel":
        """The model of :meth:`to_dict`; ModelFormatError for a wrong format, version or field."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ModelFormatError("not a twinrank model")
        if d.get("version") != VERSION:
            raise ModelFormatError(
                f"model format version {d.get('version')!r} is not supported (this twinrank reads {VERSION})")
        if d.get("algorithm") != MCRANK:
            raise ModelFormatError(f"a {d.get('algorithm')!r} model is not an McRank model")
        try:
            return cls(classifiers=[Ensemble.from_dict(c) for c in d["classifiers"]],
                       labels=_decode(d["labels"]), relevance_weights=_decode(d["relevance_weights"]),
                       n_features=int(d["n_features"]), params=d.get("params", {}))
        except KeyError as e:
            raise ModelFormatError(f"model is missing field {e.args[0]!r}") from None

    def save(self, path) -> None:
        """Write the model as JSON, atomically (temporary file, then rename)."""
        write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path) -> "McRankModel":
        """Read a McRank model file (written by either twin)."""
        d = _read_json(path)
        try:
            return cls.from_dict(d)
        except ModelFormatError as e:
            raise ModelFormatError(f"{path}: {e}") from None

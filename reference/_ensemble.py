"""The trees of every model: ``Tree`` (flat node arrays) and ``Ensemble`` (weighted trees on a base score).

Routing, scoring and the file format: :mod:`~twinrank.reference.model`, whose public names these are.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._model_json import (FORMAT, VERSION, _decode, _decode_scalar, _encode, _encode_scalar, _read_json,
                          write_json_atomic)
from .constants import LEAF
from .errors import ModelFormatError

# (name, dtype) of the per-node arrays of a Tree, in file order.
TREE_FIELDS = (
    ("feature", np.int32),
    ("threshold", np.float64),
    ("bin_threshold", np.int32),
    ("left", np.int32),
    ("right", np.int32),
    ("missing", np.int32),
    ("value", np.float64),
    ("gain", np.float64),
    ("count", np.int64),
    ("hessian_sum", np.float64),
)


@dataclass
class Tree:
    """One regression tree as flat per-node arrays (see the module docstring)."""

    feature: np.ndarray
    threshold: np.ndarray
    bin_threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    count: np.ndarray
    hessian_sum: np.ndarray

    def __post_init__(self):
        n = len(self.feature)
        for name, dtype in TREE_FIELDS:
            arr = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            if arr.shape != (n,):
                raise ModelFormatError(f"tree field {name!r} has shape {arr.shape}, expected ({n},)")
            setattr(self, name, arr)

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left == LEAF

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    def to_dict(self) -> dict:
        """The tree as a JSON-ready dict of per-node lists (non-finite floats as strings)."""
        return {name: _encode(getattr(self, name)) for name, _ in TREE_FIELDS}

    @classmethod
    def from_dict(cls, d: dict) -> "Tree":
        """The tree of :meth:`to_dict`; ModelFormatError if a field is missing."""
        missing = [name for name, _ in TREE_FIELDS if name not in d]
        if missing:
            raise ModelFormatError(f"tree is missing fields {missing}")
        return cls(**{name: _decode(d[name]) for name, _ in TREE_FIELDS})

    def equals(self, other: "Tree") -> bool:
        """Exact equality of structure and values (``threshold``/``value`` bit-equal)."""
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n, _ in TREE_FIELDS)


@dataclass
class Ensemble:
    r"""A sum of weighted trees on top of a base score and an optional prior model.

    Attributes
    ----------
    trees : list of Tree
    tree_weights : ndarray of float64, one per tree (shrinkage is folded into the
        leaf values; weights are 1 for boosting, 1/T for a forest, DART rescales them)
    base_score : float, $F_0$ without the prior model
    n_features : int, the width of the feature matrix the model was trained on
    init_model : Ensemble or None, the prior model whose score is added (LambdaSMART, IGBRT)
    algorithm : str, e.g. ``"lambdamart"``
    params : dict, the training parameters (JSON-serialisable)
    history : dict of lists, per-iteration metric values (``"valid:ndcg@10"``, ``"train:ndcg@10"`` with ``eval_train``)
    best_iteration : int or None, number of trees of the best validation score
    missing : dict or None, the fitted missing-value strategy (``missing.MissingValues.to_dict``)
        applied to every ``X`` before scoring; None (the default, and in files without
        it) scores ``X`` as it is
    """

    trees: list = field(default_factory=list)
    tree_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    base_score: float = 0.0
    n_features: int = 0
    init_model: "Ensemble | None" = None
    algorithm: str = ""
    params: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)
    best_iteration: int | None = None
    missing: dict | None = None

    def __post_init__(self):
        self.tree_weights = np.asarray(self.tree_weights, dtype=np.float64)
        if len(self.tree_weights) != len(self.trees):
            raise ModelFormatError(
                f"{len(self.trees)} trees but {len(self.tree_weights)} tree weights"
            )

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def truncated(self, n_trees: int) -> "Ensemble":
        """The same model keeping only its first ``n_trees`` trees."""
        return Ensemble(
            trees=self.trees[:n_trees], tree_weights=self.tree_weights[:n_trees],
            base_score=self.base_score, n_features=self.n_features,
            init_model=self.init_model, algorithm=self.algorithm, params=dict(self.params),
            history={k: list(v) for k, v in self.history.items()},
            best_iteration=self.best_iteration, missing=self.missing,
        )

    def to_dict(self) -> dict:
        """The model as a JSON-ready dict with its format name and version."""
        missing = {} if self.missing is None else {"missing": self.missing}
        return {
            "format": FORMAT,
            "version": VERSION,
            "algorithm": self.algorithm,
            "n_features": int(self.n_features),
            "base_score": _encode_scalar(self.base_score),
            "params": self.params,
            "history": self.history,
            "best_iteration": self.best_iteration,
            "init_model": None if self.init_model is None else self.init_model.to_dict(),
            "tree_weights": _encode(self.tree_weights),
            "trees": [t.to_dict() for t in self.trees],
            **missing,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Ensemble":
        """The model of :meth:`to_dict`; ModelFormatError for a wrong format, version or field."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ModelFormatError(f"not a twinrank model (format field is {d.get('format')!r})"
                                   if isinstance(d, dict) else "not a twinrank model")
        if d.get("version") != VERSION:
            raise ModelFormatError(
                f"model format version {d.get('version')!r} is not supported (this twinrank reads {VERSION})"
            )
        if "trees" not in d and d.get("algorithm"):
            raise ModelFormatError(f"this is a {d['algorithm']} model, not a single ensemble: "
                                   f"load it with its own estimator's load()")
        try:
            return cls(
                trees=[Tree.from_dict(t) for t in d["trees"]],
                tree_weights=_decode(d["tree_weights"]),
                base_score=float(_decode_scalar(d["base_score"])),
                n_features=int(d["n_features"]),
                init_model=None if d.get("init_model") is None else cls.from_dict(d["init_model"]),
                algorithm=d.get("algorithm", ""),
                params=d.get("params", {}),
                history=d.get("history", {}),
                best_iteration=d.get("best_iteration"),
                missing=d.get("missing"),
            )
        except KeyError as e:
            raise ModelFormatError(f"model is missing field {e.args[0]!r}") from None

    def save(self, path) -> None:
        """Write the model as JSON, atomically (temporary file, then rename)."""
        write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path) -> "Ensemble":
        """Read a model file written by :meth:`save` (by either twin)."""
        d = _read_json(path)
        try:
            return cls.from_dict(d)
        except ModelFormatError as e:
            raise ModelFormatError(f"{path}: {e}") from None

r"""The model format shared by both twins: :class:`Tree`, :class:`Ensemble`, JSON on disk.

A tree is a struct of flat arrays indexed by node id (pygbm's and LightGBM's
layout), so any code can walk it and both twins read the same object. Node 0 is
the root; children are appended in the order nodes are split, left before right
(before a third child holding the missing rows, see ``TreeParams.missing_split``).

Routing a row ``x`` at an internal node ``k``::

    v = x[feature[k]]
    if isnan(v):            go to missing[k]        (left[k], right[k] or a third child)
    elif v <= threshold[k]: go to left[k]
    else:                   go to right[k]

and on binned data (``uint8`` bins, ``MISSING_BIN`` for NaN) the same route reads
``bin <= bin_threshold[k]``; the binning guarantees both routes agree. A leaf has
``left == right == missing == -1`` and ``feature == -1``.

The score of an :class:`Ensemble` is

$$F(x) = F_0(x) + \sum_{t} w_t\, f_t(x),$$

with $F_0$ the ``base_score`` plus, if present, the ``init_model``'s score
(LambdaSMART / IGBRT start from a prior model).

Files are JSON (no pickle), versioned by ``FORMAT`` and ``VERSION``, and
written atomically: a temporary file in the target folder, then ``os.replace``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ._atomic import atomic_output
from .constants import LEAF
from .errors import ModelFormatError, ParameterError
from .params import MISSING_STRATEGIES as STRATEGIES

FORMAT = "twinrank-model"
VERSION = 1
MCRANK = "mcrank"  # the algorithm of an McRank model document (a list of classifiers)
SPLIT_STRATEGIES = ("learn", "separate")  # missing values left to the grower (TreeParams.missing_split)

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


def load_model(path) -> "Ensemble | McRankModel":
    """The model of a twinrank model file: an :class:`McRankModel` if its algorithm is
    ``"mcrank"``, else an :class:`Ensemble`."""
    d = _read_json(path)
    model_type = McRankModel if isinstance(d, dict) and d.get("algorithm") == MCRANK else Ensemble
    try:
        return model_type.from_dict(d)
    except ModelFormatError as e:
        raise ModelFormatError(f"{path}: {e}") from None


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{path}: not valid JSON ({e})") from None


@dataclass
class MissingValues:
    """A fitted missing-value strategy: per-feature fill values and, for ``"iterative"``, its models.

    The strategies and how they are fitted: :mod:`~twinrank.reference.missing`.

    Attributes
    ----------
    strategy : one of ``STRATEGIES``
    fill : float64 array (n_features,), float32-representable; empty for ``"learn"`` and ``"separate"``
    imputers : list over rounds of lists of ``(feature, Ensemble)``; empty unless ``"iterative"``
    """

    strategy: str
    fill: np.ndarray = field(default_factory=lambda: np.zeros(0))
    imputers: list = field(default_factory=list)

    scorer = None  # predict_ensemble(model, X) of the iterative imputers; each twin's missing.py sets it

    def __post_init__(self):
        check_strategy(self.strategy)
        self.fill = np.asarray(self.fill, dtype=np.float64)

    def transform(self, X, predict_ensemble=None) -> np.ndarray:
        """A copy of ``X`` with its NaN entries filled (``X`` itself for ``"learn"`` and ``"separate"``).

        ``predict_ensemble`` scores the iterative imputers (default: the ``scorer`` of
        the twin that made this object).
        """
        X = np.asarray(X)
        if not len(self.fill):
            return X
        if X.ndim != 2 or X.shape[1] != len(self.fill):
            raise ParameterError(f"X has shape {X.shape} but the missing-value strategy was fitted "
                                 f"on {len(self.fill)} features")
        score = predict_ensemble or self.scorer
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
            return cls(d["strategy"], np.array(d["fill"], dtype=np.float64),
                       [[(int(f), Ensemble.from_dict(m)) for f, m in stage] for stage in d["imputers"]])
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


def write_json_atomic(path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` so that readers never see a partial file."""
    with atomic_output(path) as out:
        out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8"))


# JSON has no inf/nan: non-finite floats are written as the strings "inf", "-inf", "nan".
def _encode_scalar(v):
    v = float(v)
    return v if np.isfinite(v) else repr(v)


def _decode_scalar(v):
    return float(v) if isinstance(v, str) else v


def _encode(arr: np.ndarray) -> list:
    if arr.dtype.kind == "f":
        return [_encode_scalar(v) for v in arr.tolist()]
    return arr.tolist()


def _decode(values: list) -> np.ndarray:
    return np.array([_decode_scalar(v) for v in values])

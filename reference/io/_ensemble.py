"""The trees of every model: ``Tree`` (flat node arrays) and ``Ensemble`` (weighted trees on a base score).

Routing, scoring and the file format: :mod:`~twinrank.reference.io.model`, whose public names these are.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io._model_fields import (
    float_array,
    float_value,
    int_array,
    int_value,
    join,
    refuse_unknown,
    require,
    typed,
    width,
)
from twinrank.reference.io._model_json import (
    FORMAT,
    VERSION,
    ModelFile,
    _encode,
    _encode_scalar,
    check_header,
)
from twinrank.reference.io._tree_structure import check_tree

# The fields of an ensemble's document (``to_dict``), and its checksum (``_model_json``).
ENSEMBLE_FIELDS = ("format", "version", "checksum", "algorithm", "n_features", "base_score", "params", "history",
                   "best_iteration", "init_model", "tree_weights", "trees", "missing", "snapshots", "retired_trees")
SNAPSHOT_FIELDS = ("size", "members", "tree_weights")
FOREST_ALGORITHM = "random_forest"  # a model scoring the mean of its trees
DROPOUT_ALGORITHMS = ("dart", "x-dart")  # models whose trees are rescaled after they are grown

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


@dataclass(frozen=True)
class Tree:
    """One regression tree as flat per-node arrays (see the module docstring).

    A tree is a value: its fields cannot be reassigned and its arrays are read-only, owned by
    the tree (an array passed in is copied unless it already is such an array, another tree's
    field), so a tree scores the same for as long as it exists and a scorer may keep what it
    derived from it (the fast twin's packed layouts). A changed tree is a new tree:
    ``dataclasses.replace(tree, value=tree.value * 0.1)``.
    """

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
        """Convert the arrays to their dtypes and refuse arrays that are not a tree (``_tree_structure``)."""
        n = len(self.feature)
        for name, dtype in TREE_FIELDS:
            arr = np.asarray(getattr(self, name))
            if arr.shape != (n,):
                raise ModelFormatError(f"tree.{name}: has shape {arr.shape}, expected ({n},)")
            if np.dtype(dtype).kind == "i" and arr.size and (arr.min() < np.iinfo(dtype).min
                                                              or arr.max() > np.iinfo(dtype).max):
                raise ModelFormatError(f"tree.{name}: a value is beyond the range of {np.dtype(dtype).name}")
            object.__setattr__(self, name, _read_only(arr, dtype))
        check_tree(self, "tree")

    def __reduce__(self):
        """Pickled and copied through the constructor, so a copy's arrays are read-only too."""
        return Tree, tuple(getattr(self, name) for name, _ in TREE_FIELDS)

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def max_feature(self) -> int:
        """The largest feature index the tree splits on (-1 for a single leaf)."""
        return int(self.feature.max())

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
    def from_dict(cls, d: dict, path: str = "tree") -> "Tree":
        """The tree of :meth:`to_dict`; ModelFormatError naming ``path.field[node]`` for any fault."""
        typed(d, dict, path)
        refuse_unknown(d, [name for name, _ in TREE_FIELDS], path)
        arrays = {name: (float_array if np.dtype(dtype).kind == "f" else int_array)(require(d, name, path),
                                                                                    join(path, name))
                  for name, dtype in TREE_FIELDS}
        try:
            return cls(**arrays)
        except ModelFormatError as e:  # __post_init__ names the tree "tree"; name it by its path
            raise ModelFormatError(path + str(e).removeprefix("tree")) from None

    def equals(self, other: "Tree") -> bool:
        """Exact equality of structure and values (``threshold``/``value`` bit-equal)."""
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n, _ in TREE_FIELDS)


def _read_only(arr: np.ndarray, dtype) -> np.ndarray:
    """``arr`` as a read-only C-ordered array of ``dtype`` owning its memory: ``arr`` itself if it
    already is one, else a copy (nobody else holds a writable view of it)."""
    if arr.dtype == dtype and arr.flags.c_contiguous and not arr.flags.writeable and arr.base is None:
        return arr
    arr = np.array(arr, dtype=dtype, order="C")
    arr.flags.writeable = False
    return arr


@dataclass
class Snapshot:
    """An ensemble as it was when it first held ``size`` trees (DART and X-DART rescale and prune later).

    ``members`` index the model's tree pool, ``trees + retired_trees``; ``tree_weights``
    are those trees' weights at that moment.
    """

    size: int
    members: np.ndarray
    tree_weights: np.ndarray

    def __post_init__(self):
        self.members = np.asarray(self.members, dtype=np.int64)
        self.tree_weights = np.asarray(self.tree_weights, dtype=np.float64)

    def check(self, pool_size: int, path: str) -> None:
        """Refuse a snapshot whose members are not ``size`` distinct trees of the pool, or whose weights are not finite."""
        if self.size < 0 or self.members.shape != (self.size,) or self.tree_weights.shape != (self.size,):
            raise ModelFormatError(f"{path}: size {self.size} but {self.members.shape} members and "
                                   f"{self.tree_weights.shape} tree weights")
        if self.size and (self.members.min() < 0 or self.members.max() >= pool_size):
            raise ModelFormatError(f"{path}.members: a member is not a tree of the pool (0..{pool_size - 1})")
        if len(np.unique(self.members)) != self.size:
            raise ModelFormatError(f"{path}.members: a tree is listed twice")
        if not np.all(np.isfinite(self.tree_weights)):
            raise ModelFormatError(f"{path}.tree_weights: not all finite")

    def to_dict(self) -> dict:
        return {"size": int(self.size), "members": self.members.tolist(), "tree_weights": _encode(self.tree_weights)}

    @classmethod
    def from_dict(cls, d, path: str) -> "Snapshot":
        typed(d, dict, path)
        refuse_unknown(d, SNAPSHOT_FIELDS, path)
        return cls(size=int_value(require(d, "size", path), join(path, "size"), minimum=0),
                   members=int_array(require(d, "members", path), join(path, "members")),
                   tree_weights=float_array(require(d, "tree_weights", path), join(path, "tree_weights")))


@dataclass
class Ensemble(ModelFile):
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
    snapshots : list of Snapshot, the model at earlier sizes (DART, X-DART: ``n_trees=size``
        scores the snapshot, not a prefix); empty for every other model
    retired_trees : list of Tree, trees of some snapshot that the final model no longer holds
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
    snapshots: list = field(default_factory=list)
    retired_trees: list = field(default_factory=list)

    def __post_init__(self):
        """Refuse weights, scores or feature indices a scorer could not use safely."""
        self.tree_weights = np.asarray(self.tree_weights, dtype=np.float64)
        if len(self.tree_weights) != len(self.trees):
            raise ModelFormatError(
                f"{len(self.trees)} trees but {len(self.tree_weights)} tree weights"
            )
        if not np.all(np.isfinite(self.tree_weights)):
            raise ModelFormatError("tree_weights: not all finite")
        if not np.isfinite(self.base_score):
            raise ModelFormatError(f"base_score: {self.base_score} is not finite")
        for t, tree in enumerate(self.trees):
            if tree.max_feature >= self.n_features:
                raise ModelFormatError(f"trees[{t}].feature: splits on column {tree.max_feature} (f{tree.max_feature + 1}) but the "
                                       f"model takes n_features = {self.n_features}")
        for t, tree in enumerate(self.retired_trees):
            if tree.max_feature >= self.n_features:
                raise ModelFormatError(f"retired_trees[{t}].feature: splits on column {tree.max_feature} (f{tree.max_feature + 1}) but the "
                                       f"model takes n_features = {self.n_features}")
        sizes = [snapshot.size for snapshot in self.snapshots]
        if len(set(sizes)) != len(sizes):
            raise ModelFormatError(f"snapshots: a size is given twice ({sizes})")
        for i, snapshot in enumerate(self.snapshots):
            snapshot.check(len(self.trees) + len(self.retired_trees), f"snapshots[{i}]")
        if self.init_model is not None and self.init_model.n_features != self.n_features:
            raise ModelFormatError(f"init_model: takes {self.init_model.n_features} features, the model "
                                   f"{self.n_features}")

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    @property
    def snapshot_sizes(self) -> list:
        """The sizes of the model's snapshots, increasing (empty for a model without any)."""
        return sorted(snapshot.size for snapshot in self.snapshots)

    @property
    def sizes_only(self) -> bool:
        """Whether only the model's kept sizes can be scored: a DART or X-DART model, whose trees were
        rescaled (and pruned) after they were grown, so its first $k$ trees are not its model of size $k$."""
        return bool(self.snapshots) or self.algorithm in DROPOUT_ALGORITHMS

    def truncated(self, n_trees: int) -> "Ensemble":
        """The same model keeping only its first ``n_trees`` trees.

        A random forest's first $k$ trees are the forest of $k$ trees, each weighted $1/k$ (the mean,
        as LightGBM's ``rf`` scores its first iterations). A DART or X-DART model is not a sum whose
        prefixes mean anything (:attr:`sizes_only`): there ``n_trees`` must be 0, the model's own size,
        or a snapshot's size, and the result is that snapshot; without snapshots any other size is
        refused, naming ``snapshot_sizes``. The mean of several boosting runs (``average_runs``) has
        no model of fewer trees either: its first trees are its first run's.
        """
        if self.sizes_only and not self.snapshots and n_trees not in (0, self.n_trees):
            raise ParameterError(
                f"n_trees={n_trees}: the first {n_trees} trees of this {self.algorithm} model are its final, "
                "rescaled trees, not the model it had at that size (Lucchese et al. 2017, Table 1); train "
                f"with snapshot_sizes=({n_trees},) (twinrank train --snapshot-sizes {n_trees}) to keep that model")
        if self.params.get("average_runs", 1) > 1 and n_trees not in (0, self.n_trees):
            raise ParameterError(
                f"n_trees={n_trees}: this model is the mean of {self.params['average_runs']} boosting runs, its "
                f"trees those of one run after another; no count of them is the average model of that size")
        trees, weights = self.trees[:n_trees], self.tree_weights[:n_trees]
        if self.algorithm == FOREST_ALGORITHM and 0 < n_trees < self.n_trees:
            weights = np.full(n_trees, 1.0 / n_trees)  # a forest's first k trees score as their mean
        if self.snapshots and n_trees not in (0, self.n_trees):
            snapshot = {s.size: s for s in self.snapshots}.get(n_trees)
            if snapshot is None:
                raise ModelFormatError(f"this {self.algorithm} model keeps snapshots at sizes {self.snapshot_sizes} "
                                       f"and its final {self.n_trees} trees; n_trees={n_trees} is none of them")
            pool = self.trees + self.retired_trees
            trees, weights = [pool[i] for i in snapshot.members], snapshot.tree_weights
        return Ensemble(
            trees=trees, tree_weights=weights,
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
            **self._snapshots_dict(),
        }

    def _snapshots_dict(self) -> dict:
        """The snapshot fields of :meth:`to_dict`, only for a model that has snapshots."""
        if not self.snapshots:
            return {}
        return {"snapshots": [s.to_dict() for s in self.snapshots],
                "retired_trees": [t.to_dict() for t in self.retired_trees]}

    @classmethod
    def from_dict(cls, d: dict, path: str = "") -> "Ensemble":
        """The model of :meth:`to_dict`; ModelFormatError naming the field (``trees[3].left[17]``)."""
        check_header(d, path)
        if "trees" not in d and isinstance(d.get("algorithm"), str) and d["algorithm"]:
            raise ModelFormatError(f"this is a {d['algorithm']} model, not a single ensemble: "
                                   f"load it with its own estimator's load()")
        refuse_unknown(d, ENSEMBLE_FIELDS, path)
        trees = typed(require(d, "trees", path), list, join(path, "trees"))
        init_model = typed(d.get("init_model"), dict, join(path, "init_model"), optional=True)
        best = d.get("best_iteration")
        try:
            return cls(
                trees=[Tree.from_dict(t, join(path, f"trees[{i}]")) for i, t in enumerate(trees)],
                tree_weights=float_array(require(d, "tree_weights", path), join(path, "tree_weights")),
                base_score=float_value(require(d, "base_score", path), join(path, "base_score")),
                n_features=width(require(d, "n_features", path), join(path, "n_features")),
                init_model=None if init_model is None else cls.from_dict(init_model, join(path, "init_model")),
                algorithm=typed(d.get("algorithm", ""), str, join(path, "algorithm")),
                params=typed(d.get("params", {}), dict, join(path, "params")),
                history=typed(d.get("history", {}), dict, join(path, "history")),
                best_iteration=None if best is None else int_value(best, join(path, "best_iteration"), minimum=0),
                missing=typed(d.get("missing"), dict, join(path, "missing"), optional=True),
                snapshots=[Snapshot.from_dict(s, join(path, f"snapshots[{i}]"))
                           for i, s in enumerate(typed(d.get("snapshots", []), list, join(path, "snapshots")))],
                retired_trees=[Tree.from_dict(t, join(path, f"retired_trees[{i}]")) for i, t in
                               enumerate(typed(d.get("retired_trees", []), list, join(path, "retired_trees")))],
            )
        except ModelFormatError as e:
            message = str(e)
            raise ModelFormatError(message if not path or message.startswith(path) else f"{path}: {message}") from None

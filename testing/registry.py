r"""The twin registry: one row per twinned component, one tolerance table.

Every row names a function (or an estimator class) by module and name, looked up
at call time in ``twinrank.reference.<module>`` and in ``twinrank.fast.<module>``,
the tolerance its outputs must meet, and how to build its inputs from any ranking
data set. The agreement tests (``tests/test_registry.py``), :mod:`twinrank.testing`
and ``twinrank verify`` all read this one table (JAX's ``lax_reference`` registry is
the model), so a new component is one new row here.

**Inputs.** A row's ``inputs(data, rng)`` turns a :class:`~twinrank.reference.data.Dataset`
(its features, labels and queries) and a ``numpy.random.Generator`` into the
arguments of one call (:class:`Inputs`); both twins get deep copies of them, so a
kernel writing into its arguments cannot make the other twin agree by accident.
Only the *reference* twin is used to prepare inputs (e.g. the bins a histogram
reads). Where bit equality is owed (histograms, split choice, one tree), the
gradients and hessians are small multiples of $2^{-8}$: sums of a few of them
are exact in any order (DESIGN.md, "Floating point").

**Outputs.** A row's ``outputs(result)`` flattens what the function returned into
named arrays (a :class:`~twinrank.reference.model.Tree` into its node arrays, a
fitted estimator into its test scores and its trees). Integer, boolean and
structure arrays must be equal; float arrays must meet the row's tolerance.

**Tolerances** (:data:`TOLERANCES`), keyed by the kind of arithmetic, as elementwise
bounds $|f - r| \le a + \rho\,|r|$, with $a$ multiplied by
$1 + \max |r|$ when ``scaled``:

========== ================== ==========================================================
key        $(\rho, a)$         why
========== ================== ==========================================================
exact      (0, 0)             the same operations in the same order, or exact sums
objectives (1e-10, 1e-10 sc.) pair sums in another order; $e^{x-y}$ as a product
models     (1e-9, 1e-12)      many rounds of float sums in another order (leaf values,
                              scores); the splits themselves must be equal
========== ================== ==========================================================
"""
from __future__ import annotations

import copy
import importlib
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from twinrank.reference.model import LEAF, TREE_FIELDS

__all__ = ["Tolerance", "TOLERANCES", "Inputs", "Twin", "REGISTRY", "get", "names", "layers",
           "METRIC_NAMES", "ESTIMATOR_TREES", "tree_parts", "model_parts", "split_parts"]


# ---------------------------------------------------------------- tolerances

@dataclass(frozen=True)
class Tolerance:
    r"""Elementwise bound $|f - r| \le a' + \rho |r|$, $a' = a (1 + \max|r|)$ if ``scaled``."""

    rtol: float
    atol: float
    scaled: bool = False
    why: str = ""

    def bound(self, reference: np.ndarray) -> np.ndarray:
        """The allowed absolute difference at each element of ``reference`` (float64)."""
        reference = np.abs(np.asarray(reference, dtype=np.float64))
        reference = np.where(np.isfinite(reference), reference, 0.0)  # NaN and inf are compared apart
        atol = self.atol * (1.0 + reference.max(initial=0.0)) if self.scaled else self.atol
        return atol + self.rtol * reference

    def describe(self) -> str:
        if self.rtol == 0 and self.atol == 0:
            return "exact"
        atol = f"{self.atol:g}*(1+max|r|)" if self.scaled else f"{self.atol:g}"
        return f"rtol {self.rtol:g}, atol {atol}"

    def to_dict(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol, "scaled": self.scaled}


TOLERANCES: dict[str, Tolerance] = {
    "exact": Tolerance(0.0, 0.0, why="the same operations in the same order, or sums of exact values"),
    "objectives": Tolerance(1e-10, 1e-10, scaled=True,
                            why="pair sums in another order; e^(x-y) taken as e^x * e^-y"),
    "models": Tolerance(1e-9, 1e-12, why="leaf values and scores summed in another order over many "
                                          "rounds; the splits themselves must be equal"),
}


# ---------------------------------------------------------------- rows

@dataclass
class Inputs:
    """The arguments of one call: ``function(*args, **kwargs)``, plus what the report says of them."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    note: str = ""

    def copy(self) -> "Inputs":
        """A deep copy (each twin gets its own arrays)."""
        return Inputs(copy.deepcopy(self.args), copy.deepcopy(self.kwargs), self.note)


def _call(function, inputs: Inputs):
    return function(*inputs.args, **inputs.kwargs)


def _as_parts(result) -> dict:
    """Default outputs: an array, or a tuple of arrays named ``0, 1, ...``, or a dict of arrays."""
    if isinstance(result, dict):
        return {str(k): np.asarray(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return {str(i): np.asarray(v) for i, v in enumerate(result)}
    return {"value": np.asarray(result)}


@dataclass(frozen=True)
class Twin:
    """One twinned component: ``twinrank.<twin>.<module>.<function>`` in both twins.

    Attributes
    ----------
    name : the component's name in reports, e.g. ``"lambdarank[map]"``
    layer : the stage it belongs to (metrics, bins, histograms, split choice, one tree,
        lambdas, gradients, scoring, whole models)
    module, function : where both twins define it (``function`` may be a class)
    tolerance : a key of :data:`TOLERANCES`
    inputs : ``(data: Dataset, rng: numpy.random.Generator) -> Inputs``
    outputs : the result as named arrays (``dict[str, ndarray]``)
    call : ``(function, inputs) -> result``; default ``function(*args, **kwargs)``
    summary : one line on what is compared
    diagnose : ``(inputs, reference_result, fast_result) -> str``, called when the twins
        disagree: a known cause of the disagreement, or ``""``
    """

    name: str
    layer: str
    module: str
    function: str
    tolerance: str
    inputs: Callable[[Any, np.random.Generator], Inputs]
    outputs: Callable[[Any], dict] = _as_parts
    call: Callable[[Any, Inputs], Any] = _call
    summary: str = ""
    diagnose: Callable[[Inputs, Any, Any], str] | None = None

    def __post_init__(self):
        if self.tolerance not in TOLERANCES:
            raise ValueError(f"{self.name}: unknown tolerance {self.tolerance!r}")

    @property
    def tol(self) -> Tolerance:
        return TOLERANCES[self.tolerance]

    def rng(self, seed: int) -> np.random.Generator:
        """This row's generator: ``default_rng([seed, crc32(name)])`` (rows draw independently)."""
        return np.random.default_rng([int(seed), zlib.crc32(self.name.encode())])

    def resolve(self, twin: str):
        """The function (or class) of ``twin`` ("reference" or "fast"), looked up now."""
        module = importlib.import_module(f"twinrank.{twin}.{self.module}")
        return getattr(module, self.function)


# ---------------------------------------------------------------- shared input pieces

STEP = 2.0**-8  # exact gradients: sums of a few multiples of 2**-8 are exact in any order


def exact_gradients(rng, n_rows: int):
    """Gradients in [-0.5, 0.5] and hessians in [0, 0.25], multiples of 2**-8."""
    return rng.integers(-128, 129, n_rows) * STEP, rng.integers(0, 65, n_rows) * STEP


def tied_scores(rng, n_rows: int) -> np.ndarray:
    """Model-like scores, a third of them on a coarse grid (ties inside queries)."""
    scores = rng.standard_normal(n_rows) * 2.0  # (n_rows,)
    grid = rng.random(n_rows) < 1 / 3
    scores[grid] = np.round(scores[grid] * 2) / 2
    return scores


def _reference(module: str):
    return importlib.import_module(f"twinrank.reference.{module}")


def _thresholds(data, max_bins=255):
    return _reference("binning").bin_thresholds(data.X, max_bins)


def _binned(data, max_bins=255):
    thresholds = _thresholds(data, max_bins)
    return _reference("binning").apply_bins(data.X, thresholds), thresholds


def _tree_params(**options):
    return _reference("params").TreeParams(**options)


def _min_rows(n_rows: int) -> int:
    """A leaf size that keeps trees small on big data and still splits tiny data."""
    return int(np.clip(n_rows // 200, 1, 20))


def _model_leaf(n_rows: int) -> int:
    """Estimators' leaf size: 10 to 20 rows, as the estimator agreement tests use (fewer
    near-ties between splits that cut a node into the same rows)."""
    return int(np.clip(n_rows // 100, 10, 20))


def train_test(data, rng, test_fraction=0.25):
    """Split the queries at random into training and test sets (both the whole data if one query)."""
    n = data.n_queries
    if n < 2:
        return data, data
    order = rng.permutation(n)  # (n_queries,)
    n_test = max(1, int(round(test_fraction * n)))
    return data.take_queries(np.sort(order[n_test:])), data.take_queries(np.sort(order[:n_test]))


# ---------------------------------------------------------------- metrics

METRIC_NAMES = ("ndcg", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "dcg", "dcg@10", "meanndcg", "map",
                "map@10", "p@1", "p@5", "p@10", "err", "err@10", "rr", "rr@10", "auc", "pauc",
                "pauc@0.3", "rmse")


def _doc_ids(data, rng):
    """The ``docid = X`` of the comments when every row has one; else unique ids in random order."""
    metrics = _reference("metrics")
    if data.comments is not None:
        try:
            return metrics.doc_ids_from_comments(data.comments)
        except ValueError:
            pass
    return np.array([f"d{i:08d}" for i in rng.permutation(data.n_rows)], dtype=str)


def _metric_inputs(convention):
    def inputs(data, rng):
        return Inputs((list(METRIC_NAMES), data.y, tied_scores(rng, data.n_rows), data.query_offsets),
                      dict(convention=convention, doc_ids=_doc_ids(data, rng), per_query=True),
                      note=f"{len(METRIC_NAMES)} metrics per query, scores with ties")
    return inputs


def _metric_rows():
    return [Twin(f"metrics[{c}]", "metrics", "metrics", "evaluate", "exact", _metric_inputs(c),
                 summary=f"every metric per query under the {c!r} convention: "
                         + ", ".join(METRIC_NAMES))
            for c in ("lightgbm", "xgboost", "ranklib", "letor", "trec")]


# ---------------------------------------------------------------- bins

def _thresholds_parts(thresholds) -> dict:
    return {"n_thresholds": np.array([len(t) for t in thresholds]),
            "thresholds": np.concatenate([np.asarray(t, dtype=np.float64) for t in thresholds]
                                         or [np.zeros(0)])}


def _bin_rows():
    return [
        Twin("bin_thresholds", "bins", "binning", "bin_thresholds", "exact",
             lambda data, rng: Inputs((data.X, 255)), outputs=_thresholds_parts,
             summary="quantile thresholds of every feature, 255 bins"),
        Twin("bin_thresholds[16 bins]", "bins", "binning", "bin_thresholds", "exact",
             lambda data, rng: Inputs((data.X, 16)), outputs=_thresholds_parts,
             summary="quantile thresholds of every feature, 16 bins"),
        Twin("apply_bins", "bins", "binning", "apply_bins", "exact",
             lambda data, rng: Inputs((data.X, _thresholds(data))),
             summary="every feature value to its uint8 bin"),
    ]


# ---------------------------------------------------------------- histograms, splits, trees

def _histogram_inputs(data, rng):
    binned, _ = _binned(data)
    g, h = exact_gradients(rng, data.n_rows)
    rows = np.sort(rng.integers(0, data.n_rows, data.n_rows))  # (n_rows,) a bootstrap
    return Inputs((binned, g, h, rows), note="exact gradients, bootstrap rows")


def _split_inputs(missing_split):
    def inputs(data, rng):
        tree = _reference("tree")
        binned, thresholds = _binned(data)
        g, h = exact_gradients(rng, data.n_rows)
        rows = np.flatnonzero(rng.random(data.n_rows) < 0.5)  # (~n_rows / 2,) a node's rows
        if len(rows) == 0:
            rows = np.arange(data.n_rows)
        hist = tree.build_histogram(binned, g, h, rows)  # (n_features, 256, 3)
        totals = np.array([g[rows].sum(), h[rows].sum(), len(rows)])
        n_bins = np.array([len(t) + 1 for t in thresholds])
        allowed = rng.random(data.n_features) < 0.8
        penalty = 0.01 * rng.integers(0, 4, data.n_features)
        params = _tree_params(min_samples_leaf=_min_rows(len(rows)), lambda_l2=1.0,
                              missing_split=missing_split)
        return Inputs((hist, totals, n_bins, allowed, penalty, params, params.min_rows_in_leaf(len(rows))),
                      note="a node of half the rows, exact gradients, 80% of the features, cost penalty")
    return inputs


def split_parts(split) -> dict:
    """A ``Split`` (or None) as arrays: found, gain, feature, bin, missing_left, missing_child."""
    if split is None:
        return {"found": np.array([False])}
    return {"found": np.array([True]), "gain": np.array([split.gain]),
            "feature": np.array([split.feature]), "bin_threshold": np.array([split.bin_threshold]),
            "missing_left": np.array([split.missing_left]),
            "missing_child": np.array([split.missing_child])}


def tree_parts(tree, prefix: str = "") -> dict:
    """The node arrays of a Tree (``feature``, ``threshold``, ..., ``hessian_sum``)."""
    return {prefix + name: getattr(tree, name) for name, _ in TREE_FIELDS}


def _tree_inputs(max_leaves, **options):
    def inputs(data, rng):
        binned, thresholds = _binned(data)
        g, h = exact_gradients(rng, data.n_rows)
        params = _tree_params(max_leaves=max_leaves, min_samples_leaf=_min_rows(data.n_rows),
                              min_hessian_in_leaf=STEP, **options)
        n_nodes = 2 * max_leaves - 1
        mask = rng.random((n_nodes, data.n_features)) < 0.7  # (n_nodes, n_features)
        rows = np.sort(rng.integers(0, data.n_rows, data.n_rows))
        cost = rng.integers(0, 4, data.n_features) * 0.25
        return Inputs((binned, g, h, thresholds, params),
                      dict(rows=rows, feature_mask=mask, feature_cost=cost),
                      note=f"{max_leaves} leaves, exact gradients, bootstrap rows, feature mask and costs")
    return inputs


def _tree_rows():
    return [
        Twin("build_histogram", "histograms", "tree", "build_histogram", "exact", _histogram_inputs,
             summary="per feature and bin: sums of gradients, hessians and rows"),
        Twin("find_best_split", "split choice", "tree", "find_best_split", "exact",
             _split_inputs("learn"), outputs=split_parts,
             summary="the best split of one node: gain, feature, bin, missing side"),
        Twin("find_best_split[separate]", "split choice", "tree", "find_best_split", "exact",
             _split_inputs("separate"), outputs=split_parts,
             summary="the same with a child of their own for missing values"),
        Twin("grow_tree", "one tree", "tree", "grow_tree", "exact",
             _tree_inputs(31, lambda_l2=0.5), outputs=tree_parts,
             summary="a leaf-wise tree of 31 leaves: structure and node values"),
        Twin("grow_tree[separate, depth 4]", "one tree", "tree", "grow_tree", "exact",
             _tree_inputs(12, max_depth=4, missing_split="separate"), outputs=tree_parts,
             summary="a depth-limited tree with three-way missing-value splits"),
    ]


# ---------------------------------------------------------------- objectives

def _lambdarank_inputs(**options):
    def inputs(data, rng):
        kwargs = dict(options)
        if kwargs.pop("half_of_the_queries", False):
            kwargs["queries"] = np.flatnonzero(rng.random(data.n_queries) < 0.5)
        return Inputs((data.y, tied_scores(rng, data.n_rows), data.query_offsets), kwargs,
                      note=", ".join(f"{k}={v}" for k, v in options.items()))
    return inputs


def _gradient_parts(result) -> dict:
    g, h = result
    return {"g": g, "h": h}


def _objective_rows():
    variants = [
        ("lambdarank[ndcg]", {}),
        ("lambdarank[ndcg@10, truncation 20]", dict(k=10, truncation=20)),
        ("lambdarank[ndcg, normalize]", dict(normalize=True)),
        ("lambdarank[ndcg@5, linear gain, sigma 2]", dict(k=5, gain="linear", sigma=2.0)),
        ("lambdarank[map]", dict(metric="map")),
        ("lambdarank[err]", dict(metric="err")),
        ("lambdarank[err@5, half of the queries]", dict(metric="err", k=5, half_of_the_queries=True)),
    ]
    rows = [Twin(name, "lambdas", "objectives", "lambdarank", "objectives", _lambdarank_inputs(**options),
                 outputs=_gradient_parts, summary="LambdaRank gradients and hessians of every row")
            for name, options in variants]
    rows += [
        Twin("rank_order", "lambdas", "objectives", "rank_order", "exact",
             lambda data, rng: Inputs((tied_scores(rng, data.n_rows), data.query_offsets)),
             summary="each query's rows by descending score, ties in input order"),
        Twin("squared_error", "gradients", "objectives", "squared_error", "objectives",
             lambda data, rng: Inputs((data.y, tied_scores(rng, data.n_rows))),
             outputs=_gradient_parts, summary="gradients and hessians of the squared error"),
        Twin("logistic", "gradients", "objectives", "logistic", "objectives",
             lambda data, rng: Inputs(((data.y > 0).astype(np.float64), 8 * tied_scores(rng, data.n_rows)),
                                      note="labels y > 0"),
             outputs=_gradient_parts, summary="gradients and hessians of the logistic loss (y > 0)"),
    ]
    return rows


# ---------------------------------------------------------------- scoring

def _ensemble_inputs(data, rng):
    """A prior model and three trees grown by the reference twin, weighted, with a base score."""
    model, tree = _reference("model"), _reference("tree")
    binned, thresholds = _binned(data, 32)
    params = _tree_params(max_leaves=8, min_samples_leaf=_min_rows(data.n_rows), min_hessian_in_leaf=0.0)
    trees = [tree.grow_tree(binned, exact_gradients(rng, data.n_rows)[0], np.ones(data.n_rows),
                            thresholds, params) for _ in range(4)]
    prior = model.Ensemble(trees=trees[:1], tree_weights=[0.75], base_score=-0.125,
                           n_features=data.n_features)
    ensemble = model.Ensemble(trees=trees[1:], tree_weights=rng.uniform(0.1, 1.0, 3), base_score=0.3,
                              n_features=data.n_features, init_model=prior)
    return Inputs((ensemble, data.X), note="4 reference trees of 8 leaves, a prior model, weights")


def _tree_and_rows(data, rng):
    inputs = _ensemble_inputs(data, rng)
    return Inputs((inputs.args[0].trees[-1], data.X), note="one reference tree of 8 leaves")


def _scoring_rows():
    return [
        Twin("apply_tree", "scoring", "predict", "apply_tree", "exact", _tree_and_rows,
             summary="the leaf each row reaches"),
        Twin("predict_ensemble", "scoring", "predict", "predict_ensemble", "exact", _ensemble_inputs,
             summary="ensemble scores: prior model + base score + weighted trees"),
    ]


# ---------------------------------------------------------------- whole estimators

ESTIMATOR_TREES = 10  # trees per estimator in the registry: the reference is slow on big data


def _trees_of(model) -> list:
    """Every tree of a fitted model in a fixed order: a prior model's first; each McRank classifier's."""
    if hasattr(model, "classifiers"):
        return [t for c in model.classifiers for t in _trees_of(c)]
    prior = _trees_of(model.init_model) if getattr(model, "init_model", None) is not None else []
    return prior + list(model.trees)


STRUCTURE = ("feature", "bin_threshold", "left", "right", "missing", "count")


def model_parts(result) -> dict:
    """Test scores, then the trees' sizes, structure (exact) and node values (tolerance)."""
    scores, model = result
    trees = _trees_of(model)
    parts = {"scores": scores, "n_nodes": np.array([t.n_nodes for t in trees], dtype=np.int64)}
    for name in STRUCTURE + ("value", "hessian_sum"):
        parts[f"trees.{name}"] = np.concatenate([getattr(t, name) for t in trees] or [np.zeros(0)])
    return parts


def _fit_and_score(estimator_class, inputs: Inputs):
    train, test = inputs.args
    estimator = estimator_class(**inputs.kwargs).fit(train)
    return estimator.predict(test), estimator.model_


NOISE = 1e-9  # a gain below NOISE * (1 + the tree's largest gain) is zero in exact arithmetic


def split_tie(inputs: Inputs, reference, fast) -> str:
    r"""Why two fitted models differ, when the first difference is a near-tie; else ``""``.

    Walks the trees of both models in order to the first node (in creation order) that
    differs, follows the reference tree's path to it with the training rows, and
    reports a tie when both twins split it into the same groups of rows (the same
    partition, maybe mirrored, by other features or bins: equal gains in exact
    arithmetic, rounded differently by each twin's summation order), or when the
    split one twin made has a gain that is zero up to rounding (``NOISE``).
    """
    train = inputs.args[0]
    for t, (a, b) in enumerate(zip(_trees_of(reference[1]), _trees_of(fast[1]))):
        k = _first_different_node(a, b)
        if k is None:
            continue
        scale = 1.0 + max(np.abs(a.gain).max(initial=0.0), np.abs(b.gain).max(initial=0.0))
        rows = _rows_reaching(a, train.X, k)  # (n_node_rows,) training rows of node k
        split_a, split_b = (k < tree.n_nodes and tree.left[k] != LEAF for tree in (a, b))
        if split_a and split_b and _same_partition(a, b, k, train.X[rows]):
            return (f"a near-tie: tree {t} node {k}, feature {a.feature[k]} bin {a.bin_threshold[k]} (reference) "
                    f"and feature {b.feature[k]} bin {b.bin_threshold[k]} (fast) cut its {len(rows)} training rows "
                    f"the same way; gains {float(a.gain[k])!r} and {float(b.gain[k])!r} differ in rounding only")
        noisy = [(name, tree.gain[k]) for name, tree, split in (("reference", a, split_a), ("fast", b, split_b))
                 if split and abs(tree.gain[k]) <= NOISE * scale]
        if noisy:
            name, gain = noisy[0]
            return (f"a near-tie: tree {t} node {k}, the {name} twin splits on a gain of {gain:.1e}, "
                    f"zero in exact arithmetic")
        close = abs(a.gain[k] - b.gain[k]) <= NOISE * scale
        if split_a and split_b and close and _child_counts(a, k) == _child_counts(b, k):
            return (f"a near-tie: tree {t} node {k}, feature {a.feature[k]} bin {a.bin_threshold[k]} (reference) "
                    f"and feature {b.feature[k]} bin {b.bin_threshold[k]} (fast) make children of the same sizes "
                    f"on the round's sample, gains {float(a.gain[k])!r} and {float(b.gain[k])!r}")
        if split_a != split_b:
            one, other = (a, b) if split_a else (b, a)
            later = [j for j in range(k + 1, other.n_nodes) if other.left[j] != LEAF
                     and (j >= one.n_nodes or one.left[j] == LEAF)]
            if any(abs(other.gain[j] - one.gain[k]) <= NOISE * scale for j in later):
                return (f"a near-tie: tree {t}, the best splits of two leaves have equal gains "
                        f"({float(one.gain[k])!r}) up to rounding, and the twins split a different one last")
        return ""
    return ""


def _child_counts(tree, k: int) -> list:
    children = {int(tree.left[k]), int(tree.right[k]), int(tree.missing[k])}
    return sorted(int(tree.count[c]) for c in children)


def _first_different_node(a, b):
    """The first node id whose split (or leafness) differs between trees a and b, or None."""
    n = min(a.n_nodes, b.n_nodes)
    side_a, side_b = a.missing[:n] - a.left[:n], b.missing[:n] - b.left[:n]  # 0: missing left, 1: right, 2: own
    differs = ((a.left[:n] != b.left[:n]) | (a.feature[:n] != b.feature[:n])
               | (a.bin_threshold[:n] != b.bin_threshold[:n]) | (side_a != side_b))  # (n,)
    if differs.any():
        return int(np.flatnonzero(differs)[0])
    return None if a.n_nodes == b.n_nodes else n


def _child_of(tree, k: int, X) -> np.ndarray:
    """The child of node ``k`` each row of ``X`` goes to (raw features, as ``predict`` routes)."""
    v = X[:, tree.feature[k]].astype(np.float64)  # (n,)
    return np.where(np.isnan(v), tree.missing[k], np.where(v <= tree.threshold[k], tree.left[k], tree.right[k]))


def _rows_reaching(tree, X, k: int) -> np.ndarray:
    parent = {int(c): p for p in np.flatnonzero(tree.left != LEAF)
              for c in (tree.left[p], tree.right[p], tree.missing[p])}
    path, node = [], k
    while node in parent:
        path.append((parent[node], node))
        node = parent[node]
    rows = np.arange(len(X))
    for p, child in reversed(path):
        rows = rows[_child_of(tree, p, X[rows]) == child]
    return rows


def _same_partition(a, b, k: int, X) -> bool:
    """Whether nodes ``a[k]`` and ``b[k]`` split the rows ``X`` into the same groups."""
    ga, gb = _child_of(a, k, X), _child_of(b, k, X)  # (n,) child ids
    pairs = set(zip(ga.tolist(), gb.tolist()))
    return len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})


def _estimator_inputs(**params):
    def inputs(data, rng):
        train, test = train_test(data, rng)
        options = {k: (v(train.n_rows) if callable(v) else v) for k, v in params.items()}
        shown = ", ".join(f"{k}={v}" for k, v in options.items())
        return Inputs((train, test), options,
                      note=f"train {train.n_queries} queries, test {test.n_queries} queries; {shown}")
    return inputs


def _estimator_rows():
    t, small = ESTIMATOR_TREES, _model_leaf
    return [
        Twin("LambdaMART", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small,
                               query_subsample=0.8, feature_fraction=0.7, seed=1),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="test scores and trees, with query subsampling and feature fraction"),
        Twin("GBRT", "whole models", "gbrt", "GBRT", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small,
                               subsample=0.8, seed=2),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="stochastic GBRT: test scores and trees"),
        Twin("RandomForest", "whole models", "forest", "RandomForest", "models",
             _estimator_inputs(n_trees=t, max_leaves=16, min_samples_leaf=small, feature_fraction=0.3,
                               seed=3),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="bootstrap forest, k random features per node: test scores and trees"),
        Twin("IGBRT", "whole models", "forest", "IGBRT", "models",
             _estimator_inputs(n_trees=t // 2, max_leaves=8, min_samples_leaf=small, rf_n_trees=t // 2,
                               rf_max_leaves=16, rf_min_samples_leaf=small, rf_feature_fraction=0.3,
                               seed=4),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="GBRT boosted from a random forest: test scores and trees"),
        Twin("McRank", "whole models", "classification", "McRank", "models",
             _estimator_inputs(n_trees=t // 2, max_leaves=8, min_samples_leaf=small, seed=5),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="cumulative logistic classifiers, expected relevance: test scores and trees"),
    ]


# ---------------------------------------------------------------- the table

REGISTRY: tuple = tuple(_metric_rows() + _bin_rows() + _tree_rows() + _objective_rows() + _scoring_rows()
                        + _estimator_rows())
"""Every twinned component, in layer order (metrics first, whole models last)."""


def names() -> list:
    """The component names of :data:`REGISTRY`, in order."""
    return [row.name for row in REGISTRY]


def layers() -> list:
    """The layers of :data:`REGISTRY`, in order, each once."""
    return list(dict.fromkeys(row.layer for row in REGISTRY))


def get(name: str) -> Twin:
    """The registry row called ``name``; KeyError listing the names if there is none."""
    for row in REGISTRY:
        if row.name == name:
            return row
    raise KeyError(f"no twin component {name!r}; components are: {', '.join(names())}")

"""Registry rows of whole estimators (fitted on both twins, scored on held-out queries), and
``split_tie``, the diagnosis of a tree that differs at a tied split."""
from __future__ import annotations

import numpy as np

from twinrank.reference.io.model import LEAF
from twinrank.testing._inputs import _model_leaf, train_test
from twinrank.testing._twin import Inputs, Twin

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


def _costed_inputs(**params):
    """:func:`_estimator_inputs` with feature costs 1, 2, 4, ... in five groups (Mohan 2010, Ch. 6)."""
    plain = _estimator_inputs(**params)

    def inputs(data, rng):
        base = plain(data, rng)
        costs = 2.0 ** (np.arange(data.n_features) * 5 // max(1, data.n_features))  # (d,) 1 .. 16
        return Inputs(base.args, {**base.kwargs, "cost_lambda": 1.0, "feature_costs": costs},
                      note=base.note + "; feature costs 1..16, cost_lambda=1")
    return inputs


def _fit_on_valid_and_score(estimator_class, inputs: Inputs):
    """Fit with the test queries as the ``eval_set`` too (X-DART's pruning test reads it), then score them."""
    train, test = inputs.args
    estimator = estimator_class(**inputs.kwargs).fit(train, eval_set=[test])
    return estimator.predict(test), estimator.model_


def dart_parts(result) -> dict:
    """:func:`model_parts`, the tree weights, and each iteration's drop count, branch and size (exact)."""
    parts = model_parts(result)
    model = result[1]
    parts["tree_weights"] = model.tree_weights
    parts["history.dropped"] = np.asarray(model.history.get("dropped", []), dtype=np.int64)
    parts["history.pruned"] = np.asarray([b == "prune" for b in model.history.get("branch", [])], dtype=bool)
    parts["history.size"] = np.asarray(model.history.get("size", []), dtype=np.int64)
    return parts


def _dart_rows(t: int, small) -> list:
    return [
        Twin("DART", "whole models", "dart", "DART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.5, drop="fixed", drop_k=2, max_leaves=8,
                               min_samples_leaf=small, query_subsample=0.8, seed=8),
             outputs=dart_parts, call=_fit_and_score, diagnose=split_tie,
             summary="DART, two trees dropped per iteration: drop counts, weights, test scores and trees"),
        Twin("XDART", "whole models", "dart", "XDART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.5, max_leaves=8, min_samples_leaf=small,
                               snapshot_sizes=(t // 2,), seed=9),
             outputs=dart_parts, call=_fit_on_valid_and_score, diagnose=split_tie,
             summary="X-DART, adaptive drops and pruning on the test queries: branches, weights, scores, trees"),
        Twin("LambdaMART[A.L.R.]", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.5, learning_rate_schedule="adaptive",
                               schedule_rate=0.2, max_leaves=8, min_samples_leaf=small, seed=10),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="LambdaMART with DART's normalisation as a learning-rate schedule: test scores and trees"),
    ]


def _estimator_rows():
    t, small = ESTIMATOR_TREES, _model_leaf
    return [
        Twin("LambdaMART", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small,
                               query_subsample=0.8, feature_fraction=0.7, seed=1),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="test scores and trees, with query subsampling and feature fraction"),
        Twin("LambdaMART[quantized]", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small,
                               query_subsample=0.8, quantized_gradients=True, gradient_bits=3, seed=8),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="quantized training (3-bit stochastic rounding): test scores and trees"),
        Twin("LambdaMART[least squares]", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small,
                               split_gain="least_squares", seed=11),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="the papers' trees: least-squares splits on the lambdas, Newton leaves"),
        Twin("LambdaMART[OC]", "whole models", "lambdamart", "LambdaMART", "models",
             _estimator_inputs(n_trees=t, max_leaves=8, min_samples_leaf=small, step="oc", step_on="train",
                               seed=12),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="Wu et al.'s OC: least-squares trees weighted by the exact line search (no Newton)"),
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
        Twin("CumulativeRegression", "whole models", "classification", "CumulativeRegression", "models",
             _estimator_inputs(base="igbrt", n_trees=t // 2, max_leaves=8, min_samples_leaf=small,
                               rf_n_trees=t // 2, rf_max_leaves=16, rf_min_samples_leaf=small,
                               rf_feature_fraction=0.3, seed=13),
             outputs=model_parts, call=_fit_on_valid_and_score, diagnose=split_tie,
             summary="Mohan's IGBRT(C): IGBRT regressors of y > c, least-squares weights on train + the "
                     "test queries as validation: test scores and trees"),
        Twin("GBRT[feature costs]", "whole models", "gbrt", "GBRT", "models",
             _costed_inputs(n_trees=t, learning_rate=0.1, max_leaves=8, min_samples_leaf=small, seed=6),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="cost-aware GBRT, free after use tree by tree: test scores and trees"),
        Twin("RandomForest[feature costs]", "whole models", "forest", "RandomForest", "models",
             _costed_inputs(n_trees=t, max_leaves=16, min_samples_leaf=small, feature_fraction=0.3,
                            cost_batch_size=3, seed=7),
             outputs=model_parts, call=_fit_and_score, diagnose=split_tie,
             summary="cost-aware forest, free after use batch by batch: test scores and trees"),
    ] + _dart_rows(t, small)

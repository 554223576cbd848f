"""Registry rows of the kernels, layer by layer: metrics, bins, histograms, splits and trees, objectives, scoring,
the exact line search."""
from __future__ import annotations

import numpy as np

from twinrank.reference.io.model import TREE_FIELDS
from twinrank.testing._inputs import (
    STEP,
    _binned,
    _min_rows,
    _reference,
    _thresholds,
    _tree_params,
    exact_gradients,
    tied_scores,
)
from twinrank.testing._twin import Inputs, Twin

# ---------------------------------------------------------------- metrics

METRIC_NAMES = ("ndcg", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "dcg", "dcg@10", "meanndcg", "map",
                "map@10", "p@1", "p@5", "p@10", "err", "err@10", "rr", "rr@10", "auc", "pauc",
                "pauc@0.3", "rmse")
POOLED_METRIC_NAMES = ("global_auc", "global_pauc_raw", "global_pauc_raw@0.3", "global_pauc_raw@1")


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


def _pooled_metric_inputs(convention):
    def inputs(data, rng):
        return Inputs((list(POOLED_METRIC_NAMES), data.y, tied_scores(rng, data.n_rows), data.query_offsets),
                      dict(convention=convention, doc_ids=_doc_ids(data, rng)),
                      note=f"{len(POOLED_METRIC_NAMES)} metrics of all documents pooled, scores with ties")
    return inputs


def _metric_rows():
    rows = [Twin(f"metrics[{c}]", "metrics", "metrics", "evaluate", "exact", _metric_inputs(c),
                 summary=f"every metric per query under the {c!r} convention: "
                         + ", ".join(METRIC_NAMES))
            for c in ("lightgbm", "xgboost", "ranklib", "letor", "trec", "mslr", "mohan")]
    return rows + [Twin(f"pooled metrics[{c}]", "metrics", "metrics", "evaluate", "exact",
                        _pooled_metric_inputs(c),
                        summary=f"AUC and raw partial AUC of all documents ranked together, ties 1/2, "
                                f"under the {c!r} convention: " + ", ".join(POOLED_METRIC_NAMES))
                   for c in ("lightgbm", "ranklib", "mslr", "trec", "mohan")]


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


def _quantized_tree_inputs(max_leaves, bits):
    """Rounded (not exactly representable) gradients and hessians, stochastically quantized
    to ``bits`` bits: the twins must grow the same tree bit for bit, values included."""
    plain = _tree_inputs(max_leaves, lambda_l2=0.5)

    def inputs(data, rng):
        base = plain(data, rng)
        binned, _, _, thresholds, params = base.args
        g = rng.standard_normal(data.n_rows) / 3.0  # (n_rows,) arbitrary float64
        h = rng.random(data.n_rows) * 0.25
        quantized = _reference("tree").quantize_gradients(rng, g, h, bits, base.kwargs["rows"])
        return Inputs((binned, g, h, thresholds, params), {**base.kwargs, "quantized": quantized},
                      note=f"{max_leaves} leaves, float gradients quantized to {bits} bits, bootstrap rows, "
                           f"feature mask and costs")
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
        Twin("grow_tree[quantized]", "one tree", "tree", "grow_tree", "exact",
             _quantized_tree_inputs(31, 4), outputs=tree_parts,
             summary="a tree on 4-bit quantized gradients: integer histograms, leaves refit in float64"),
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


def _exit_inputs(data, rng):
    """:func:`_ensemble_inputs` scored per query, the bottom quarter exiting after every tree."""
    exits = _reference("exits").EarlyExit(every=1, fraction=0.25)
    ensemble, X = _ensemble_inputs(data, rng).args
    return Inputs((ensemble, X, data.query_offsets, exits),
                  note="4 reference trees (one in a prior model); every tree, a quarter of each query exits")


def _exit_parts(result) -> dict:
    return {"scores": result.scores, "exit_tree": result.exit_tree}


def _scoring_rows():
    return [
        Twin("apply_tree", "scoring", "predict", "apply_tree", "exact", _tree_and_rows,
             summary="the leaf each row reaches"),
        Twin("predict_ensemble", "scoring", "predict", "predict_ensemble", "exact", _ensemble_inputs,
             summary="ensemble scores: prior model + base score + weighted trees"),
        Twin("predict_exits", "scoring", "exits", "predict_exits", "exact", _exit_inputs,
             outputs=_exit_parts, summary="early exits: each document's exit tree and placed score"),
        Twin("predict_contributions", "scoring", "contributions", "predict_contributions", "exact", _ensemble_inputs,
             summary="per-feature contributions (path-dependent TreeSHAP) of the same ensemble, and its base value"),
    ]


# ---------------------------------------------------------------- combining

COMBINE_QUERIES = 40  # the reference sweeps crossing by crossing: a user's data is cut to its first queries


def _combine_inputs(form, alpha_range):
    def inputs(data, rng):
        n_queries = min(data.n_queries, COMBINE_QUERIES)
        rows = int(data.query_offsets[n_queries])
        return Inputs((tied_scores(rng, rows), tied_scores(rng, rows), data.y[:rows],
                       data.query_offsets[:n_queries + 1]),
                      dict(form=form, alpha_range=alpha_range, metric="ndcg@10", return_path=True),
                      note=f"two rankers' scores with ties, the first {n_queries} queries")
    return inputs


def _combination_parts(result) -> dict:
    return {"alpha": np.array([result.alpha]), "value": np.array([result.value]),
            **{name: getattr(result.path, name) for name in result.path._fields}}


def _combine_rows():
    return [Twin(f"optimal_combination[{form}]", "combining", "combine", "optimal_combination", "objectives",
                 _combine_inputs(form, alpha_range), outputs=_combination_parts,
                 summary=f"the exact best alpha of the {form} form for NDCG@10, and its path")
            for form, alpha_range in (("convex", (0.0, 1.0)), ("boosting", (0.1, 5.0)))]


# ---------------------------------------------------------------- a bag's combination rules

BAG_MEMBERS = 4


def _bag_inputs(rule):
    def inputs(data, rng):
        scores = np.stack([tied_scores(rng, data.n_rows) for _ in range(BAG_MEMBERS)])  # (B, n_rows)
        return Inputs((scores, data.query_offsets), dict(rule=rule),
                      note=f"{BAG_MEMBERS} members' scores with ties")
    return inputs


def _bag_rows():
    return [Twin(f"combine_scores[{rule}]", "combining", "bag_rules", "combine_scores", "exact", _bag_inputs(rule),
                 summary=f"a bag's members' scores combined per query by {rule}")
            for rule in ("minmax", "mean", "borda")]


# ---------------------------------------------------------------- bias and variance

DIAGNOSTIC_MODELS = 5


def _diagnostics_inputs(metric, include_no_relevant):
    def inputs(data, rng):
        P = np.stack([tied_scores(rng, data.n_rows) for _ in range(DIAGNOSTIC_MODELS)])  # (B, n_rows)
        return Inputs((P, data.y, data.query_offsets),
                      dict(metric=metric, include_no_relevant=include_no_relevant),
                      note=f"{DIAGNOSTIC_MODELS} models' scores with ties")
    return inputs


def _decomposition_parts(d) -> dict:
    names = ("bias2", "variance", "mse", "sre", "vre", "vre_signed", "error", "n_excluded")
    return {**{name: np.array([getattr(d, name)]) for name in names},
            **{name: getattr(d, name) for name in ("bias2_d", "variance_d", "sre_q", "vre_q", "vre_signed_q",
                                                   "error_q", "included")}}


def _diagnostics_rows():
    return [Twin(f"decompose[{metric}{', all queries' if include else ''}]", "diagnostics", "variance",
                 "decompose", "objectives", _diagnostics_inputs(metric, include), outputs=_decomposition_parts,
                 summary=f"pointwise bias^2/variance and listwise SRE/VRE by {metric} of a score matrix")
            for metric, include in (("ndcg", False), ("ndcg@10", True))]

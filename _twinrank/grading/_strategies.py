r"""The inputs each exercise is graded on: hypothesis strategies of the exercise's arguments.

Built from :mod:`twinrank.testing.strategies` (tiny queries, label grades now and then
all equal, scores with ties, data sets with NaN features and constant columns), so the
edge cases the agreement tests meet are met here too: one-document queries, ties,
all-equal labels, empty queries and bins, missing values. Each strategy draws a dict,
the keyword arguments of one call. Needs hypothesis (``pip install "twinrank[testing]"``).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from twinrank.testing.registry import STEP
from twinrank.testing.strategies import datasets, label_grades, query_offsets, score_vectors

CUTOFFS = st.none() | st.integers(1, 10)


@st.composite
def one_query(draw, *, max_docs: int = 8, min_docs: int = 1) -> dict:
    """``labels`` and ``scores`` of one query of ``min_docs..max_docs`` documents."""
    n = draw(st.integers(min_docs, max_docs))
    return {"labels": draw(label_grades(n)), "scores": draw(score_vectors(n))}


@st.composite
def dcg(draw) -> dict:
    query, gain = draw(one_query()), draw(st.sampled_from(["exp2", "linear", "letor"]))
    if gain == "letor":  # LETOR's gain table has grades 0-2 only (the reference refuses others)
        query["labels"] = np.minimum(query["labels"], 2.0)
    return {**query, "k": draw(CUTOFFS), "gain": gain, "discount": draw(st.sampled_from(["log2", "jarvelin"]))}


@st.composite
def query_and_cutoff(draw) -> dict:
    return {**draw(one_query()), "k": draw(CUTOFFS)}


@st.composite
def err(draw) -> dict:
    query = draw(one_query())
    top = float(query["labels"].max())
    return {**query, "k": draw(CUTOFFS), "max_label": draw(st.sampled_from(sorted({top, 4.0})))}


@st.composite
def lambdarank_lambdas(draw) -> dict:
    """One query whose scores do not all tie: the paper's pair loop over a ranking (a query whose
    scores all tie takes the expectation over every order instead, ``objectives._tied_ndcg``)."""
    query = draw(one_query())
    if len(query["scores"]) > 1 and np.all(query["scores"] == query["scores"][0]):
        query["scores"] = query["scores"].copy()
        query["scores"][0] += 1.0
    return {**query, "sigma": draw(st.sampled_from([1.0, 0.5, 2.0]))}


@st.composite
def bin_thresholds(draw) -> dict:
    """A column of few distinct values, each repeated its own number of times (so quantiles of the
    values differ from quantiles of the distinct values), in any order, NaN now and then."""
    pool = draw(st.lists(st.integers(-20, 20).map(lambda v: v / 4.0) | st.just(np.nan), min_size=1, max_size=10))
    repeats = draw(st.lists(st.integers(0, 5), min_size=len(pool), max_size=len(pool)))
    values = np.repeat(np.array(pool, dtype=np.float32), repeats)
    return {"column": values[draw(st.permutations(range(len(values))))], "max_bins": draw(st.integers(2, 5))}


def _binned(data, max_bins):
    from twinrank.reference.trees.binning import apply_bins, bin_thresholds as thresholds

    return apply_bins(data.X, thresholds(data.X, max_bins))


def _exact_gradients(draw, n):
    """Gradients in [-0.5, 0.5] and hessians in [0, 0.25], multiples of 2**-8 (exact sums in any order)."""
    g = draw(st.lists(st.integers(-128, 128), min_size=n, max_size=n))
    h = draw(st.lists(st.integers(0, 64), min_size=n, max_size=n))
    return np.array(g, dtype=np.float64) * STEP, np.array(h, dtype=np.float64) * STEP


@st.composite
def node_histogram(draw) -> dict:
    data = draw(datasets(max_features=3, max_queries=3, max_docs=6))
    g, h = _exact_gradients(draw, data.n_rows)
    rows = draw(st.lists(st.integers(0, data.n_rows - 1), max_size=2 * data.n_rows))  # repeats: a bootstrap
    return {"binned": _binned(data, draw(st.sampled_from([3, 255]))), "gradients": g, "hessians": h,
            "rows": np.sort(np.array(rows, dtype=np.int64))}


@st.composite
def best_split(draw) -> dict:
    """One feature's histogram at a node of 1-12 rows, some of them missing (bin 255)."""
    n_bins = draw(st.integers(1, 6))
    n = draw(st.integers(1, 12))
    bins = np.array(draw(st.lists(st.integers(0, n_bins - 1) | st.just(255), min_size=n, max_size=n)))
    g, h = _exact_gradients(draw, n)
    hist = np.zeros((256, 3))  # (256, 3)
    np.add.at(hist, bins, np.stack([g, h, np.ones(n)], axis=1))
    return {"hist": hist, "n_bins": n_bins, "lambda_l2": draw(st.sampled_from([0.0, 1.0])),
            "min_rows": draw(st.integers(1, 3))}


@st.composite
def newton_leaf_value(draw) -> dict:
    n = draw(st.integers(1, 10))
    g, h = _exact_gradients(draw, n)
    return {"gradients": g, "hessians": h, "lambda_l2": draw(st.sampled_from([0.0, 0.5, 1.0]))}


@st.composite
def subsample(draw) -> dict:
    fraction = draw(st.sampled_from([0.1, 0.25, 0.5, 0.67, 0.9, 1.0]) | st.floats(0.01, 1.0))
    return {"seed": draw(st.integers(0, 2**32 - 1)), "n": draw(st.integers(1, 40)), "fraction": fraction}


@st.composite
def bootstrap_rows(draw) -> dict:
    return {"seed": draw(st.integers(0, 2**32 - 1)), "n": draw(st.integers(1, 40))}


@st.composite
def predict_tree(draw) -> dict:
    """A tree the reference grower grows on tiny data (NaN features, three-way splits now and
    then), and rows to score: the data's own, or values equal to the thresholds (``x <= t``)."""
    from twinrank.reference.params import TreeParams
    from twinrank.reference.trees.binning import bin_thresholds as thresholds
    from twinrank.reference.trees.tree import grow_tree

    data = draw(datasets(max_features=3, max_queries=3, max_docs=6))
    g, h = _exact_gradients(draw, data.n_rows)
    params = TreeParams(max_leaves=draw(st.integers(2, 6)), min_samples_leaf=1, min_hessian_in_leaf=0.0,
                        missing_split=draw(st.sampled_from(["learn", "separate"])))
    edges = thresholds(data.X, 255)
    tree = grow_tree(_binned(data, 255), g, np.ones(data.n_rows) if draw(st.booleans()) else h, edges, params)
    X = data.X.copy()
    if draw(st.booleans()):  # values on the thresholds themselves
        finite = tree.threshold[(tree.left != -1) & np.isfinite(tree.threshold)]
        if len(finite):
            value = st.sampled_from(list(finite)) | st.just(np.nan)
            picks = draw(st.lists(value, min_size=X.size, max_size=X.size))
            X = np.array(picks, dtype=np.float32).reshape(X.shape)
    return {"feature": tree.feature, "threshold": tree.threshold, "left": tree.left, "right": tree.right,
            "missing": tree.missing, "value": tree.value, "X": X}


@st.composite
def paired_t_statistic(draw) -> dict:
    """Two systems' per-query values on a grid of 1/8 (exact differences; now and then all equal)."""
    n = draw(st.integers(2, 12))
    values = st.lists(st.integers(0, 8).map(lambda v: v / 8.0), min_size=n, max_size=n)
    a = np.array(draw(values))
    b = a - draw(st.sampled_from([0.0, 0.125, -0.25])) if draw(st.integers(0, 4)) == 0 else np.array(draw(values))
    return {"a": a, "b": b}


@st.composite
def minmax_per_query(draw) -> dict:
    offsets = draw(query_offsets(max_queries=4, max_docs=5))
    members = draw(st.integers(1, 3))
    n = int(offsets[-1])
    scores = np.stack([draw(score_vectors(n)) for _ in range(members)]) if n else np.zeros((members, 0))
    return {"scores": scores, "query_offsets": offsets}

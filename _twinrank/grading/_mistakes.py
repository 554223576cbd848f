r"""A plausible wrong solution of every exercise: the mistakes students make.

``tests/grading/test_exercises.py`` checks that the grader catches each of them (a grader that
passes these would pass anything). Teachers may show them after the fact: each
docstring names the mistake. Every function has its exercise's name and signature.
"""
import numpy as np


def dcg(labels, scores, k=None, gain="exp2", discount="log2"):
    """Off by one in the discount: 1/log2(2 + r) with 1-based ranks r (the 0-based formula on 1-based ranks)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    ranked = np.asarray(labels, dtype=np.float64)[order]
    gains = {"exp2": np.exp2(ranked) - 1.0, "linear": ranked,
             "letor": np.where(ranked == 1.0, 1.0, np.where(ranked == 2.0, 3.0, 0.0))}[gain]
    r = np.arange(1, len(ranked) + 1, dtype=np.float64)
    discounts = 1.0 / np.log2(2.0 + r) if discount == "log2" else 1.0 / np.log2(np.maximum(r, 2.0))
    return float(np.sum(np.where(r <= (len(r) if k is None else k), gains * discounts, 0.0)))


def average_precision(labels, scores, k=None):
    """Divides by the number of relevant documents in the top k instead of all of the query's."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    relevant = np.asarray(labels, dtype=np.float64)[order] > 0
    r = np.arange(1, len(relevant) + 1)
    top = r <= (len(r) if k is None else k)
    if not (relevant & top).any():
        return 0.0
    return float(np.sum((np.cumsum(relevant) / r)[relevant & top]) / (relevant & top).sum())


def err(labels, scores, k=None, max_label=4.0):
    """Forgets that the user stopped earlier: sums R_r / r without the product of (1 - R_m)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    stop = (np.exp2(np.asarray(labels, dtype=np.float64)[order]) - 1.0) / np.exp2(max_label)
    r = np.arange(1, len(stop) + 1)
    return float(np.sum(np.where(r <= (len(r) if k is None else k), stop / r, 0.0)))


def bin_thresholds(column, max_bins):
    """Takes the quantiles of the distinct values instead of all values (ignores how often each occurs)."""
    distinct = np.unique(column[~np.isnan(column)].astype(np.float64))
    if len(distinct) <= max_bins:
        return np.unique(0.5 * distinct[:-1] + 0.5 * distinct[1:])
    p = (len(distinct) - 1) * np.arange(1, max_bins, dtype=np.int64)
    lo, hi = p // max_bins, -(-p // max_bins)
    return np.unique(0.5 * distinct[lo] + 0.5 * distinct[hi])


def node_histogram(binned, gradients, hessians, rows):
    """Treats ``rows`` as a set: a row drawn twice by the bootstrap counts once."""
    rows = np.unique(rows)
    hist = np.zeros((binned.shape[1], 256, 3))
    for f in range(binned.shape[1]):
        hist[f, :, 0] = np.bincount(binned[rows, f], weights=gradients[rows], minlength=256)
        hist[f, :, 1] = np.bincount(binned[rows, f], weights=hessians[rows], minlength=256)
        hist[f, :, 2] = np.bincount(binned[rows, f], minlength=256)
    return hist


def best_split(hist, n_bins, lambda_l2, min_rows):
    """Missing-bin mix-up: the missing rows always go right; the split "all values left,
    missing right" and the missing-left candidates are never tried."""
    eps = 1e-10
    node = hist.sum(axis=0)

    def score(g, h):
        return g * g / (h + lambda_l2) if h + lambda_l2 > 0 else 0.0

    below = np.cumsum(hist[:n_bins], axis=0)
    candidates = []
    for b in range(n_bins - 1):
        left, right = below[b], node - below[b]
        if left[2] >= min_rows and right[2] >= min_rows:
            candidates.append((score(left[0], left[1]) + score(right[0], right[1]) - score(node[0], node[1]),
                               b, left))
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    scale = abs(best) + score(node[0], node[1])
    if not best > eps * scale:
        return None
    gain, b, left = next(c for c in candidates if c[0] >= best - eps * scale)
    return float(gain), int(b), bool(left[2] >= node[2] - left[2])


def newton_leaf_value(gradients, hessians, lambda_l2=0.0):
    """Forgets the L2 penalty in the denominator."""
    g, h = float(np.sum(gradients)), float(np.sum(hessians))
    return -g / h if h > 0 else 0.0


def subsample(seed, n, fraction):
    """Draws with ``rng.choice(n, m, replace=False)``: a fine sample, but not the documented draw,
    so the two twins (and a rerun of a paper's experiment) would train on other rows."""
    if fraction >= 1.0:
        return np.arange(n, dtype=np.int64)
    m = max(1, min(n, int(round(fraction * n))))
    return np.sort(np.random.default_rng(seed).choice(n, m, replace=False)).astype(np.int64)


def ndcg_swap_delta(labels, scores, k=None):
    """Ignores the cutoff: positions beyond k keep their discount."""
    labels = np.asarray(labels, dtype=np.float64)
    n = len(labels)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    discount = 1.0 / np.log2(2.0 + np.arange(n))
    gains = np.exp2(labels) - 1.0
    top = np.arange(n) < (n if k is None else k)
    ideal = np.sum((np.sort(gains)[::-1] * discount)[top])
    if ideal == 0.0:
        return np.zeros((n, n))
    d = discount[position]
    return np.abs(np.subtract.outer(gains, gains)) * np.abs(np.subtract.outer(d, d)) / ideal


def lambdarank_lambdas(labels, scores, sigma=1.0):
    """RankNet's lambdas: the pair terms without the factor |Delta NDCG| (metric-blind)."""
    labels = np.asarray(labels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    n = len(labels)
    if n < 2 or not (labels > 0).any():
        return np.zeros(n), np.zeros(n)
    better = np.subtract.outer(labels, labels) > 0
    rho = 1.0 / (1.0 + np.exp(sigma * np.subtract.outer(scores, scores)))
    pair = np.where(better, sigma * rho, 0.0)
    curvature = np.where(better, sigma * sigma * rho * (1.0 - rho), 0.0)
    return pair.sum(axis=1) - pair.sum(axis=0), curvature.sum(axis=1) + curvature.sum(axis=0)


def predict_tree(feature, threshold, left, right, missing, value, X):
    """Sends a missing value left (NaN <= t is False, so in fact: right) instead of to ``missing[k]``."""
    node = np.zeros(len(X), dtype=np.int64)
    active = np.flatnonzero(left[node] != -1)
    while len(active):
        k = node[active]
        x = X[active, feature[k]]
        node[active] = np.where(x <= threshold[k], left[k], right[k])
        active = active[left[node[active]] != -1]
    return value[node].astype(np.float64)


def bootstrap_rows(seed, n):
    """Samples without replacement (a permutation): every row once, no bootstrap at all."""
    return np.sort(np.random.default_rng(seed).permutation(n)).astype(np.int64)


def paired_t_statistic(a, b):
    """The population standard deviation (n in the denominator) instead of the sample's (n - 1)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    se = d.std() / np.sqrt(len(d))
    return (float(d.mean() / se) if se > 0 else float("nan")), len(d) - 1


def minmax_per_query(scores, query_offsets):
    """A member constant on a query gets 0 there instead of 1/2 (the middle of the range)."""
    out = np.zeros_like(scores, dtype=np.float64)
    for start, stop in zip(query_offsets[:-1], query_offsets[1:]):
        if stop == start:
            continue
        block = scores[:, start:stop]
        low = block.min(axis=1, keepdims=True)
        span = block.max(axis=1, keepdims=True) - low
        out[:, start:stop] = (block - low) / np.where(span > 0, span, 1.0)
    return out

"""The argument checks of the objectives, shared by both twins: both reject the same input alike."""
from __future__ import annotations

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import check_exp2_labels
from twinrank.reference.params import check_int, check_sigma

LAMBDA_METRICS = ("ndcg", "map", "err")
GAINS = ("exp2", "linear")


def _check_pointwise(y, scores):
    y = np.ascontiguousarray(y, dtype=np.float64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if y.ndim != 1 or scores.shape != y.shape:
        raise ParameterError(f"y and scores must be 1-D of one length, got shapes {y.shape}, {scores.shape}")
    for name, values in (("y", y), ("scores", scores)):
        bad = np.flatnonzero(~np.isfinite(values))  # (n_bad,)
        if len(bad):
            raise ParameterError(f"{name}[{bad[0]}] is not finite")
    return y, scores


def _check_logistic(y, scores):
    y, scores = _check_pointwise(y, scores)
    bad = np.flatnonzero((y < 0) | (y > 1))  # (n_bad,)
    if len(bad):
        raise ParameterError(f"logistic labels must be in [0, 1], got y[{bad[0]}] = {y[bad[0]]}")
    return y, scores


def _check_lambdarank(y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries):
    """Validate the arguments of ``lambdarank``; shared by both twins, so both reject the same input."""
    y, scores = _check_pointwise(y, scores)
    bad = np.flatnonzero(y < 0)  # (n_bad,)
    if len(bad):
        raise ParameterError(f"lambdarank labels must be >= 0, got y[{bad[0]}] = {y[bad[0]]}")
    if metric not in LAMBDA_METRICS:
        raise ParameterError(f"metric must be one of {LAMBDA_METRICS}, got {metric!r}")
    if gain not in GAINS:
        raise ParameterError(f"gain must be one of {GAINS}, got {gain!r}")
    if gain != "exp2" and metric != "ndcg":
        raise ParameterError(f"gain applies to metric='ndcg' only, got gain={gain!r} with metric={metric!r}")
    if gain == "exp2" and metric != "map":
        check_exp2_labels(y)
    if k is not None:
        check_int("k", k, low=1)
        if metric == "map":
            raise ParameterError("metric='map' has no cutoff; k must be None")
    if truncation is not None:
        check_int("truncation", truncation, low=1)
    check_sigma(sigma)
    if not isinstance(normalize, (bool, np.bool_)):
        raise ParameterError(f"normalize must be True or False, got {normalize!r}")
    query_offsets = _check_offsets(query_offsets, len(y))
    return y, scores, query_offsets, _check_queries(queries, len(query_offsets) - 1)


def _check_offsets(query_offsets, n_rows):
    offsets = np.asarray(query_offsets)
    if offsets.ndim != 1 or len(offsets) < 1 or not np.issubdtype(offsets.dtype, np.integer):
        raise ParameterError(
            f"query_offsets must be a 1-D integer array, got {offsets.dtype} of shape {offsets.shape}")
    if offsets[0] != 0 or offsets[-1] != n_rows or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"query_offsets must start at 0, end at n_rows={n_rows} and never decrease")
    return np.ascontiguousarray(offsets, dtype=np.int64)


def _check_queries(queries, n_queries):
    if queries is None:
        return np.arange(n_queries, dtype=np.int64)
    queries = np.asarray(queries)
    if queries.ndim != 1 or (queries.size and not np.issubdtype(queries.dtype, np.integer)):
        raise ParameterError(
            f"queries must be a 1-D integer array, got {queries.dtype} of shape {queries.shape}")
    queries = np.ascontiguousarray(queries, dtype=np.int64)
    bad = np.flatnonzero((queries < 0) | (queries >= n_queries))  # (n_bad,)
    if len(bad):
        raise ParameterError(f"queries must be indices in [0, {n_queries}), got {queries[bad[0]]}")
    if len(np.unique(queries)) != len(queries):
        raise ParameterError("queries must not repeat a query index")
    return queries

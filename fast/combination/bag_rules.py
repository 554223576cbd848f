"""Numba twin of `twinrank.reference.combination.bag_rules`: the same combination rules, bit for bit."""
from __future__ import annotations

import numpy as np

from twinrank.fast.combination import _bag_kernels as kernels
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.combination.bag_rules import RULES, check_rule
from twinrank.reference.errors import ParameterError

__all__ = ["RULES", "check_rule", "combine_scores", "minmax_per_query", "borda_points"]


def combine_scores(scores, query_offsets, rule: str = "minmax") -> np.ndarray:
    """The bag's score of every document: ``rule`` applied to the (B, n) member scores."""
    check_rule(rule)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] < 1:
        raise ParameterError(f"scores must be a (members, documents) matrix, got shape {scores.shape}")
    if rule != "mean":
        per_query = minmax_per_query if rule == "minmax" else borda_points
        scores = per_query(scores, query_offsets)
    out = np.zeros(scores.shape[1])
    kernels.member_mean(scores, out)
    return out


def minmax_per_query(scores, query_offsets) -> np.ndarray:
    """Each member's scores mapped to [0, 1] within each query; 1/2 where they are constant."""
    return _per_query(kernels.minmax_queries, scores, query_offsets)


def borda_points(scores, query_offsets) -> np.ndarray:
    """Each member's Borda points within each query: documents beaten, plus half the others tied."""
    return _per_query(kernels.borda_queries, scores, query_offsets)


def _per_query(kernel, scores, query_offsets) -> np.ndarray:
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    out = np.empty_like(scores)
    over_chunks(kernel, len(offsets) - 1, scores, offsets, out)
    return out

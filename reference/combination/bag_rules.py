r"""How a bag combines its members' scores, per query: min-max then mean, plain mean, Borda count.

BL-MART (Ganjisaffar, Caruana & Lopes, SIGIR 2011, Sec. 3.5) averages $B$ sub-models.
Their raw scores live on different scales (each saw another sample of queries), so
the paper normalises each member's scores **per query** to $[0, 1]$ before the mean:

$$\tilde s_{mi} = \frac{s_{mi} - \min_{j \in q} s_{mj}}{\max_{j \in q} s_{mj} - \min_{j \in q} s_{mj}},
\qquad S_i = \frac{1}{B} \sum_{m=1}^{B} \tilde s_{mi}.$$

A member that scores every document of a query alike (a constant, or a query of one
document) ranks nothing there: its normalised scores are all $\tfrac12$, the middle of
the range, so it moves no document against another. The paper's alternatives, both
kept for comparison: the plain mean $S_i = \frac1B \sum_m s_{mi}$ (rejected: the scales
differ), and the Borda count, where member $m$ gives document $i$ of query $q$ one
point per document it beats and half a point per other document it ties,

$$b_{mi} = \#\{j \in q : s_{mj} < s_{mi}\} + \tfrac12\, \#\{j \in q,\ j \ne i : s_{mj} = s_{mi}\},$$

averaged over members (rejected: with few members, ties make it worse than one model).

Every function takes a members x documents score matrix ``scores`` (float64, shape
(B, n)) and the query offsets, and returns the combined score of each document
(float64, shape (n,)). The mean over members is summed in member order, so both twins
give the same bits.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.io._bag_model import RULES


def check_rule(rule) -> None:
    """Raise ParameterError unless ``rule`` is one of ``RULES``."""
    if rule not in RULES:
        raise ParameterError(f"combine must be one of {', '.join(RULES)}; got {rule!r}")


def combine_scores(scores, query_offsets, rule: str = "minmax") -> np.ndarray:
    """The bag's score of every document: ``rule`` applied to the (B, n) member scores."""
    check_rule(rule)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] < 1:
        raise ParameterError(f"scores must be a (members, documents) matrix, got shape {scores.shape}")
    if rule == "mean":
        return _member_mean(scores)
    per_query = minmax_per_query if rule == "minmax" else borda_points
    return _member_mean(per_query(scores, np.asarray(query_offsets, dtype=np.int64)))


# --8<-- [start:minmax_per_query]
def minmax_per_query(scores, query_offsets):
    r"""BL-MART's per-query normalisation of a bag's member scores (Ganjisaffar, Caruana & Lopes 2011, Sec. 3.5).

    Each member $m$'s scores are mapped to $[0, 1]$ inside each query $q$:

    $$\tilde s_{mi} = \frac{s_{mi} - \min_{j \in q} s_{mj}}{\max_{j \in q} s_{mj} - \min_{j \in q} s_{mj}},$$

    and to $\tfrac12$ where the member scores every document of the query alike (a
    constant, or a one-document query): such a member ranks nothing there.

    Parameters
    ----------
    scores : float64 array (B, n), one row per member
    query_offsets : int64 array (n_queries + 1,), query q owns columns
        ``query_offsets[q]:query_offsets[q + 1]`` (empty queries allowed)

    Returns
    -------
    float64 array (B, n)
    """
    out = np.empty_like(scores, dtype=np.float64)
    for start, stop in zip(query_offsets[:-1], query_offsets[1:]):
        if stop == start:  # an empty query
            continue
        block = scores[:, start:stop]  # (B, n_q)
        low = block.min(axis=1, keepdims=True)
        span = block.max(axis=1, keepdims=True) - low
        out[:, start:stop] = np.where(span > 0, (block - low) / np.where(span > 0, span, 1.0), 0.5)
    return out
# --8<-- [end:minmax_per_query]


def borda_points(scores: np.ndarray, query_offsets: np.ndarray) -> np.ndarray:
    """Each member's Borda points within each query: documents beaten, plus half the others tied."""
    out = np.empty_like(scores)
    for start, stop in zip(query_offsets[:-1], query_offsets[1:]):
        for m, row in enumerate(scores[:, start:stop]):
            ordered = np.sort(row)
            below = np.searchsorted(ordered, row, side="left")  # documents scored lower
            tied = np.searchsorted(ordered, row, side="right") - below - 1  # others scored the same
            out[m, start:stop] = below + 0.5 * tied
    return out


def _member_mean(scores: np.ndarray) -> np.ndarray:
    total = np.zeros(scores.shape[1])
    for row in scores:  # in member order: the fast twin sums in the same order
        total = total + row
    return total / scores.shape[0]

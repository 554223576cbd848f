"""Rows in ranked order, query by query, and the per-query sums every metric is made of.

One stable ``np.lexsort`` by (query, -score) over all rows gives the ranking; the
position of each row inside its query is its row number minus the query's start;
per-query sums are ``np.bincount(query, weights=...)``, which adds in rank order.
Running sums and products inside queries (MeanNDCG, ERR) use a padded
``(n_queries, largest query)`` matrix, so they add in rank order exactly like a loop
would. ``twinrank.fast.evaluation._ranking`` is the same idea as a per-query merge sort.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from twinrank.reference.evaluation.conventions import Prepared


class Ranked(NamedTuple):
    """Rows in ranked order: query by query, best first."""

    order: np.ndarray  # (n_rows,) row index at each ranked slot
    query: np.ndarray  # (n_rows,) query of each slot (ranked order keeps queries in place)
    position: np.ndarray  # (n_rows,) 0-based position of each slot inside its query
    sizes: np.ndarray  # (n_queries,)


def rank(p: Prepared) -> Ranked:
    """One stable lexsort over all rows: by query, then descending score, then the tie rule."""
    sizes = np.diff(p.query_offsets)  # (n_queries,)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    if p.tie_keys is None:
        order = np.lexsort((-p.scores, query))
    else:
        order = np.lexsort((-p.tie_keys, -p.scores, query))
    position = np.arange(len(query)) - np.repeat(p.query_offsets[:-1], sizes)  # (n_rows,)
    return Ranked(order, query, position, sizes)


def per_query_sum(values: np.ndarray, r: Ranked) -> np.ndarray:
    """Sum of ``values`` (ranked order) inside each query, added in rank order."""
    return np.bincount(r.query, weights=values, minlength=len(r.sizes))


def padded(values: np.ndarray, r: Ranked, fill: float) -> np.ndarray:
    """``values`` (ranked order) as a ``(n_queries, largest query)`` matrix, ``fill`` after each query's end."""
    out = np.full((len(r.sizes), int(r.sizes.max(initial=0))), fill)  # (n_queries, max_size)
    out[r.query, r.position] = values
    return out


def cutoff(k, r: Ranked) -> np.ndarray:
    """Mask of the ranked slots inside the top ``k`` (all slots when k is None)."""
    return np.ones(len(r.query), bool) if k is None else r.position < k


def ideal_gains(gains: np.ndarray, r: Ranked) -> np.ndarray:
    """Gains (input order) sorted descending inside each query: the ideal ranking's gains."""
    return gains[np.lexsort((-gains, r.query))]


def hits_so_far(rel: np.ndarray, r: Ranked) -> np.ndarray:
    """Relevant documents at or above each ranked slot, inside its query (exact integers)."""
    total = np.cumsum(rel)  # (n_rows,)
    before_query = np.r_[0, total][np.repeat(np.cumsum(r.sizes) - r.sizes, r.sizes)]  # (n_rows,)
    return total - before_query


def tie_group_discounts(discounts: np.ndarray, scores: np.ndarray, r: Ranked) -> np.ndarray:
    r"""Each ranked slot's discount averaged over the slots of its tie group (``ties="expected"``).

    A tie group is a run of equal scores inside a query (``scores`` in input order,
    ``discounts`` (n_rows,) by ranked slot, 0 past a cutoff). Under a uniformly random
    order of tied documents each member of a group spanning positions $a..b$ lands on
    each of them with probability $1/(b - a + 1)$, so its expected discount is
    $\frac{1}{b-a+1}\sum_{r=a}^{b} d(r)$, and the expected DCG is
    $\sum_i g(l_i)\, \bar d_{\mathrm{group}(i)}$.
    """
    ranked_scores = scores[r.order]  # (n_rows,)
    new_group = r.position == 0  # (n_rows,) a group starts at each query's top ...
    new_group[1:] |= ranked_scores[1:] != ranked_scores[:-1]  # ... and where the score changes
    group = np.cumsum(new_group) - 1  # (n_rows,) tie group of each slot
    mean = np.bincount(group, weights=discounts) / np.maximum(np.bincount(group), 1)  # (n_groups,)
    return mean[group]

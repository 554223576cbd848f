r"""The exact optimal linear combination of two rankers (Wu, Burges, Svore & Gao 2010, Sec. 4-5.6).

Two rankers score each document $a_i$ and $b_i$; the combined score $s_i(\alpha)$ is
a line in $\alpha$ (:mod:`twinrank.reference.combination._combine_setup` has the two forms). A
query's ranking, hence its DCG or NDCG, changes only where two of its lines cross,
so the mean metric over queries is piecewise constant in $\alpha$, and its maximum
over a range is found exactly by a sweep:

1. every pairwise crossing $\alpha_{ij}$ of every query inside the open range
   $(lo, hi)$ (all pairs, equal labels too: $O(n^2)$ per query), pooled and sorted;
2. each query ranked once, at the midpoint of its first interval;
3. at each crossing $\alpha$ of a query, the documents that cross there are
   re-ranked among the ranks they hold, by their scores at the midpoint of the
   query's next interval. One crossing is the swap of two neighbours and changes the
   DCG by $(g_i - g_j)(d(r_j) - d(r_i))$; several lines through one point (a group)
   are re-ranked together, exactly, whatever order the crossings were found in
   (crossings that rounding spread over a few ulps count as one point:
   ``ALPHA_TOLERANCE`` of ``_combine_setup``);
4. the mean metric on each interval is its value on the first plus the changes so far.

Ties: under ``ties="expected"`` (the default) tied documents count with the expected
metric under a uniformly random order of the tie (:func:`twinrank.reference.evaluation.metrics.ndcg`
with ``ties="expected"``). Inside an interval only documents with equal lines tie;
at a breakpoint the documents crossing there tie too, which is why the path reports
the value at each breakpoint apart from the values of the intervals.
``ties="stable"`` ranks tied documents by input order. Only the intervals compete
for the best value: see ``best_interval`` in ``_combine_setup``.

Cost: $O(\sum_q n_q^2 \log)$ time and memory for the crossings; this module is the
readable specification, ``twinrank.fast.combination.combine`` the one for MSLR-sized data.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.combination._combine_setup import (
    FORMS,
    Combination,
    CombinationPath,
    Lines,
    best_interval,
    close_alphas,
    cluster_breakpoints,
    combined_scores,
    prepare_lines,
)
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION

__all__ = ["optimal_combination", "combined_scores", "Combination", "CombinationPath", "FORMS"]


def optimal_combination(scores_a, scores_b, y, query_offsets, *, form="convex", alpha_range=(0.0, 1.0),
                        metric="ndcg@10", convention=DEFAULT_CONVENTION, ties="expected",
                        return_path=False) -> Combination:
    r"""The $\alpha$ of ``alpha_range`` that maximises the mean ``metric`` of the combined scores.

    Parameters
    ----------
    scores_a, scores_b : (n_rows,) scores of the two rankers, finite.
    y, query_offsets : labels and query boundaries, as for every metric.
    form : ``"convex"``, $(1-\alpha) a + \alpha b$, or ``"boosting"``, $a + \alpha b$.
    alpha_range : ``(lo, hi)``, finite, ``lo < hi``; crossings at the ends are not breakpoints.
    metric : ``"ndcg@k"``, ``"ndcg"``, ``"dcg@k"`` or ``"dcg"``.
    convention : gain, discount and edge rules (its tie rule is replaced by ``ties``).
    ties : ``"expected"`` or ``"stable"`` (see the module docstring).
    return_path : also return the piecewise-constant path.

    Returns
    -------
    Combination
        ``alpha``: the midpoint of the best interval (scanning left to right, a later
        interval wins only by more than a relative ``1e-12``); ``value``: the mean metric there; ``path``: a
        :class:`CombinationPath` when asked for.
    """
    lines = prepare_lines(scores_a, scores_b, y, query_offsets, form=form, alpha_range=alpha_range,
                          metric=metric, convention=convention, ties=ties)
    alphas, last, queries, rows_i, rows_j = snapped_crossings(lines)
    first, nxt = own_next_crossings(alphas, queries, lines)
    order = initial_order(lines, first)
    start = lines.constant + float(np.sum(query_dcg(lines, order) * lines.scale))
    at, delta, point_delta = sweep_crossings(lines, order, alphas, queries, rows_i, rows_j, 0.5 * (last + nxt))
    path = path_from_events(start, at, delta, point_delta)
    alpha, value = best_interval(path.breakpoints, path.values, lines.lo, lines.hi)
    return Combination(alpha, value, path if return_path else None)


def all_crossings(lines: Lines):
    """Every crossing inside ``(lo, hi)`` of two documents of one active query, sorted by (alpha, query).

    Returns ``alphas`` (m,), ``queries`` (m,), ``rows_i``, ``rows_j`` (m,) global row ids.
    """
    found = []
    for q in np.flatnonzero(lines.active):
        lo_row, n = lines.query_offsets[q], lines.query_offsets[q + 1] - lines.query_offsets[q]
        i, j = np.triu_indices(n, 1)  # (n (n-1) / 2,) every pair once
        i, j = i + lo_row, j + lo_row
        delta_a, delta_b = lines.a[i] - lines.a[j], lines.b[i] - lines.b[j]
        denominator = delta_b if lines.boosting else delta_a - delta_b
        safe = np.where(denominator == 0.0, 1.0, denominator)
        alpha = np.where(denominator == 0.0, np.nan, (-delta_a if lines.boosting else delta_a) / safe)
        inside = (alpha > lines.lo) & (alpha < lines.hi)  # NaN (parallel lines) is never inside
        found.append((alpha[inside], np.full(inside.sum(), q), i[inside], j[inside]))
    if not found:
        return np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    alphas, queries, rows_i, rows_j = (np.concatenate(parts) for parts in zip(*found))
    by = np.lexsort((queries, alphas))  # stable: pairs of one (alpha, query) keep their order
    return alphas[by], queries[by], rows_i[by], rows_j[by]


def snapped_crossings(lines: Lines):
    """:func:`all_crossings` with each query's close crossings made one group (``ALPHA_TOLERANCE``).

    Returns ``alphas`` (m,), each the first alpha of its group, ``last`` (m,) the group's
    last alpha, then queries and rows, sorted by (alpha, query).
    """
    alphas, queries, rows_i, rows_j = all_crossings(lines)
    by = np.lexsort((alphas, queries))  # (m,) query by query, increasing alpha
    a, q = alphas[by], queries[by]
    new = np.ones(len(a), bool)
    new[1:] = (q[1:] != q[:-1]) | ~close_alphas(a[:-1], a[1:])
    group = np.cumsum(new) - 1  # (m,)
    ends = np.r_[new[1:], True][:len(a)]
    first, last = np.empty(len(a)), np.empty(len(a))
    first[by], last[by] = a[new][group], a[ends][group]
    again = np.lexsort((queries, first))  # stable: by (group alpha, query)
    return first[again], last[again], queries[again], rows_i[again], rows_j[again]


def own_next_crossings(alphas, queries, lines: Lines):
    """Each query's first crossing (``hi`` if none) and, per crossing, the query's next larger one (or ``hi``)."""
    n_queries = len(lines.query_offsets) - 1
    first = np.full(n_queries, lines.hi)
    np.minimum.at(first, queries, alphas)
    by_query = np.lexsort((alphas, queries))  # (m,) crossings query by query, increasing alpha
    a_sorted, q_sorted = alphas[by_query], queries[by_query]
    following = np.full(len(alphas), lines.hi)  # (m,) next strictly larger alpha of the same query
    for t in range(len(alphas) - 2, -1, -1):  # a readable backward scan
        same = q_sorted[t + 1] == q_sorted[t]
        following[t] = (a_sorted[t + 1] if a_sorted[t + 1] > a_sorted[t] else following[t + 1]) if same \
            else lines.hi
    nxt = np.empty(len(alphas))
    nxt[by_query] = following
    return first, nxt


def initial_order(lines: Lines, first: np.ndarray) -> np.ndarray:
    """Row ids ranked inside each query at the midpoint of its first interval ``(lo, first)``."""
    sizes = np.diff(lines.query_offsets)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    mid = 0.5 * (lines.lo + first)[query]  # (n_rows,)
    s = (1.0 - mid) * lines.a + mid * lines.b if not lines.boosting else lines.a + mid * lines.b
    return np.lexsort((-s, query))  # stable: ties by input order


def query_dcg(lines: Lines, order: np.ndarray) -> np.ndarray:
    """DCG of each query (gains of ``lines``, discounts cut at k) of a ranked ``order``."""
    sizes = np.diff(lines.query_offsets)
    query = np.repeat(np.arange(len(sizes)), sizes)
    position = np.arange(len(order)) - lines.query_offsets[query]  # (n_rows,)
    return np.bincount(query, weights=lines.gains[order] * lines.discounts[position], minlength=len(sizes))


def sweep_crossings(lines: Lines, order, alphas, queries, rows_i, rows_j, mids):
    """Walk the crossings in order; re-rank each (alpha, query) group; return its effect on the mean metric.

    ``mids`` (m,): where each group is re-ranked, the midpoint between the group's last
    crossing and the query's next group. ``order`` (n_rows,) is updated in place. Returns, for each group that changes the
    metric (on the interval after it or at its point), its ``alpha``, the change
    ``delta`` of the mean metric and the change ``point_delta`` from the interval
    before to the point itself.
    """
    position_of = np.empty(len(order), np.int64)
    position_of[order] = np.arange(len(order))
    starts = np.flatnonzero(np.r_[len(alphas) > 0, (np.diff(alphas) != 0) | (np.diff(queries) != 0)])
    events = []
    for s, e in zip(starts, np.r_[starts[1:], len(alphas)]):
        q = queries[s]
        rows = np.unique(np.r_[rows_i[s:e], rows_j[s:e]])
        slots = np.sort(position_of[rows])  # (m,) ranked slots the group holds
        old = order[slots]
        new = rerank(lines, old, mids[s])
        disc = lines.discounts[slots - lines.query_offsets[q]]  # (m,)
        change = (lines.gains[new] - lines.gains[old]) * disc  # (m,)
        at_point = (point_gains(lines, old, new) - lines.gains[old]) * disc  # (m,)
        if np.any(change != 0.0) or np.any(at_point != 0.0):
            events.append((alphas[s], np.sum(change) * lines.scale[q], np.sum(at_point) * lines.scale[q]))
        order[slots] = new
        position_of[new] = slots
    if not events:
        return np.empty(0), np.empty(0), np.empty(0)
    return tuple(np.array(column) for column in zip(*events))


def rerank(lines: Lines, rows: np.ndarray, alpha: float) -> np.ndarray:
    """``rows`` by descending score at ``alpha``, ties by row id (input order)."""
    rows = np.sort(rows)
    s = combined_scores(lines.a[rows], lines.b[rows], alpha, "boosting" if lines.boosting else "convex")
    return rows[np.argsort(-s, kind="stable")]


def point_gains(lines: Lines, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The gain each slot of the group counts with at the crossing point itself.

    The documents tied at the point form blocks of consecutive slots, each mapped onto
    itself by the re-ranking: a block ends at slot $t$ when the largest old slot of
    the documents in new slots $0..t$ is $t$. ``expected``: every slot of a block
    counts the block's mean gain; ``stable``: the block's rows in input order.
    """
    source = np.argsort(old)[np.searchsorted(np.sort(old), new)]  # (m,) old slot of each new slot's row
    ends = np.maximum.accumulate(source) == np.arange(len(old))  # (m,)
    block = np.r_[0, np.cumsum(ends)[:-1]]  # (m,) block of each slot
    if lines.expected:
        g = lines.gains[old]
        return (np.bincount(block, weights=g) / np.bincount(block))[block]
    return lines.gains[old[np.lexsort((old, block))]]


def path_from_events(start: float, at, delta, point_delta) -> CombinationPath:
    """The path: breakpoints (distinct event alphas), interval values, values at the breakpoints."""
    breakpoints, group = cluster_breakpoints(at)
    step = np.bincount(group, weights=delta, minlength=len(breakpoints))  # (m,)
    values = start + np.r_[0.0, np.cumsum(step)]  # (m + 1,)
    at_breakpoints = values[:-1] + np.bincount(group, weights=point_delta, minlength=len(breakpoints))
    return CombinationPath(breakpoints, values, at_breakpoints)

r"""What both twins' exact line search over $\alpha$ share: checked inputs, the lines, the result.

Two rankers give document $i$ the scores $a_i$ and $b_i$; the combined score is a
line in $\alpha$:

* ``form="convex"``:   $s_i(\alpha) = (1 - \alpha)\, a_i + \alpha\, b_i$
* ``form="boosting"``: $s_i(\alpha) = a_i + \alpha\, b_i$

Two lines cross at $\alpha_{ij} = \Delta a / (\Delta a - \Delta b)$ (convex) or
$-\Delta a / \Delta b$ (boosting), with $\Delta a = a_i - a_j$, $\Delta b = b_i - b_j$:
the only places where the ranking of a query, hence its DCG or NDCG, can change
(Wu, Burges, Svore & Gao 2010, Sec. 4). Both twins compute crossings with
:func:`crossing` and scores with :func:`combined_scores`, so they see the same
breakpoints bit for bit.

Under ``ties="expected"`` documents of one query with equal $(a_i, b_i)$ are tied
for every $\alpha$; each of them then counts with the mean gain of its group, which
is the expected DCG under a random order of the group (the sum of gains times the
mean discount of the group's ranks). Queries whose metric cannot change (no
document of positive gain for NDCG, fewer than $k$ documents under
``ndcg_k_beyond_n="zero"``, fewer than two documents) are left out of the sweep and
add a constant.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import (
    DEFAULT_CONVENTION,
    Convention,
    discount,
    gain,
    get_convention,
)
from twinrank.reference.evaluation.metric_names import parse_metric

FORMS = ("convex", "boosting")
COMBINE_TIES = ("expected", "stable")
CROSSING_TOLERANCE = 1e-12
"""Relative tolerance of "best" (:func:`scan_best`): values that differ by less are equal, so that
intervals of mathematically equal value are ranked the same way by both twins."""


ALPHA_TOLERANCE = 1e-9
"""Crossings closer than this (relative to ``max(1, |alpha|)``) are one point. Lines through one
point meet at alphas that rounding spreads over a few ulps; taken apart, they would make
intervals of width ~1e-16 whose rankings are artefacts of rounding. So each query's crossings,
in increasing order, form one group while each is within this of the previous one, and the
path's breakpoints are merged the same way (the fast twin: inside each of its windows)."""


def close_alphas(previous, alpha):
    """Whether ``alpha`` (>= ``previous``) is the same point as ``previous`` (:data:`ALPHA_TOLERANCE`)."""
    return alpha - previous <= ALPHA_TOLERANCE * np.maximum(1.0, np.abs(previous))


def cluster_breakpoints(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted event alphas -> (breakpoints, index of each event's breakpoint): runs of close alphas merge."""
    new = np.ones(len(at), bool)
    new[1:] = ~close_alphas(at[:-1], at[1:])
    return at[new], np.cumsum(new) - 1


class CombinationPath(NamedTuple):
    """The metric as a piecewise-constant function of $\\alpha$ over the range ``(lo, hi)``."""

    breakpoints: np.ndarray  # (m,) increasing alphas where the metric changes
    values: np.ndarray  # (m + 1,) the metric on each open interval: (lo, x_1), (x_1, x_2), ..., (x_m, hi)
    values_at_breakpoints: np.ndarray  # (m,) the metric at each x_t itself, its tied documents counted by `ties`


class Combination(NamedTuple):
    """The best $\\alpha$ (the midpoint of the best interval), the metric there, optionally the whole path."""

    alpha: float
    value: float
    path: CombinationPath | None = None


class Lines(NamedTuple):
    """Checked inputs of a line search, shared by both twins.

    ``gains`` are per row (group means under ``ties="expected"``); ``discounts`` are by
    0-based rank, 0 past the cutoff; ``scale`` turns a query's DCG change into a change
    of the mean metric (0 for a query that cannot change); ``constant`` is the mean
    metric's part from those queries.
    """

    a: np.ndarray  # (n_rows,) float64
    b: np.ndarray  # (n_rows,) float64
    gains: np.ndarray  # (n_rows,) float64
    query_offsets: np.ndarray  # (n_queries + 1,) int64
    active: np.ndarray  # (n_queries,) bool: the query's metric can change
    scale: np.ndarray  # (n_queries,) float64: d(mean metric) / d(query DCG)
    constant: float
    discounts: np.ndarray  # (largest query,) float64
    lo: float
    hi: float
    boosting: bool
    expected: bool


def combined_scores(scores_a, scores_b, alpha: float, form: str = "convex") -> np.ndarray:
    r"""$(1-\alpha) a + \alpha b$ (``convex``) or $a + \alpha b$ (``boosting``), float64."""
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    return (1.0 - alpha) * a + alpha * b if form == "convex" else a + alpha * b


def crossing(delta_a: float, delta_b: float, boosting: bool) -> float:
    """The alpha where two lines meet, or NaN when they are parallel (or equal)."""
    denominator = delta_b if boosting else delta_a - delta_b
    if denominator == 0.0:
        return math.nan
    return -delta_a / denominator if boosting else delta_a / denominator


def metric_cutoff(metric: str) -> tuple[bool, int | None]:
    """``"ndcg@10"`` -> (normalised, k); the line search handles DCG and NDCG only."""
    function, arguments = parse_metric(metric)
    if function not in ("ndcg", "dcg"):
        raise ParameterError(f"the exact line search optimises dcg[@k] or ndcg[@k], got {metric!r}")
    return function == "ndcg", arguments.get("k")


def check_range(alpha_range) -> tuple[float, float]:
    """A finite, non-empty ``(lo, hi)``."""
    try:
        lo, hi = (float(v) for v in alpha_range)
    except (TypeError, ValueError):
        raise ParameterError(f"alpha_range must be two numbers (lo, hi), got {alpha_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ParameterError(f"alpha_range must be finite with lo < hi, got ({lo}, {hi}): the range is empty")
    return lo, hi


def prepare_lines(scores_a, scores_b, y, query_offsets, *, form="convex", alpha_range=(0.0, 1.0),
                  metric="ndcg@10", convention: str | Convention = DEFAULT_CONVENTION,
                  ties="expected") -> Lines:
    """Check the inputs of ``optimal_combination`` and build the :class:`Lines` both twins sweep."""
    if form not in FORMS:
        raise ParameterError(f"form must be one of {FORMS}, got {form!r}")
    if ties not in COMBINE_TIES:
        raise ParameterError(f"ties must be one of {COMBINE_TIES}, got {ties!r}")
    lo, hi = check_range(alpha_range)
    normalised, k = metric_cutoff(metric)
    c = get_convention(convention)
    a, b, y, offsets = _arrays(scores_a, scores_b, y, query_offsets)
    sizes = np.diff(offsets)  # (n_queries,)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    g = gain(y, c)
    largest = int(sizes.max(initial=0))
    discounts = discount(np.arange(1, max(largest, 1) + 1), c)  # (largest,)
    if k is not None:
        discounts[k:] = 0.0
    ideal = _ideal_dcg(g, query, offsets, discounts)  # (n_queries,)
    n_queries = len(sizes)
    active = sizes >= 2
    if normalised:
        zero = (c.ndcg_k_beyond_n == "zero") & (sizes < k) if k is not None else np.zeros(n_queries, bool)
        active &= (ideal > 0) & ~zero
        fixed = np.where(zero, 0.0, np.where(ideal > 0, np.nan, c.no_relevant_value))  # NaN: depends on alpha
        scale = np.where(active, 1.0 / np.where(ideal > 0, ideal, 1.0) / n_queries, 0.0)
    else:
        fixed = np.full(n_queries, np.nan)
        scale = np.where(active, 1.0 / n_queries, 0.0)
    if ties == "expected":
        g = _mean_gain_of_equal_lines(g, a, b, query)
    inactive = ~active
    # an inactive query's value is fixed; one or zero documents: its (N)DCG at any alpha
    one_doc = inactive & (sizes == 1) & np.isnan(fixed)
    fixed = np.where(one_doc, _single_value(g, offsets, discounts, ideal, normalised), fixed)
    constant = float(np.sum(np.where(inactive, np.nan_to_num(fixed), 0.0)) / n_queries)
    return Lines(a, b, g, offsets, active, scale, constant, discounts, lo, hi, form == "boosting", ties == "expected")


def _arrays(scores_a, scores_b, y, query_offsets):
    a = np.ascontiguousarray(scores_a, dtype=np.float64)
    b = np.ascontiguousarray(scores_b, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    if a.ndim != 1 or a.shape != b.shape or a.shape != y.shape:
        raise ParameterError(f"scores_a, scores_b and y must be 1-D of one length, got {a.shape}, {b.shape}, {y.shape}")
    if offsets.ndim != 1 or len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(y) \
            or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"query_offsets must start at 0, end at n_rows={len(y)}, never decrease, "
                             "and name at least one query")
    for name, values in (("scores_a", a), ("scores_b", b), ("y", y)):
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise ParameterError(f"{name}[{bad[0]}] is {values[bad[0]]}; scores and labels must be finite")
    return a, b, y, offsets


def _ideal_dcg(g, query, offsets, discounts):
    """DCG of each query's gains sorted descending (discounts already cut at k)."""
    order = np.lexsort((-g, query))  # (n_rows,)
    position = np.arange(len(g)) - offsets[query]  # (n_rows,) rank inside the query (sorted rows)
    return np.bincount(query, weights=g[order] * discounts[position], minlength=len(offsets) - 1)


def _mean_gain_of_equal_lines(g, a, b, query):
    """Each row's gain replaced by the mean gain of the rows of its query with equal (a, b)."""
    order = np.lexsort((b, a, query))  # (n_rows,) equal lines adjacent
    new = np.ones(len(g), bool)
    new[1:] = (np.diff(query[order]) != 0) | (np.diff(a[order]) != 0) | (np.diff(b[order]) != 0)
    group = np.empty(len(g), np.int64)
    group[order] = np.cumsum(new) - 1  # (n_rows,) group of each row
    return (np.bincount(group, weights=g) / np.bincount(group))[group]


def _single_value(g, offsets, discounts, ideal, normalised):
    """(N)DCG of a one-document query (the caller keeps only those rows)."""
    first = g[np.minimum(offsets[:-1], max(len(g) - 1, 0))] if len(g) else np.zeros(len(ideal))
    dcg = first * discounts[0]
    return dcg / np.where(ideal > 0, ideal, 1.0) if normalised else dcg


class Best(NamedTuple):
    """The best interval so far of a left-to-right scan (``value = -inf`` before the first)."""

    value: float = -math.inf
    left: float = math.nan
    right: float = math.nan


def scan_best(best: Best, lefts: np.ndarray, rights: np.ndarray, values: np.ndarray) -> Best:
    """Continue the scan for the best interval over more intervals, in increasing alpha.

    The rule: an interval replaces the best one only when its value exceeds it by more
    than :data:`CROSSING_TOLERANCE` (relative), so the best is the leftmost of the intervals
    whose values differ only by rounding. Both twins scan with this function, the
    fast twin window by window; its answer does not depend on where windows end.
    Only strict running maxima can replace the best, so the loop visits only those.
    """
    before = np.maximum.accumulate(np.r_[best.value, values[:-1]]) if len(values) else values  # (m,)
    for t in np.flatnonzero(values > before):
        if best.value == -math.inf or values[t] > best.value + CROSSING_TOLERANCE * max(1.0, abs(best.value)):
            best = Best(float(values[t]), float(lefts[t]), float(rights[t]))
    return best


def best_interval(breakpoints: np.ndarray, values: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """Midpoint and value of the best interval of a whole path (:func:`scan_best`).

    The midpoint is a documented choice: every alpha inside the interval gives the same
    ranking, and the midpoint is the farthest from both neighbouring breakpoints. A
    breakpoint itself is never returned: there some documents tie, and the metric is an
    expectation (or depends on the tie rule), not a ranking one can reproduce.
    """
    edges = np.r_[lo, breakpoints, hi]  # (m + 2,)
    best = scan_best(Best(), edges[:-1], edges[1:], values)
    return 0.5 * (best.left + best.right), best.value

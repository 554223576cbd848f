r"""How alike two rankings of the same documents are, query by query: Kendall's tau-b, Spearman's rho, the footrule.

Two rankers (two models, two seeds, a model and its pruned copy) score the same
documents; do they order each query alike? Ibrahim (2021, Sec. 5.3.3-5.3.4) compares the
rankings of models this way. Every function takes the scores ``scores_a`` and ``scores_b``
of all rows and the ``query_offsets`` of their queries, and returns one float64 value per
query, shape ``(n_queries,)``. A query of fewer than two documents has no pair of
documents to compare: NaN.

**Ranks and ties.** Tied scores share the average of the ranks they span: in a query of
$n$ documents, document $i$ has the rank

$$r_i = \#\{j : s_j < s_i\} + \tfrac12\left(\#\{j : s_j = s_i\} + 1\right),$$

1 for the lowest score (``scipy.stats.rankdata``'s ``"average"`` method). Ranking by
descending score instead (rank 1 the best) maps $r_i$ to $n + 1 - r_i$ in both rankings,
which changes none of the values below. Everything is computed from the integer signs
$\operatorname{sgn}(a_i - a_j)$ and $\operatorname{sgn}(b_i - b_j)$ of the query's pairs:
the doubled, centred average rank is

$$c_i = 2 r^a_i - (n + 1) = \sum_j \operatorname{sgn}(a_i - a_j), \qquad
d_i = 2 r^b_i - (n + 1) = \sum_j \operatorname{sgn}(b_i - b_j).$$

**Kendall's tau-b** (Kendall 1945, *Biometrika* 33: the tie-aware tau):

$$\tau_b = \frac{S}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}, \qquad
S = \sum_{i < j} \operatorname{sgn}(a_i - a_j)\operatorname{sgn}(b_i - b_j),$$

with $n_0 = n(n-1)/2$ pairs, of which $n_1$ are tied in ``scores_a`` and $n_2$ in
``scores_b``; $S$ is the concordant minus the discordant pairs (a pair tied in either
ranking counts in neither). ``scipy.stats.kendalltau``'s default.

**Spearman's rho** (Spearman 1904): the Pearson correlation of the average ranks,

$$\rho = \frac{\sum_i c_i d_i}{\sqrt{\sum_i c_i^2 \sum_i d_i^2}},$$

``scipy.stats.spearmanr``'s. Both coefficients are NaN where one ranking ties every
document of the query (a zero denominator), as in SciPy, and are clipped to $[-1, 1]$
(the last rounding of the square root could step past it).

**Spearman's footrule** (Spearman 1906): the total displacement of the documents between
the two rankings, divided by its largest value,

$$F = \sum_i \left|r^a_i - r^b_i\right| = \tfrac12 \sum_i |c_i - d_i|, \qquad
\mathrm{footrule} = \frac{F}{\lfloor n^2 / 2 \rfloor}.$$

$\lfloor n^2/2 \rfloor$ is the largest $F$ between two orderings of $n$ documents,
reached when one reverses the other (Diaconis & Graham 1977, *JRSS B* 39). Normalised
so, the footrule lies in $[0, 1]$ for every query length, 0 for the same ranking and 1
for the reversed one, so queries of different lengths count alike in a mean over queries
(the raw $F$ grows as $n^2$). Average ranks keep it in $[0, 1]$: an average rank is the
mean rank over the orderings of its tie group, and $|\cdot|$ is convex. A distance, not
a correlation: 0 is agreement. Defined for every query of two documents or more (0 when
both rankings tie every document).

**Exact arithmetic.** $c_i$, $d_i$, $S$ and the counts of tied pairs are integers,
summed as int64; the one division (and square root) at the end is the only rounding, so
both twins give the same bits. Memory: the reference compares at most
:data:`TAU_PAIR_BLOCK` pairs at once, in blocks of rows of a query.
"""
from __future__ import annotations

import math

import numpy as np

from twinrank.reference.errors import ParameterError

__all__ = ["kendall_tau", "spearman_rho", "footrule", "TAU_PAIR_BLOCK"]

TAU_PAIR_BLOCK = 1 << 20  # pairs of documents kendall_tau compares at once (a few int8 matrices of this size)


def _rankings(scores_a, scores_b, query_offsets) -> tuple:
    """The scores as float64 and the offsets as int64, C-contiguous, checked (both twins call this)."""
    a = np.ascontiguousarray(scores_a, dtype=np.float64)
    b = np.ascontiguousarray(scores_b, dtype=np.float64)
    offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    if a.ndim != 1 or b.shape != a.shape:
        raise ParameterError(f"scores_a and scores_b must be 1-D of the same length, got {a.shape} and {b.shape}")
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(a) \
            or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"query_offsets must start at 0, end at n_rows={len(a)} and never decrease")
    for name, scores in (("scores_a", a), ("scores_b", b)):
        if np.isnan(scores).any():
            raise ParameterError(f"{name}[{np.flatnonzero(np.isnan(scores))[0]}] is NaN; a NaN score cannot be "
                                 "ranked")
    return a, b, offsets


def _clip(value: float) -> float:
    return min(1.0, max(-1.0, value))


def _signs(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """sgn(rows[i] - values[j]) as an int8 matrix (len(rows), len(values)), by comparison (infinities too)."""
    return np.greater.outer(rows, values).astype(np.int8) - np.less.outer(rows, values).astype(np.int8)


def _pair_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """$S$ and the pairs untied in ``a`` ($n_0 - n_1$) and in ``b`` ($n_0 - n_2$) of one query, exactly.

    Every ordered pair $(i, j)$ is compared, block of rows by block of rows; each unordered
    pair is counted twice, and the diagonal ($i = j$) is 0.
    """
    s = untied_a = untied_b = 0
    step = max(1, TAU_PAIR_BLOCK // max(len(a), 1))  # rows per block
    for lo in range(0, len(a), step):
        sign_a, sign_b = _signs(a[lo:lo + step], a), _signs(b[lo:lo + step], b)  # (step, n)
        s += int(np.sum(sign_a * sign_b, dtype=np.int64))
        untied_a += int(np.count_nonzero(sign_a))
        untied_b += int(np.count_nonzero(sign_b))
    return s // 2, untied_a // 2, untied_b // 2


def _centred_ranks(values: np.ndarray) -> np.ndarray:
    r"""$2 r_i - (n + 1)$ of the average ranks: $\#\{j : v_j < v_i\} - \#\{j : v_j > v_i\}$ (int64)."""
    ordered = np.sort(values)
    below = np.searchsorted(ordered, values, side="left")  # (n,) documents scored lower
    above = len(values) - np.searchsorted(ordered, values, side="right")  # (n,) documents scored higher
    return (below - above).astype(np.int64)


def kendall_tau(scores_a, scores_b, query_offsets) -> np.ndarray:
    r"""Kendall's tau-b between the two rankings of each query (Kendall 1945; Ibrahim 2021, Sec. 5.3.3).

    $$\tau_b = \frac{S}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}$$

    with $S$ the concordant minus the discordant pairs and $n_1$, $n_2$ the pairs tied in
    each ranking (module docstring). NaN for a query of fewer than two documents and where
    one ranking ties every document. $O(n^2)$ time per query of $n$ documents.

    Parameters
    ----------
    scores_a, scores_b : float64 array (n_rows,), the two rankers' scores; NaN is refused
    query_offsets : int64 array (n_queries + 1,)

    Returns
    -------
    float64 array (n_queries,), in $[-1, 1]$ or NaN
    """
    a, b, offsets = _rankings(scores_a, scores_b, query_offsets)
    out = np.full(len(offsets) - 1, np.nan)
    for q, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:])):
        s, untied_a, untied_b = _pair_counts(a[start:stop], b[start:stop])
        if untied_a > 0 and untied_b > 0:
            out[q] = _clip(float(s) / math.sqrt(float(untied_a) * float(untied_b)))
    return out


def spearman_rho(scores_a, scores_b, query_offsets) -> np.ndarray:
    r"""Spearman's rho between the two rankings of each query: the Pearson correlation of average ranks.

    $$\rho = \frac{\sum_i c_i d_i}{\sqrt{\sum_i c_i^2 \sum_i d_i^2}}, \qquad c_i = 2 r^a_i - (n + 1),\
    d_i = 2 r^b_i - (n + 1)$$

    (Spearman 1904; Ibrahim 2021, Sec. 5.3.4). NaN for a query of fewer than two documents and
    where one ranking ties every document. $O(n \log n)$ time per query.

    Parameters
    ----------
    scores_a, scores_b : float64 array (n_rows,), the two rankers' scores; NaN is refused
    query_offsets : int64 array (n_queries + 1,)

    Returns
    -------
    float64 array (n_queries,), in $[-1, 1]$ or NaN
    """
    a, b, offsets = _rankings(scores_a, scores_b, query_offsets)
    out = np.full(len(offsets) - 1, np.nan)
    for q, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:])):
        c, d = _centred_ranks(a[start:stop]), _centred_ranks(b[start:stop])  # (n,) each
        cc, dd = int(c @ c), int(d @ d)
        if cc > 0 and dd > 0:
            out[q] = _clip(float(c @ d) / math.sqrt(float(cc) * float(dd)))
    return out


def footrule(scores_a, scores_b, query_offsets) -> np.ndarray:
    r"""Spearman's footrule between the two rankings of each query, divided by its maximum: in $[0, 1]$.

    $$\mathrm{footrule} = \frac{\sum_i |r^a_i - r^b_i|}{\lfloor n^2 / 2 \rfloor}$$

    with $r^a_i$, $r^b_i$ the average ranks of document $i$ (Spearman 1906; Ibrahim 2021,
    Sec. 5.3.4). The denominator is the footrule of a ranking and its reverse, the largest
    between two orderings of $n$ documents (Diaconis & Graham 1977), so queries of every
    length share one scale: 0 the same ranking, 1 the reversed one. NaN for a query of fewer
    than two documents. $O(n \log n)$ time per query.

    Parameters
    ----------
    scores_a, scores_b : float64 array (n_rows,), the two rankers' scores; NaN is refused
    query_offsets : int64 array (n_queries + 1,)

    Returns
    -------
    float64 array (n_queries,), in $[0, 1]$ or NaN
    """
    a, b, offsets = _rankings(scores_a, scores_b, query_offsets)
    out = np.full(len(offsets) - 1, np.nan)
    for q, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:])):
        n = int(stop - start)
        if n >= 2:
            displacement = int(np.abs(_centred_ranks(a[start:stop]) - _centred_ranks(b[start:stop])).sum())  # 2F
            out[q] = float(displacement) / float(2 * (n * n // 2))
    return out

r"""Gradients and hessians of the training objectives: squared error, logistic, LambdaRank.

**Sign convention.** twinrank trees *minimise*: an objective returns, per row, the
first and second derivatives $g_i = \partial L / \partial s_i$ and
$h_i = \partial^2 L / \partial s_i^2$ (float64) of a loss $L$ at the current scores
$s$, and a leaf takes the Newton step $v = -\sum g / \sum h$. LambdaRank has no
loss written down; its lambdas $\lambda_i$ are forces that push document $i$
*up* when positive, so it returns $g_i = -\lambda_i$ and $h_i > 0$.

LambdaRank (Burges 2010, "From RankNet to LambdaRank to LambdaMART", Eqs. 3-4 and
Sec. 7; Wu, Burges, Svore & Gao 2010, "Adapting boosting for information retrieval
measures"), for every pair of one query with $y_i > y_j$:

$$\rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad
\lambda_{ij} = \sigma\, |\Delta Z_{ij}|\, \rho_{ij}, \qquad
\lambda_i = \sum_{j:\, y_i > y_j} \lambda_{ij} - \sum_{j:\, y_j > y_i} \lambda_{ji},$$

$$h_i = \sum_{j:\, y_i \ne y_j} \sigma^2 |\Delta Z_{ij}|\, \rho_{ij} (1 - \rho_{ij}),$$

where $|\Delta Z_{ij}|$ is the change of the target metric when $i$ and $j$ swap
positions in the current ranking. The derivation, line by line against this
module, is ``docs/lambdas.md``.

**Ranking.** Positions are 0-based: the documents of a query sorted by descending
score, ties broken by input order (a stable sort), see :func:`rank_order`. A query whose
scores *all* tie has no ranking yet: its NDCG lambdas are their expectation over every order
of its documents (``_tied_ndcg``; MAP and ERR keep the input order).

**Modules.** This module is LambdaRank and the $|\Delta Z|$ of each metric, and the one
public path of every objective: ``Loss`` and the pointwise losses are written in
``_losses``, the argument checks both twins share in ``_objective_checks``.
"""
from __future__ import annotations

import warnings

import numpy as np

from twinrank.reference.errors import QuadraticQueryWarning
from twinrank.reference.losses._loss import (
    Logistic,
    Loss,
    SquaredError,
    _sigmoid_pair,
    logistic,
    squared_error,
)
from twinrank.reference.losses._objective_checks import GAINS, LAMBDA_METRICS, _check_lambdarank
from twinrank.reference.losses._query_pairs import (
    label_order,
    labelled_pairs,
    pair_blocks,
    product_above,
    query_of_rows,
    sum_above,
)

__all__ = ["LAMBDA_METRICS", "SCORE_DISTANCE_EPSILON", "GAINS", "squared_error", "logistic", "rank_order",
           "lambdarank", "Loss", "SquaredError", "Logistic", "LambdaRank", "on_grid", "TIE_GRID", "QUADRATIC_PAIRS"]

TIE_GRID = 2.0 ** 24  # the LambdaRank loss ranks scores on multiples of 1 / TIE_GRID (:func:`on_grid`)
SCORE_DISTANCE_EPSILON = float(np.float32(0.01))  # LightGBM's 0.01f in `delta / (0.01f + |s_i - s_j|)`
QUADRATIC_PAIRS = 10**7  # a query with more pair terms per tree warns (QuadraticQueryWarning): seconds per tree
PAIR_BLOCK = 1 << 20  # pairs per block (about: whole documents' pairs), 8 MiB per float64 array of a block


def rank_order(scores, query_offsets):
    r"""The rows of every query in ranked order: descending score, ties by input order.

    Returns ``order`` (int64, shape (n_rows,)) with ``order[query_offsets[q]:query_offsets[q + 1]]``
    the rows of query ``q``, best first. The 0-based position of row ``order[t]`` is
    ``t - query_offsets[q]``. O(n log n).
    """
    scores = np.asarray(scores, dtype=np.float64)
    query_offsets = np.asarray(query_offsets, dtype=np.int64)
    qid = np.repeat(np.arange(len(query_offsets) - 1), np.diff(query_offsets))  # (n_rows,)
    by_score = np.argsort(-scores, kind="stable")  # (n_rows,) ties keep input order
    return by_score[np.argsort(qid[by_score], kind="stable")]  # (n_rows,) grouped by query


def lambdarank(y, scores, query_offsets, *, metric="ndcg", k=None, sigma=1.0, truncation=None,
               gain="exp2", normalize=False, queries=None):
    r"""LambdaRank gradients ``g = -lambdas`` and hessians ``h`` (float64, shape (n_rows,)).

    Parameters
    ----------
    y : array of float, shape (n_rows,)
        Graded relevance labels, finite and >= 0.
    scores : array of float, shape (n_rows,)
        The current model scores, finite.
    query_offsets : array of int, shape (n_queries + 1,)
        Query ``q`` owns rows ``query_offsets[q]:query_offsets[q + 1]``.
    metric : {"ndcg", "map", "err"}
        The target metric $Z$ of $|\Delta Z_{ij}|$:

        * ``"ndcg"``: NDCG@k, $\mathrm{DCG@k} = \sum_{r \le k} G(y_{(r)}) / \log_2(1 + r)$
          divided by the ideal DCG@k of the query; $G(l) = 2^l - 1$ (``gain="exp2"``)
          or $G(l) = l$ (``"linear"``). $|\Delta Z_{ij}| = |G_i - G_j|\,|D_i - D_j| / \mathrm{IDCG@k}$
          with $D = 1/\log_2(1 + r)$ for ranks $r \le k$ and $0$ beyond.
        * ``"map"``: average precision, relevant means $y > 0$, divided by the number of
          relevant documents of the query (no cutoff: ``k`` must be None).
        * ``"err"``: ERR@k (Chapelle, Metzler, Zhang & Grinspan 2009),
          $\sum_{r \le k} \frac{R_{(r)}}{r} \prod_{m < r} (1 - R_{(m)})$ with
          $R(l) = (2^l - 1) / 2^{l_{\max}}$, $l_{\max}$ the largest label in the whole ``y``.
          $|\Delta Z_{ij}|$ is exact and O(1) per pair after O(n) prefix products.
    k : int >= 1 or None
        The metric's cutoff; None (and any k above a query's length) means the whole list.
    sigma : float > 0
        The steepness $\sigma$ of RankNet's sigmoid (LightGBM ``sigmoid``).
    truncation : int >= 1 or None
        Keep only the pairs with at least one document ranked within the top
        ``truncation`` positions (LightGBM ``lambdarank_truncation_level``; LightGBM also
        cuts the ideal DCG there, see ``docs/lambdas.md``). None keeps every pair.
    gain : {"exp2", "linear"}
        NDCG's gain, for ``metric="ndcg"`` only.
    normalize : bool
        Per-query normalisation (LightGBM ``lambdarank_norm=true``, its default; the
        same as XGBoost's ``lambdarank_score_normalization`` with ``lambdarank_normalization``,
        its defaults for ``rank:ndcg``). LightGBM ``src/objective/rank_objective.hpp``,
        ``LambdarankNDCG::GetGradientsForOneQuery``: when the scores of the query are not
        all equal, each pair's metric change is damped by the pair's score distance,

        $$|\Delta Z_{ij}| \leftarrow \frac{|\Delta Z_{ij}|}{\epsilon + |s_i - s_j|},
        \qquad \epsilon = \mathtt{0.01f},$$

        (LightGBM's float literal: ``SCORE_DISTANCE_EPSILON`` = 0.009999999776482582), and
        after the pairs are summed the query's $g$ and $h$ are multiplied by

        $$\frac{\log_2(1 + S)}{S}, \qquad S = 2 \sum_{\text{pairs}} \lambda_{ij}$$

        (no scaling when $S = 0$). A query's total push grows like $\log S$ instead of
        $S$: queries with many document pairs no longer dominate every tree, and pairs
        already far apart get little weight. XGBoost (``src/objective/lambdarank_obj.h``,
        ``LambdaGrad``; ``lambdarank_obj.cc``, ``CalcLambdaForGroup``) computes the same
        two steps with $\epsilon = 0.01$ in double precision, $\sigma = 1$, and every
        pair hessian twice ours (``* 2.0``): the same gradients, and Newton steps half as
        long, i.e. LightGBM's form at half the learning rate. False (the default here;
        ``LambdaMART`` chooses its own) is the paper's un-normalised form.
    queries : array of int or None
        The indices of the queries to compute, each at most once; the rows of the other
        queries get $g = h = 0$ (query subsampling). None computes every query.
    Returns
    -------
    g : ndarray of float64, shape (n_rows,)
        $-\lambda$; it sums to 0 over each query.
    h : ndarray of float64, shape (n_rows,)
        The second derivatives, >= 0. A query with fewer than two documents, with one
        label only, with ideal DCG 0 (``"ndcg"``) or without a relevant document
        (``"map"``) gets $g = h = 0$.

    Notes
    -----
    The pairs are listed as the formulas above read them: every $(i, j)$ of one query with
    $y_i > y_j$ (``_query_pairs.pair_blocks``), each knowing its documents' positions in
    the current ranking (:func:`rank_order`), which is all $|\Delta Z|$ needs. A pair
    with neither document above ``truncation`` or the cutoff ``k`` is dropped. The pairs
    go through in blocks of about ``PAIR_BLOCK`` ($2^{20}$), whole documents' pairs each:
    O(pairs) time and O(n + PAIR_BLOCK) memory (a query of 20,000 documents has up to
    2e8 pairs, 1.6 GB for their indices alone), a loop over blocks; the block size changes
    only the order in which a document's sums add (the last bits). A document's sums add
    its pairs in the order (label, then position) of its partners: the result does not
    depend on the input order of the documents.
    """
    y, scores, query_offsets, queries = _check_lambdarank(
        y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries)
    return _lambdarank(y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries)


def _lambdarank(y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries):
    r""":func:`lambdarank` on checked arguments: ``(g, h)``.

    **NumPy idiom for the loops over queries and pairs.** The pairs $(i, j)$, $y_i > y_j$,
    of all computed queries are listed at once, a block of about ``PAIR_BLOCK`` at a time
    (``_query_pairs.pair_blocks``); each pair's $|\Delta Z|$, $\lambda_{ij}$ and hessian
    are vector operations on the block, and a document's sums over its pairs are
    ``np.bincount`` of the pairs' terms by document. Pairs with neither document in the top
    ``truncation`` positions (or the metric's top ``k``: there $|\Delta Z| = 0$) are dropped first.
    """
    query = query_of_rows(query_offsets)  # (n_rows,) the query of each row
    order = rank_order(scores, query_offsets)  # (n_rows,) ranked order
    position = np.empty(len(y), dtype=np.int64)  # (n_rows,) each row's 0-based position in its query
    position[order] = np.arange(len(y)) - query_offsets[query]
    by_label = label_order(y, query, order)  # (n_rows,) by label, then ranked
    if metric == "ndcg":  # delta_z(i, j): |Delta Z| of swapping rows i and j, (n_pairs,)
        delta_z = _delta_ndcg(y, position, by_label, query, query_offsets, k, gain)
    elif metric == "map":
        delta_z = _delta_map(y, position, order, query, query_offsets)
    else:
        delta_z = _delta_err(y, position, order, query, query_offsets, k, l_max=y.max(initial=0.0))
    top = min(truncation or len(y), k or len(y))  # a pair counts if a document is at a position < top
    spread = _score_spread(scores, order, query_offsets)  # (n_queries,) scores not all equal
    computed = np.zeros(len(query_offsets) - 1, dtype=bool)  # (n_queries,)
    computed[queries] = True
    lambdas, hessians = np.zeros(len(y)), np.zeros(len(y))  # (n_rows,) each
    total = np.zeros(len(query_offsets) - 1)  # (n_queries,) S / 2, the sum of every pair's lambda
    if metric == "ndcg":  # a query whose scores all tie has no order yet: the expectation over all
        tied = computed & ~spread  # (n_queries,)
        _tied_ndcg(y, query_offsets, np.flatnonzero(tied), k, top, sigma, gain, lambdas, hessians, total)
        computed &= spread
    for i, j in pair_blocks(y, query, by_label, computed, PAIR_BLOCK):  # (n_pairs,) each, y_i > y_j
        if top < len(y):
            near = np.minimum(position[i], position[j]) < top  # (n_pairs,)
            i, j = i[near], j[near]
        pair_lambda, pair_hessian = _pair_terms(scores[i] - scores[j], delta_z(i, j), spread[query[i]],
                                                sigma, normalize)  # (n_pairs,) each
        lambdas += np.bincount(i, pair_lambda, len(y)) - np.bincount(j, pair_lambda, len(y))  # i up, j down
        hessians += np.bincount(i, pair_hessian, len(y)) + np.bincount(j, pair_hessian, len(y))  # both ends
        total += np.bincount(query[i], pair_lambda, len(total))
    scale = _norm_scale(2.0 * total)[query] if normalize else 1.0  # (n_rows,)
    return -lambdas * scale, hessians * scale


def _tied_ndcg(y, query_offsets, tied, k, top, sigma, gain, lambdas, hessians, total):
    r"""NDCG's lambdas of the queries ``tied`` whose scores all tie: their expectation over every order.

    A query whose scores all tie (every query in boosting's first round, $F_0 = 0$) has no
    ranking yet: any order of its documents is as good as another, and the input order is an
    accident of the file. Here each of the $n!$ orders is equally likely, and the lambdas are
    their expectation. Every pair has $\rho_{ij} = 1/2$; the positions $p \ne q$ of two
    documents are uniform, so $E|\Delta Z_{ij}| = |G_i - G_j|\,W / \mathrm{IDCG@k}$ with

    $$W = E\big[|D_p - D_q|\,[\min(p, q) < T]\big]
        = \frac{2}{n(n-1)} \sum_{p < T} \sum_{q > p} (D_p - D_q),$$

    $D_p = 1/\log_2(2 + p)$ for $p < k$ and 0 beyond ($D$ does not increase), $T$ = ``top``
    (the truncation or the cutoff). Summed over the partners,

    $$\lambda_i = \frac{\sigma W}{2\,\mathrm{IDCG@k}} \sum_j (G_i - G_j)
               = \frac{\sigma W}{2\,\mathrm{IDCG@k}} \Big(n G_i - \sum_j G_j\Big), \qquad
      h_i = \frac{\sigma^2 W}{4\,\mathrm{IDCG@k}} \sum_j |G_i - G_j| :$$

    the first tree fits the gains, centred per query. Adds into ``lambdas``, ``hessians``
    ((n_rows,) each) and ``total`` ((n_queries,) the sum of the pairs' lambdas, for ``normalize``).
    """
    for q in tied:
        lo, hi = query_offsets[q], query_offsets[q + 1]
        n = hi - lo
        if n < 2:
            continue
        gains = np.exp2(y[lo:hi]) - 1.0 if gain == "exp2" else y[lo:hi].astype(np.float64)  # (n,)
        discounts = _discounts(np.arange(n), k)  # (n,) D_p of each position p
        ranked = np.sort(gains)  # (n,) ascending
        ideal = np.sum(ranked[::-1] * discounts)
        if ideal == 0.0:
            continue
        first = np.arange(min(top, n))  # (T,) the positions p < T
        after = np.cumsum(discounts[::-1])[::-1] - discounts  # (n,) sum of D_q over q > p
        weight = 2.0 * np.sum((n - 1 - first) * discounts[first] - after[first]) / (n * (n - 1))
        below = np.searchsorted(ranked, gains, side="right")  # (n,) how many gains are <= G_i
        prefix = np.cumsum(ranked)  # (n,)
        distance = gains * (2 * below - n) - 2.0 * prefix[below - 1] + prefix[-1]  # (n,) sum_j |G_i - G_j|
        lambdas[lo:hi] += sigma * weight * (n * gains - prefix[-1]) / (2.0 * ideal)
        hessians[lo:hi] += sigma**2 * weight * distance / (4.0 * ideal)
        total[q] += sigma * weight * np.sum(distance) / (4.0 * ideal)


def _pair_terms(score_gap, delta, spread, sigma, normalize):
    r"""$\lambda_{ij}$ and the pair hessians of pairs $(i, j)$, $y_i > y_j$, (n_pairs,) each.

    ``score_gap``: $s_i - s_j$; ``delta``: $|\Delta Z_{ij}|$; ``spread``: whether the pair's
    query has scores not all equal (where ``normalize`` damps by the score distance).
    """
    if normalize:  # score-distance damping, in the queries whose scores are not all equal
        delta = np.where(spread, delta / (SCORE_DISTANCE_EPSILON + np.abs(score_gap)), delta)
    rho, one_minus_rho = _sigmoid_pair(-sigma * score_gap)  # 1 / (1 + e^{sigma (s_i - s_j)}) and 1 - it
    return sigma * delta * rho, sigma**2 * delta * rho * one_minus_rho


class LambdaRank(Loss):
    r"""LambdaRank's lambdas (:func:`lambdarank`) of a target metric; $F_0 = 0$.

    The boosting loops' loss: it ranks the scores on the tie grid (:func:`on_grid`), so that
    documents tied in real arithmetic stay tied in both twins.

    **Weights.** With ``weight`` (one per row) each document's $g_i = -\lambda_i$ and $h_i$, its
    query's pairs summed and normalised, are then multiplied by its weight $w_i$ (LightGBM's
    ``RankingObjective::GetGradients``; :class:`Loss`): a query of weight 2 on every document
    pushes as the query given twice.

    **Large queries.** A query's lambdas cost time in proportion to its pairs: here every pair of
    documents with different labels, $(n^2 - \sum_l n_l^2) / 2$ for $n$ documents ($n_l$ of label
    $l$), whatever the cutoff or truncation (:meth:`pair_terms`), at about 4 million pairs a second.
    When a query's pairs exceed ``quadratic_pairs`` ($10^7$: seconds per tree for that query alone;
    a query of 300,000 documents has about $10^{10}$), building the loss warns once, before the
    first tree, with a :class:`~twinrank.reference.errors.QuadraticQueryWarning` naming the largest
    such query (by ``qids``, its query id, when given), its size and its pairs.
    """

    quadratic_pairs = QUADRATIC_PAIRS
    remedy = ("the fast engine computes them about 50 times faster, and in time linear in the query's size "
              "with a metric cutoff (ndcg@k) or a truncation")

    def __init__(self, y, query_offsets, *, weight=None, metric="ndcg", k=None, sigma=1.0, truncation=None,
                 gain="exp2", normalize=False, qids=None):
        self.y, _, self.query_offsets, _ = _check_lambdarank(
            y, y, query_offsets, metric, k, sigma, truncation, gain, normalize, None)
        self._set_weight(weight, len(self.y))
        self.options = dict(metric=metric, k=k, sigma=sigma, truncation=truncation, gain=gain,
                            normalize=normalize)
        _warn_large_queries(self.pair_terms(), self.quadratic_pairs, self.query_offsets, qids, self.remedy)

    def pair_terms(self) -> np.ndarray:
        """The pair terms each query computes at every tree, (n_queries,): its pairs of different labels."""
        return labelled_pairs(self.y, self.query_offsets)

    def gradients(self, scores, queries, g, h) -> None:
        every = np.arange(len(self.query_offsets) - 1) if queries is None else queries
        g[:], h[:] = _lambdarank(self.y, on_grid(scores), self.query_offsets, queries=every, **self.options)
        self.weighted(g, h)


def _warn_large_queries(pairs, limit, query_offsets, qids, remedy) -> None:
    """One :class:`QuadraticQueryWarning` if a query's pair terms ``pairs`` (n_queries,) exceed ``limit``:
    the largest such query, its size and pairs, how many others; ``remedy``: what makes it cheaper."""
    over = np.flatnonzero(pairs > limit)
    if len(over) == 0:
        return
    q = over[np.argmax(pairs[over])]
    name = f"qid {qids[q]}" if qids is not None else f"{q + 1} of {len(pairs)}"
    others = len(over) - 1
    others = f" (and {others} other {'query' if others == 1 else 'queries'} above {limit:.0e})" if others else ""
    warnings.warn(f"query {name} has {query_offsets[q + 1] - query_offsets[q]:,} documents: LambdaRank's lambdas "
                  f"take {pairs[q]:.2g} pair terms per tree for it, time quadratic in a query's size{others}; "
                  f"{remedy}", QuadraticQueryWarning, stacklevel=3)


def on_grid(scores: np.ndarray) -> np.ndarray:
    r"""``scores`` rounded to the nearest multiple of $2^{-24}$, exactly (``TIE_GRID``).

    Two documents tied in real arithmetic (the same leaves; or leaves whose values are
    equal in real arithmetic) can differ in their scores' last bits, and the bits differ
    between twins, whose leaf values are summed in other orders; with DART, dropping a tree
    subtracts its term, and $(s + v) - v$ is not $s$. Ranking losses and DART's validation
    loss rank by scores on a grid far coarser than that noise and far finer than any score
    gap that matters: real ties are ties again, broken by input order (docs/agreement.md), in both
    twins.
    """
    grid = np.multiply(scores, TIE_GRID)  # (n_rows,) exact: a power of two scales without rounding
    return np.divide(np.rint(grid, out=grid), TIE_GRID, out=grid)  # in place: one array, not three


def _score_spread(scores, order, query_offsets):
    """Whether each query's scores are not all equal: its first and last ranked scores differ, (n_queries,)."""
    sizes = np.diff(query_offsets)  # (n_queries,)
    last = np.clip(query_offsets[1:] - 1, 0, None)  # (n_queries,) an empty query reads any row: masked
    first = np.minimum(query_offsets[:-1], last)
    if len(order) == 0:
        return np.zeros(len(sizes), dtype=bool)
    return (sizes > 0) & (scores[order[first]] != scores[order[last]])


def _delta_ndcg(y, position, by_label, query, query_offsets, k=None, gain="exp2"):
    r"""$|\Delta \mathrm{NDCG@k}|$ of swapping two documents of one query: a function of the
    pairs ``(i, j)`` (row indices, (n_pairs,) each) that returns (n_pairs,).

    Swapping changes $\mathrm{DCG}$ by $(G_i - G_j)(D_j - D_i)$, $D$ the discount of each
    document's current position, so $|\Delta| = |G_i - G_j|\,|D_i - D_j| / \mathrm{IDCG@k}$
    (Burges 2010, Sec. 4). Zero in a query whose ideal DCG@k is 0 (then every gain is 0).
    ``position``: each row's position in its query's ranking; ``by_label``: the rows in label
    order (``_query_pairs.label_order``), each query's ideal ranking; ``query``: each row's query.
    """
    gains = np.exp2(y) - 1.0 if gain == "exp2" else y.astype(np.float64)  # (n_rows,)
    discounts = _discounts(position, k)  # (n_rows,) of each row's current position
    ideal_gains = gains[by_label] * _discounts(np.arange(len(y)) - query_offsets[query], k)  # (n_rows,) by label
    ideal = np.bincount(query, ideal_gains, len(query_offsets) - 1)  # (n_queries,) summed best first
    ideal = np.where(ideal == 0.0, 1.0, ideal)  # 0 / 1 = 0 where IDCG = 0
    return lambda i, j: np.abs(gains[i] - gains[j]) * np.abs(discounts[i] - discounts[j]) / ideal[query[i]]


def _delta_map(y, position, order, query, query_offsets):
    r"""$|\Delta \mathrm{AP}|$ of swapping two documents of one query: a function of the pairs
    ``(i, j)`` (row indices, (n_pairs,) each) that returns (n_pairs,).

    Only a relevant/non-relevant pair changes AP. With $u < v$ the two documents' positions
    (0-based), moving the relevant one from $v$ up to $u$: with $c$ = 1 + the relevant
    documents above $u$ and $m$ those strictly between, it gains precision $c / (u+1)$
    and loses $(c + m) / (v+1)$, and each relevant document between gains $1 / (t+1)$:

    $$|\Delta \mathrm{AP}| = \frac{1}{R}\Big(\frac{c}{u+1} - \frac{c+m}{v+1}
    + \sum_{u < t < v,\ \mathrm{rel}_t} \frac{1}{t+1}\Big),$$

    $R$ the number of relevant documents. Zero if $R = 0$.
    """
    relevant = (y > 0).astype(np.float64)  # (n_rows,)
    n_relevant = np.bincount(query, relevant, len(query_offsets) - 1)  # (n_queries,)
    precision_term = relevant / (position + 1)  # (n_rows,)
    relevant_above, reciprocal_above = (_by_row(sum_above(x[order], query_offsets), order)
                                        for x in (relevant, precision_term))  # (n_rows,) sums above each row

    def delta(i, j):
        u, v = _upper_lower(i, j, position)  # (n_pairs,) each: the higher and the lower document
        c = relevant_above[u] + 1
        m = relevant_above[v] - relevant_above[u] - relevant[u]  # relevant documents between
        between = reciprocal_above[v] - reciprocal_above[u] - precision_term[u]
        change = c / (position[u] + 1) - (c + m) / (position[v] + 1) + between  # R |Delta AP|
        return np.where(relevant[u] != relevant[v], change / np.maximum(n_relevant[query[i]], 1.0), 0.0)
    return delta


def _delta_err(y, position, order, query, query_offsets, k=None, l_max=None):
    r"""$|\Delta \mathrm{ERR@k}|$ of swapping two documents of one query: a function of the pairs
    ``(i, j)`` (row indices, (n_pairs,) each) that returns (n_pairs,).

    With $P_t = \prod_{r < t}(1 - R_r)$ (the chance the user reaches position $t$),
    $w_t = P_t / (t+1)$ for $t < k$ (else 0) and $C_t = \sum_{r < t} R_r w_r$, swapping
    positions $u < v$ changes only positions $u \dots v$, and

    $$\Delta \mathrm{ERR} = (R_v - R_u)\Big(w_u - \frac{C_v - C_{u+1} + w_v}{1 - R_u}\Big).$$

    O(1) per pair after O(n) prefix sums and products; $1 - R$ is computed as
    $2^{-l_{\max}} + (1 - 2^{l - l_{\max}})$, exact for integer labels.
    """
    stop = np.exp2(y - l_max) - np.exp2(-l_max)  # (n_rows,) R, the chance the user stops here
    go_on = np.exp2(-l_max) + (1.0 - np.exp2(y - l_max))  # (n_rows,) 1 - R without cancellation
    reach = _by_row(product_above(go_on[order], query_offsets), order)  # (n_rows,) P_t
    weight = np.where(position < (len(y) if k is None else k), reach / (position + 1), 0.0)  # (n_rows,) w_t
    err_term = stop * weight  # (n_rows,) ERR = sum of err_term
    err_above = _by_row(sum_above(err_term[order], query_offsets), order)  # (n_rows,) C_t

    def delta(i, j):
        u, v = _upper_lower(i, j, position)  # (n_pairs,) each: the higher and the lower document
        between = err_above[v] - err_above[u] - err_term[u]  # C_v - C_{u+1}
        return np.abs(stop[v] - stop[u]) * (weight[u] - (between + weight[v]) / go_on[u])
    return delta


def _discounts(position, k):
    """NDCG@k discounts of positions: 1/log2(2 + t) for t < k, 0 beyond (k None: no cutoff)."""
    below = position < k if k is not None else np.ones(position.shape, dtype=bool)
    return np.where(below, 1.0 / np.log2(position + 2.0), 0.0)


def _by_row(ranked, order):
    """Values in ranked order (position ``t`` of ``order``) moved to the rows they belong to."""
    by_row = np.empty_like(ranked)
    by_row[order] = ranked
    return by_row


def _upper_lower(i, j, position):
    """The pairs' documents as (higher ranked, lower ranked): the swap formulas are written for
    positions $u < v$, and a swap is the same change either way."""
    i_above = position[i] < position[j]
    return np.where(i_above, i, j), np.where(i_above, j, i)


def _norm_scale(total):
    """LightGBM's per-query scale log2(1 + S) / S of ``lambdarank_norm`` (1 where S = 0); (n_queries,)."""
    positive = total > 0.0  # (n_queries,)
    return np.where(positive, np.log2(1.0 + total) / np.where(positive, total, 1.0), 1.0)

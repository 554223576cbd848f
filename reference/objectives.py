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
score, ties broken by input order (a stable sort; DESIGN.md), see :func:`rank_order`.

**Modules.** This module is LambdaRank and the $|\Delta Z|$ of each metric, and the one
public path of every objective: ``Loss`` and the pointwise losses are written in
``_losses``, the argument checks both twins share in ``_objective_checks``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ._losses import Logistic, Loss, SquaredError, _sigmoid_pair, logistic, squared_error
from ._objective_checks import GAINS, METRICS, _check_lambdarank

__all__ = ["METRICS", "SCORE_DISTANCE_EPSILON", "GAINS", "squared_error", "logistic", "rank_order",
           "lambdarank", "Loss", "SquaredError", "Logistic", "LambdaRank"]

SCORE_DISTANCE_EPSILON = float(np.float32(0.01))  # LightGBM's 0.01f in `delta / (0.01f + |s_i - s_j|)`
PAIR_BLOCK = 1 << 20  # pairs per block of a query's pair matrices: 8 MiB per float64 matrix


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
               gain="exp2", normalize=False, queries=None, ranking=None):
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
    ranking : int64 array of shape (n_rows,) or None
        Receives, at the rows of the computed queries, their ranked order
        (:func:`rank_order`'s format). A boosting loop passes the same array every
        round: if it holds each query's rows from an earlier round, the fast twin
        sorts by insertion from there (scores move little between rounds: a few
        swaps per document instead of a full sort). The result never depends on it.

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
    Pairs are formed per query in position space: labels and scores are sorted
    into ranked order (:func:`rank_order`), a metric gives the matrix of
    $|\Delta Z|$ between a block of positions and every position, and the pair
    matrices are summed by rows and columns, block after block. A block holds at
    most ``PAIR_BLOCK`` ($2^{20}$) pairs, and at least one whole row: O(n^2) time and
    O(max(n, PAIR_BLOCK)) memory per query (a 20,000-document query needs about
    0.2 GB, not the 3 GB of each (n, n) matrix); a loop over blocks. A
    query of up to 1,024 documents is one block; the block size changes only the
    order in which the column sums add (the last bits). Queries of equal length are
    computed together, up to ``PAIR_BLOCK`` pairs at a time (the loop over queries
    becomes a leading batch axis; each query's sums are unchanged).
    """
    y, scores, query_offsets, queries = _check_lambdarank(
        y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries, ranking)
    g, h = _lambdarank(y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries)
    if ranking is not None:  # an output here; the fast twin's warm start (see ``ranking``)
        _keep_ranking(ranking, rank_order(scores, query_offsets), query_offsets, queries)
    return g, h


def _lambdarank(y, scores, query_offsets, metric, k, sigma, truncation, gain, normalize, queries):
    """:func:`lambdarank` on checked arguments: ``(g, h)``.

    **NumPy idiom for the loop over queries.** Queries of the same length ``n`` are
    stacked, (n_batch, n), and computed as one batch with a leading query axis
    (:func:`_query_batches`); every sum stays within one query and adds in the order
    the one-query loop would, so the result is the loop's, bit for bit.
    """
    delta_z = {"ndcg": partial(_delta_ndcg, k=k, gain=gain), "map": _delta_map,
               "err": partial(_delta_err, k=k, l_max=y.max(initial=0.0))}[metric]
    order = rank_order(scores, query_offsets)  # (n_rows,)
    g, h = np.zeros_like(scores), np.zeros_like(scores)
    for rows in _query_batches(order, query_offsets, queries):  # (n_batch, n) best first
        delta = partial(delta_z, y[rows])  # delta(a): (n_batch, len(a), n) |Delta Z| of swapping
        lambdas, hessians = _ranked_lambdas(y[rows], scores[rows], delta, sigma, truncation, normalize,
                                            max(1, PAIR_BLOCK // rows.shape[1]))
        g[rows], h[rows] = -lambdas, hessians
    return g, h


def _query_batches(order, query_offsets, queries):
    """The ranked rows of ``queries`` of at least two documents, as (n_batch, n) arrays of queries
    of ``n`` documents each, at most ``PAIR_BLOCK`` pairs per batch (one query at least)."""
    queries = np.asarray(queries)
    sizes = np.diff(query_offsets)[queries]  # (n_queries_computed,)
    for n in np.unique(sizes[sizes >= 2]):
        same = queries[sizes == n]  # (n_same,) the queries of n documents, in order
        per_batch = max(1, PAIR_BLOCK // (n * n))
        for start in range(0, len(same), per_batch):
            first = query_offsets[same[start:start + per_batch]]  # (n_batch,)
            yield order[first[:, None] + np.arange(n)]  # (n_batch, n)


def _keep_ranking(ranking, order, query_offsets, queries):
    """Copy the ranked rows of the computed ``queries`` from ``order`` into ``ranking``."""
    for q in queries:
        ranking[query_offsets[q]:query_offsets[q + 1]] = order[query_offsets[q]:query_offsets[q + 1]]


def _ranked_lambdas(labels, scores, delta, sigma, truncation, normalize, block_rows):
    r"""Lambdas and hessians of a batch of queries of ``n`` documents each, in ranked order.

    ``labels``, ``scores``: shape (n_batch, n), best first; ``delta(a)``: $|\Delta Z|$ of
    swapping each position of ``a`` with every position, shape (n_batch, len(a), n). The
    pair matrices are built ``block_rows`` positions (rows) at a time: (n_batch,
    block_rows, n) each, not (n_batch, n, n). Returns ``(lambdas, hessians)``, shape (n_batch, n).
    """
    n_batch, n = labels.shape
    pushed_up, pushed_down, hessians = np.zeros((3, n_batch, n))
    total = np.zeros(n_batch)  # S / 2 of each query, the sum of every pair's lambda
    for start in range(0, n, block_rows):
        a = np.arange(start, min(start + block_rows, n))  # (m,) the block's positions
        pair_lambda, pair_hessian = _pair_terms(labels, scores, a, delta(a), sigma, truncation, normalize)
        pushed_up[:, a] = pair_lambda.sum(axis=2)  # (n_batch, m) forces pushing each a up
        pushed_down += pair_lambda.sum(axis=1)  # (n_batch, n) forces pushing each b down
        hessians[:, a] += pair_hessian.sum(axis=2)  # both ends of a pair get its hessian
        hessians += pair_hessian.sum(axis=1)
        total += pair_lambda.reshape(n_batch, -1).sum(axis=1)  # (n_batch,)
    lambdas = pushed_up - pushed_down  # (n_batch, n) up-pushes minus down-pushes
    scale = _norm_scale(2.0 * total) if normalize else np.ones(n_batch)  # (n_batch,)
    return lambdas * scale[:, None], hessians * scale[:, None]


def _pair_terms(labels, scores, a, delta, sigma, truncation, normalize):
    r"""$\lambda_{ab}$ and the pair hessians between positions ``a`` (shape (m,)) and every $b$,
    (n_batch, m, n) each.

    ``delta``: (n_batch, m, n) $|\Delta Z_{ab}|$. Zero outside the pairs $y_a > y_b$.
    """
    above = labels[:, a, None] > labels[:, None, :]  # (n_batch, m, n) pair (a, b) with y_a > y_b
    if truncation is not None:
        above &= np.minimum.outer(a, np.arange(labels.shape[1])) < truncation  # one of the two in the top
    score_gap = scores[:, a, None] - scores[:, None, :]  # (n_batch, m, n) s_a - s_b
    if normalize:  # score-distance damping, in the queries whose scores are not all equal
        spread = (scores[:, 0] != scores[:, -1])[:, None, None]  # (n_batch, 1, 1)
        delta = np.where(spread, delta / (SCORE_DISTANCE_EPSILON + np.abs(score_gap)), delta)
    rho, one_minus_rho = _sigmoid_pair(-sigma * score_gap)  # (n_batch, m, n) 1 / (1 + e^{sigma (s_a - s_b)})
    pair_lambda = np.where(above, sigma * delta * rho, 0.0)  # (n_batch, m, n) lambda_ab: a up, b down
    pair_hessian = np.where(above, sigma**2 * delta * rho * one_minus_rho, 0.0)  # (n_batch, m, n)
    return pair_lambda, pair_hessian


class LambdaRank(Loss):
    r"""LambdaRank's lambdas (:func:`lambdarank`) of a target metric; $F_0 = 0$."""

    def __init__(self, y, query_offsets, *, metric="ndcg", k=None, sigma=1.0, truncation=None,
                 gain="exp2", normalize=False):
        self.y, _, self.query_offsets, _ = _check_lambdarank(
            y, y, query_offsets, metric, k, sigma, truncation, gain, normalize, None)
        self.options = dict(metric=metric, k=k, sigma=sigma, truncation=truncation, gain=gain,
                            normalize=normalize)

    def gradients(self, scores, queries, g, h) -> None:
        every = np.arange(len(self.query_offsets) - 1) if queries is None else queries
        g[:], h[:] = _lambdarank(self.y, scores, self.query_offsets, queries=every, **self.options)


def _delta_ndcg(labels, a, k=None, gain="exp2"):
    r"""$|\Delta \mathrm{NDCG@k}|$ of swapping each position of ``a`` (shape (m,)) with every position.

    ``labels``: (..., n), one query per row (in ranked order); returns (..., m, n).
    Swapping changes $\mathrm{DCG}$ by $(G_a - G_b)(D_b - D_a)$, so
    $|\Delta| = |G_a - G_b|\,|D_a - D_b| / \mathrm{IDCG@k}$ (Burges 2010, Sec. 4).
    All zeros for a query whose ideal DCG@k is 0 (then every gain is 0).
    """
    gains = np.exp2(labels) - 1.0 if gain == "exp2" else labels.astype(np.float64)  # (..., n)
    discounts = _discounts(labels.shape[-1], k)  # (n,) 1/log2(2 + t) for t < k, else 0
    ideal = np.sum(np.sort(gains, axis=-1)[..., ::-1] * discounts, axis=-1)  # (...,)
    ideal = np.where(ideal == 0.0, 1.0, ideal)[..., None, None]  # (..., 1, 1) 0 / 1 = 0 if IDCG = 0
    return (np.abs(gains[..., a, None] - gains[..., None, :])
            * np.abs(np.subtract.outer(discounts[a], discounts)) / ideal)  # (..., m, n)


def _delta_map(labels, a):
    r"""$|\Delta \mathrm{AP}|$ of swapping each position of ``a`` with every position.

    ``labels``: (..., n), one query per row (in ranked order); returns (..., m, n).
    Only a relevant/non-relevant pair changes AP. For two positions $u < v$, moving the
    relevant one from $v$ up to $u$ (1-based ranks $u+1$, $v+1$): with $c$ = 1 + the
    relevant documents above $u$ and $m$ those strictly between, it gains precision
    $c / (u+1)$ and loses $(c + m) / (v+1)$, and each relevant document between gains $1 / r$:

    $$|\Delta \mathrm{AP}| = \frac{1}{R}\Big(\frac{c}{u+1} - \frac{c+m}{v+1}
    + \sum_{u < t < v,\ \mathrm{rel}_t} \frac{1}{t+1}\Big),$$

    $R$ the number of relevant documents. All zeros if $R = 0$.
    """
    n = labels.shape[-1]
    relevant = (labels > 0).astype(np.float64)  # (..., n)
    n_relevant = relevant.sum(axis=-1)[..., None, None]  # (..., 1, 1)
    t = np.arange(n)
    relevant_above = _sum_above(relevant)  # (..., n) relevant documents at positions < t
    precision_term = relevant / (t + 1)  # (..., n)
    reciprocal_above = _sum_above(precision_term)  # (..., n) sum of 1/(u+1) over relevant u < t
    u, v = _upper_lower(a, n)  # (m, n) each: the higher and the lower position of each pair
    c = relevant_above[..., u] + 1  # (..., m, n)
    m = relevant_above[..., v] - relevant_above[..., u] - relevant[..., u]  # (..., m, n) relevant between
    between = reciprocal_above[..., v] - reciprocal_above[..., u] - precision_term[..., u]  # (..., m, n)
    delta = (c / (u + 1) - (c + m) / (v + 1) + between) / np.maximum(n_relevant, 1.0)  # (..., m, n)
    return np.where(relevant[..., u] != relevant[..., v], delta, 0.0)  # R = 0: no such pair


def _delta_err(labels, a, k=None, l_max=None):
    r"""$|\Delta \mathrm{ERR@k}|$ of swapping each position of ``a`` (shape (m,)) with every position.

    ``labels``: (..., n), one query per row (in ranked order); returns (..., m, n).
    With $P_t = \prod_{r < t}(1 - R_r)$ (the chance the user reaches position $t$),
    $w_t = P_t / (t+1)$ for $t < k$ (else 0) and $C_t = \sum_{r < t} R_r w_r$, swapping
    $u < v$ changes only positions $u \dots v$, and

    $$\Delta \mathrm{ERR} = (R_v - R_u)\Big(w_u - \frac{C_v - C_{u+1} + w_v}{1 - R_u}\Big).$$

    O(1) per pair after O(n) prefix sums and products; $1 - R$ is computed as
    $2^{-l_{\max}} + (1 - 2^{l - l_{\max}})$, exact for integer labels.
    ``l_max`` defaults to the largest label of each query.
    """
    n = labels.shape[-1]
    l_max = labels.max(axis=-1, initial=0.0, keepdims=True) if l_max is None else l_max
    stop = np.exp2(labels - l_max) - np.exp2(-l_max)  # (..., n) R, the chance the user stops here
    go_on = np.exp2(-l_max) + (1.0 - np.exp2(labels - l_max))  # (..., n) 1 - R without cancellation
    reach = _shift_right(np.cumprod(go_on, axis=-1), 1.0)  # (..., n) P_t
    t = np.arange(n)
    weight = np.where(t < (n if k is None else k), reach / (t + 1), 0.0)  # (..., n) w_t
    err_term = stop * weight  # (..., n) ERR = sum of err_term
    err_above = _sum_above(err_term)  # (..., n) C_t
    u, v = _upper_lower(a, n)  # (m, n) each: the higher and the lower position of each pair
    between = err_above[..., v] - err_above[..., u] - err_term[..., u]  # (..., m, n) C_v - C_{u+1}
    delta = np.abs(stop[..., v] - stop[..., u]) * (weight[..., u] - (between + weight[..., v])
                                                   / go_on[..., u])  # (..., m, n)
    return delta  # 0 where u == v: R_v - R_u = 0


def _discounts(n, k):
    """NDCG@k discounts of positions 0..n-1: 1/log2(2 + t) for t < k, 0 beyond."""
    t = np.arange(n)
    return np.where(t < (n if k is None else k), 1.0 / np.log2(t + 2.0), 0.0)


def _sum_above(x):
    """``x`` summed over the positions above each position (last axis): [0, x0, x0 + x1, ...]."""
    return _shift_right(np.cumsum(x, axis=-1), 0.0)


def _shift_right(x, first):
    """``x`` moved one position down its last axis, ``first`` in front: [first, x0, ..., x_{n-2}]."""
    return np.concatenate((np.full(x.shape[:-1] + (1,), first), x[..., :-1]), axis=-1)


def _upper_lower(a, n):
    """For positions ``a`` (shape (m,)) against every position: the pair's higher and lower position, (m, n) each.

    The swap formulas are written for $u < v$; a swap is the same change either way.
    """
    b = np.arange(n)  # (n,)
    return np.minimum.outer(a, b), np.maximum.outer(a, b)


def _norm_scale(total):
    """LightGBM's per-query scale log2(1 + S) / S of ``lambdarank_norm`` (1 where S = 0); (n_batch,)."""
    positive = total > 0.0  # (n_batch,)
    return np.where(positive, np.log2(1.0 + total) / np.where(positive, total, 1.0), 1.0)

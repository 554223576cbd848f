r"""Ranking metrics per query, under the evaluation conventions of the tools people compare with.

Every ranking metric takes the labels ``y`` and ``scores`` of all rows and the
``query_offsets`` of their queries, and returns one float64 value per query, shape
``(n_queries,)``. :func:`evaluate` averages them over queries (every query counts once,
empty ones too). The pooled metrics, :func:`global_auc` and :func:`global_pauc_raw`, are the
exception: one float for the documents of all queries ranked together (Mohan 2010, Table 6.1).
Documents are ranked by descending score; how ties are broken, what a
label is worth and what a query without relevant documents scores is the
:class:`~twinrank.reference.evaluation.conventions.Convention`, one of the presets of
:mod:`twinrank.reference.evaluation.conventions` (``"lightgbm"`` by default) or any other.

Implementation: one stable ``np.lexsort`` by (query, -score) over all rows gives the
ranking; the position of each row inside its query is its row number minus the query's
start; per-query sums are ``np.bincount(query, weights=...)``. Running sums and
products inside queries (MeanNDCG, ERR) use a padded ``(n_queries, largest query)``
matrix, so they add in rank order exactly like a loop would (``_ranking``).

Also importable from here, as they always were: the conventions and input checks of
:mod:`twinrank.reference.evaluation.conventions` and the metric names of
:mod:`twinrank.reference.evaluation.metric_names`.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation._ranking import (
    cutoff,
    hits_so_far,
    ideal_gains,
    padded,
    per_query_sum,
    rank,
    tie_group_discounts,
)
from twinrank.reference.evaluation.conventions import (
    CONVENTIONS,
    DEFAULT_CONVENTION,
    GAIN_TABLES,
    Convention,
    Prepared,
    check_k,
    check_p,
    check_table_labels,
    discount,
    doc_ids_from_comments,
    err_grades,
    gain,
    get_convention,
    prepare,
    relevant,
    resolve_ties,
)
from twinrank.reference.evaluation.metric_names import Metric, _evaluate, _metric_from, parse_metric  # noqa: F401  (Metric re-exported)


def dcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
        ties=None) -> np.ndarray:
    r"""Discounted cumulative gain of each query's top ``k`` (Järvelin & Kekäläinen 2002).

    $$\mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} g(l_r)\, d(r)$$

    with $l_r$ the label at rank $r$, gain $g$ and discount $d$
    of the convention. ``k=None`` sums the whole list. Empty queries score 0.
    ``ties="expected"``: the expected DCG@k when tied scores are ordered uniformly at
    random (each member of a tie group gets the mean discount of the positions the
    group spans, 0 past ``k``; ``_ranking.tie_group_discounts``);
    ``"stable"``/``"trec"`` replace the convention's tie rule; None keeps it.
    """
    check_k(k)
    convention, expected = resolve_ties(convention, ties)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    terms = gain(p.y[r.order], p.convention) * _slot_discounts(p, r, k, expected)  # (n_rows,) 0 past k
    return per_query_sum(terms, r)


def ndcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None,
         ties=None) -> np.ndarray:
    r"""Normalised DCG of each query (Järvelin & Kekäläinen 2002).

    $$\mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}$$

    where IDCG@k is the DCG@k of the labels sorted by descending gain. Under
    ``ndcg_k_beyond_n="zero"`` a query with fewer than ``k`` documents scores 0 (this
    rule is applied first); a query with IDCG@k <= 0 scores ``no_relevant_value``.
    ``ties`` as in :func:`dcg` (``"expected"`` averages over random orders of tied
    documents; the ideal DCG does not depend on the scores).
    """
    check_k(k)
    convention, expected = resolve_ties(convention, ties)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    c, top_k = p.convention, cutoff(k, r)
    discounts = discount(r.position + 1, c)  # (n_rows,)
    g = gain(p.y, c)  # (n_rows,) input order
    actual = per_query_sum(g[r.order] * _slot_discounts(p, r, k, expected), r)
    ideal = per_query_sum(np.where(top_k, ideal_gains(g, r) * discounts, 0.0), r)
    out = np.where(ideal > 0, actual / np.where(ideal > 0, ideal, 1.0), c.no_relevant_value)
    if c.ndcg_k_beyond_n == "zero" and k is not None:
        out[r.sizes < k] = 0.0
    return out


def _slot_discounts(p: Prepared, r, k, expected: bool) -> np.ndarray:
    """Discount of each ranked slot (n_rows,), 0 past ``k``; averaged over tie groups when ``expected``."""
    discounts = np.where(cutoff(k, r), discount(r.position + 1, p.convention), 0.0)
    return tie_group_discounts(discounts, p.scores, r) if expected else discounts


def mean_ndcg(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""LETOR's MeanNDCG: the mean of NDCG@1 .. NDCG@n of each query (Qin & Liu 2013, LETOR 4.0).

    $$\mathrm{MeanNDCG} = \frac{1}{n} \sum_{k=1}^{n} \mathrm{NDCG@k}$$

    A query without a document of positive gain (or without documents) scores
    ``no_relevant_value``. Memory: one ``(n_queries, largest query)`` matrix.
    """
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    c = p.convention
    discounts = discount(r.position + 1, c)  # (n_rows,)
    g = gain(p.y, c)
    dcg_at = np.cumsum(padded(g[r.order] * discounts, r, 0.0), axis=1)[r.query, r.position]  # (n_rows,)
    ideal_at = np.cumsum(padded(ideal_gains(g, r) * discounts, r, 0.0), axis=1)[r.query, r.position]
    ndcg_at = np.where(ideal_at > 0, dcg_at / np.where(ideal_at > 0, ideal_at, 1.0), c.no_relevant_value)
    return np.where(r.sizes > 0, per_query_sum(ndcg_at, r) / np.maximum(r.sizes, 1), c.no_relevant_value)


def average_precision(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                      doc_ids=None) -> np.ndarray:
    r"""Average precision of each query's top ``k`` (MAP is its mean over queries).

    $$\mathrm{AP@k} = \frac{1}{Z} \sum_{r \le \min(k,n),\ \mathrm{rel}_r} \mathrm{P@r}$$

    with $Z = R$, the number of relevant documents of the query, or
    $Z = \min(k, R)$ under ``ap_normalizer="min_k_relevant"`` (LightGBM).
    ``k=None`` is the whole list. $Z = 0$ scores ``no_relevant_value``.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    c = p.convention
    rel = relevant(p.y[r.order], c)  # (n_rows,) ranked order
    hits = hits_so_far(rel, r)  # (n_rows,)
    summed = per_query_sum(np.where(rel & cutoff(k, r), hits / (r.position + 1), 0.0), r)
    n_relevant = per_query_sum(rel.astype(np.float64), r)
    z = n_relevant if (k is None or c.ap_normalizer == "relevant") else np.minimum(n_relevant, k)
    return np.where(z > 0, summed / np.where(z > 0, z, 1.0), c.no_relevant_value)


def precision(y, scores, query_offsets, k, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Precision at ``k``: the fraction of relevant documents in each query's top ``k``.

    $$\mathrm{P@k} = \frac{1}{D} \sum_{r=1}^{\min(k,n)} \mathrm{rel}_r$$

    with $D = k$, or $D = \min(k, n)$ under ``precision_k_beyond_n="n"``
    (RankLib). An empty query scores 0.
    """
    if k is None:
        raise ParameterError("precision needs a cutoff k (an integer >= 1)")
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    rel = relevant(p.y[r.order], p.convention) & cutoff(k, r)
    denominator = np.full(len(r.sizes), float(k)) if p.convention.precision_k_beyond_n == "k" \
        else np.minimum(r.sizes, k).astype(np.float64)
    return per_query_sum(rel.astype(np.float64), r) / np.maximum(denominator, 1.0)


def err(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Expected reciprocal rank of each query's top ``k`` (Chapelle, Metzler, Zhang & Grinspan 2009).

    $$\mathrm{ERR@k} = \sum_{r=1}^{\min(k,n)} \frac{1}{r}\, R_r \prod_{i<r} (1 - R_i),
    \qquad R_r = \frac{2^{l_r} - 1}{2^{l_{max}}}$$

    the probability that the user, scanning down and stopping at document $i$ with
    probability $R_i$, stops at rank $r$, weighted by $1/r$.
    $l_{max}$ is ``convention.err_max_label``, or the largest label in ``y``.
    Empty queries and queries of zero labels score 0. Memory: one ``(n_queries, largest query)`` matrix.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    stop = err_grades(p.y, p.convention)[r.order]  # (n_rows,) R at each ranked slot
    go_on = np.cumprod(padded(1.0 - stop, r, 1.0), axis=1)  # (n_queries, max_size) prod_{i<=r}(1-R_i)
    reach = np.hstack([np.ones((len(r.sizes), 1)), go_on[:, :-1]])[r.query, r.position]  # prod_{i<r}
    return per_query_sum(np.where(cutoff(k, r), reach * stop / (r.position + 1), 0.0), r)


def reciprocal_rank(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                    doc_ids=None) -> np.ndarray:
    r"""Reciprocal rank of the first relevant document in each query's top ``k`` (MRR is the mean).

    $$\mathrm{RR} = 1 / r^*, \qquad r^* = \min\{r : \mathrm{rel}_r\}$$

    0 when the query has a relevant document but none in the top ``k`` (``k=None``:
    the whole list); ``no_relevant_value`` when it has none at all (or no documents),
    as NDCG and AP score such a query: the best possible RR of any query with a
    relevant document is 1, so RR is normalised like them.
    RankLib returns this as a float32; here it is float64.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    rel = relevant(p.y[r.order], p.convention)
    first = rel & (hits_so_far(rel, r) == 1) & cutoff(k, r)  # (n_rows,)
    found = per_query_sum(np.where(first, 1.0 / (r.position + 1), 0.0), r)
    n_relevant = per_query_sum(rel.astype(np.float64), r)  # (n_queries,)
    return np.where(n_relevant > 0, found, p.convention.no_relevant_value)


def auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Area under the ROC curve of each query's ranking (Mann–Whitney statistic of the ranks).

    $$\mathrm{AUC} = \frac{1}{P N} \sum_{j \text{ irrelevant}} \#\{\text{relevant ranked above } j\}$$

    with $P$ relevant and $N$ irrelevant documents. Tied scores are first
    ranked by the convention's tie rule (so a tie never counts 1/2). $PN = 0$ scores
    ``no_relevant_value``.
    """
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(p)
    rel = relevant(p.y[r.order], p.convention)
    above = hits_so_far(rel, r)  # (n_rows,) relevant at or above; for an irrelevant slot, above it
    n_pos = per_query_sum(rel.astype(np.float64), r)
    pairs = n_pos * (r.sizes - n_pos)  # (n_queries,)
    ordered = per_query_sum(np.where(rel, 0.0, above), r)
    return np.where(pairs > 0, ordered / np.where(pairs > 0, pairs, 1.0), p.convention.no_relevant_value)


def pauc(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Standardised partial AUC over false-positive rates $[0, p]$ of each query (McClish 1989).

    The ranking's ROC curve is a staircase: the $m$-th irrelevant document moves the
    false-positive rate from $(m-1)/N$ to $m/N$ at true-positive rate
    (relevant above it)/$P$. Its area over $[0, p]$ is $A$, standardised
    as in McClish (1989, *Medical Decision Making* 9(3):190-195) and scikit-learn's
    ``roc_auc_score(max_fpr=p)``:

    $$\mathrm{pAUC} = \frac{1}{2}\left(1 + \frac{A - p^2/2}{p - p^2/2}\right)$$

    so 0.5 is a random ranking, 1 a perfect one, and ``p=1`` gives the AUC. Ties are
    ranked by the convention's tie rule. $PN = 0$ scores ``no_relevant_value``.
    """
    check_p(p, "pauc")
    prep = prepare(y, scores, query_offsets, convention, doc_ids)
    r = rank(prep)
    rel = relevant(prep.y[r.order], prep.convention)
    above = hits_so_far(rel, r)  # (n_rows,)
    n_pos = per_query_sum(rel.astype(np.float64), r)  # (n_queries,)
    n_neg = r.sizes - n_pos  # (n_queries,)
    pos_of, neg_of = np.maximum(n_pos, 1.0)[r.query], np.maximum(n_neg, 1.0)[r.query]  # (n_rows,)
    m = r.position + 1 - above  # (n_rows,) index of an irrelevant slot among the irrelevant ones
    width = np.maximum(np.minimum(m / neg_of, p) - (m - 1) / neg_of, 0.0)  # (n_rows,) FPR step inside [0, p]
    area = per_query_sum(np.where(rel, 0.0, above / pos_of * width), r)
    standardised = 0.5 * (1.0 + (area - p * p / 2.0) / (p - p * p / 2.0))
    return np.where(n_pos * n_neg > 0, standardised, prep.convention.no_relevant_value)


# ---------------------------------------------------------------- all documents pooled


def global_auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> float:
    r"""Area under the ROC curve of all documents pooled into one ranking (Mohan 2010, Table 6.1).

    One number for the whole set, not a mean over queries (that is :func:`auc`): every
    (relevant, irrelevant) pair counts, whatever the queries of its two documents. A tie counts
    1/2, as in the Mann–Whitney statistic (Mann & Whitney 1947; Hanley & McNeil 1982) and
    scikit-learn's ``roc_auc_score``:

    $$\mathrm{AUC} = \frac{1}{P N} \sum_{i \text{ relevant}} \sum_{j \text{ irrelevant}}
      \Big([s_i > s_j] + \tfrac{1}{2} [s_i = s_j]\Big)
      = \frac{1}{P N} \sum_{g} b_g \Big(A_g + \frac{a_g}{2}\Big)$$

    over the groups $g$ of equal score, highest first, with $a_g$ relevant and $b_g$
    irrelevant documents and $A_g$ relevant documents in the groups above $g$; $P$ and $N$
    count all relevant and irrelevant documents. Relevant is the convention's
    (:func:`relevant`); its tie rule is not used (``doc_ids`` neither), its float32 rounding
    is. The sum is of halves of integers, exact below $10^8$ documents. $PN = 0$ (no
    relevant or no irrelevant document at all) scores ``no_relevant_value``.
    ``query_offsets`` is checked as by every metric.
    """
    a, b, c = _score_groups(y, scores, query_offsets, convention)
    above = np.cumsum(a) - a  # (n_groups,) relevant documents in the groups above
    pairs = a.sum() * b.sum()
    return float(np.sum(b * (above + a / 2)) / pairs) if pairs > 0 else float(c.no_relevant_value)


def global_pauc_raw(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> float:
    r"""Raw partial area under the ROC curve of all documents pooled, over FPR $[0, p]$ (Mohan 2010, Table 6.1).

    The area itself, not standardised (that is :func:`pauc`, per query, McClish 1989): between
    0 and $p$, and $p^2/2$ for a random ranking. The ROC curve of the pooled ranking
    (:func:`global_auc`) joins the points $(B_g/N, A_g/P)$, $B_g$ irrelevant and $A_g$
    relevant documents in the groups of equal score above group $g$, by straight segments:
    a group of $a_g$ relevant and $b_g$ irrelevant tied documents is a diagonal, its
    documents in every order at once (ties count 1/2, as in :func:`global_auc`). Group $g$'s
    segment spans FPR $[\ell_g, u_g] = [B_g/N, (B_g + b_g)/N]$; the part inside $[0, p]$,
    of width $w_g = \max(0, \min(u_g, p) - \ell_g)$, is a trapezoid:

    $$\mathrm{pAUC}_{\mathrm{raw}}(p) = \sum_g \frac{w_g}{P}
      \Big(A_g + \frac{w_g N}{b_g} \cdot \frac{a_g}{2}\Big)$$

    ($w_g N / b_g$ is the fraction of the segment kept), added group by group from the top.
    ``p=1`` gives :func:`global_auc` (up to rounding), scikit-learn's
    ``roc_auc_score(max_fpr=p)`` is its McClish standardisation. $PN = 0$ scores
    ``no_relevant_value`` times $p$, the same fraction of the best value as the normalised metrics.
    """
    check_p(p, "global_pauc_raw")
    a, b, c = _score_groups(y, scores, query_offsets, convention)
    n_pos, n_neg = a.sum(), b.sum()
    if n_pos * n_neg == 0:
        return float(c.no_relevant_value * p)
    above, left = np.cumsum(a) - a, np.cumsum(b) - b  # (n_groups,) A_g, B_g: in the groups above
    width = np.maximum(np.minimum((left + b) / n_neg, p) - left / n_neg, 0.0)  # (n_groups,) w_g
    areas = width * (above + (width * n_neg / np.maximum(b, 1.0)) * a / 2) / n_pos  # (n_groups,)
    return float(np.cumsum(areas)[-1])  # added group by group, as a loop (np.sum adds pairwise)


def _score_groups(y, scores, query_offsets, convention) -> tuple[np.ndarray, np.ndarray, Convention]:
    """Relevant and irrelevant documents (float64 counts, (n_groups,) each) of every group of equal
    score over all rows, highest score first, and the convention. Ties count 1/2: no tie rule."""
    p = prepare(y, scores, query_offsets, resolve_ties(convention, "stable")[0])
    rel = relevant(p.y, p.convention).astype(np.float64)  # (n_rows,) 1 relevant, 0 irrelevant
    group = np.unique(-p.scores, return_inverse=True)[1].ravel()  # (n_rows,) 0 = the highest score
    n_groups = int(group.max(initial=-1)) + 1
    return (np.bincount(group, weights=rel, minlength=n_groups),
            np.bincount(group, weights=1.0 - rel, minlength=n_groups), p.convention)


def rmse(y, scores) -> float:
    r"""Root mean squared error over all rows, $\sqrt{\frac{1}{n}\sum_i (s_i - y_i)^2}$."""
    y, scores = np.asarray(y, dtype=np.float64), np.asarray(scores, dtype=np.float64)
    if y.shape != scores.shape or y.ndim != 1 or len(y) == 0:
        raise ParameterError(f"rmse needs non-empty 1-D y and scores of one length, got {y.shape} and {scores.shape}")
    return float(np.sqrt(np.mean((scores - y) ** 2)))


def rmse_per_query(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    """Root mean squared error inside each query; 0 for an empty query (convention unused)."""
    p = prepare(y, scores, query_offsets, DEFAULT_CONVENTION)
    sizes = np.diff(p.query_offsets)
    query = np.repeat(np.arange(len(sizes)), sizes)
    sse = np.bincount(query, weights=(p.scores - p.y) ** 2, minlength=len(sizes))
    return np.sqrt(sse / np.maximum(sizes, 1))


# ---------------------------------------------------------------- by name


def metric_by_name(name: str) -> Metric:
    """The per-query metric named ``name`` (see :func:`parse_metric`), bound to its cutoff."""
    return _metric_from(_FUNCTIONS, name)


def evaluate(metrics, y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None,
             per_query=False) -> dict:
    """Evaluate named metrics: ``{"ndcg@10": mean over queries, ...}``.

    ``metrics`` is a name or a list of names (:func:`parse_metric`). Every query counts
    once in the mean, empty queries included; ``rmse`` is over all rows, not a mean of
    queries. ``per_query=True`` returns the per-query arrays (``rmse``: per-query RMSE).
    """
    return _evaluate(_FUNCTIONS, metrics, y, scores, query_offsets, convention=convention,
                     doc_ids=doc_ids, per_query=per_query)


_FUNCTIONS = {f.__name__: f for f in (dcg, ndcg, mean_ndcg, average_precision, precision, err,
                                      reciprocal_rank, auc, pauc, global_auc, global_pauc_raw, rmse,
                                      rmse_per_query)}

r"""Ranking metrics per query, under the evaluation conventions of the tools people compare with.

Every ranking metric takes the labels ``y`` and ``scores`` of all rows and the
``query_offsets`` of their queries, and returns one float64 value per query, shape
``(n_queries,)``. :func:`evaluate` averages them over queries (every query counts once,
empty ones too). Documents are ranked by descending score; how ties are broken, what a
label is worth and what a query without relevant documents scores is the
:class:`Convention`. Four presets reproduce the peer tools (checked against them, see
``tests/test_metrics_oracles.py``):

==========  ==========  ================  =======  =========  ===========  ============  ===============
preset      gain        discount          k > n    no rel.    relevant     P@k divides   AP@k divides
==========  ==========  ================  =======  =========  ===========  ============  ===============
lightgbm    2^l - 1     1/log2(1+r)       cut      1          l > 0.5      min(k, n)     min(k, R)
ranklib     2^l - 1     1/log2(1+r)       cut      0          l > 0        min(k, n)     R
letor       0, 1, 3     1/log2(max(r,2))  **0**    0          l in {1,2}   k             R
trec        l           1/log2(1+r)       cut      0          l >= 1       k             R
==========  ==========  ================  =======  =========  ===========  ============  ===============

(``xgboost`` is an alias of ``lightgbm``: LightGBM's ``ndcg@k``/``map@k`` and XGBoost's
``ndcg@k``/``map@k``/``pre@k`` agree with it; XGBoost's ``ndcg``/``map`` without ``@k`` mean
``@32``, so name the cutoff. ``letor`` is LETOR 4.0's ``Eval-Score-4.0.pl``;
``trec`` is trec_eval's ``ndcg_cut``/``P``/``map``/``recip_rank``.) All rank ties by input
order (a stable sort by descending score) except ``trec``, which ranks tied scores by
document id, descending, after rounding scores to float32 as trec_eval reads them.
The default convention is ``"lightgbm"``, the one the boosting loop and the benchmarks
report next to LightGBM and XGBoost.

Implementation: one stable ``np.lexsort`` by (query, -score) over all rows gives the
ranking; the position of each row inside its query is its row number minus the query's
start; per-query sums are ``np.bincount(query, weights=...)``. Running sums and
products inside queries (MeanNDCG, ERR) use a padded ``(n_queries, largest query)``
matrix, so they add in rank order exactly like a loop would.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np

from .errors import ParameterError

DEFAULT_CONVENTION = "lightgbm"


@dataclass(frozen=True)
class Convention:
    r"""Every knob of an evaluation convention (presets in :data:`CONVENTIONS`).

    Parameters
    ----------
    gain : {"exp2", "linear", "letor"}
        Gain of label :math:`l`: ``exp2`` is :math:`2^l - 1` (Burges et al. 2005),
        ``linear`` is :math:`l` (trec_eval), ``letor`` is the table
        :math:`\{0: 0, 1: 1, 2: 3\}` of Eval-Score-4.0.pl, 0 for any other label.
    discount : {"log2", "jarvelin"}
        Discount at rank :math:`r \ge 1`: ``log2`` is :math:`1/\log_2(1 + r)`;
        ``jarvelin`` is Järvelin & Kekäläinen's (2002) original with base :math:`b = 2`,
        :math:`1` for :math:`r \le 2` and :math:`1/\log_2 r` after (LETOR's Eval-Score;
        also trec_eval's ``ndcg`` in its 2008 9.0 code, since changed to ``log2``).
    ndcg_k_beyond_n : {"cut", "zero"}
        NDCG@k of a query with fewer than k documents: ``cut`` is NDCG@n; ``zero`` is 0
        (Eval-Score-4.0.pl's NDCG@k does not exist for such a query and counts as 0).
    no_relevant_value : float
        Value of a normalised metric whose normaliser is zero: NDCG, MeanNDCG and AP of a
        query without a document of positive gain / relevant document, AUC and pAUC of a
        query without a relevant or without an irrelevant document. Empty queries too.
        DCG, P@k, RR and ERR have no normaliser and are 0 on such queries.
    relevance_threshold : float
        A document is relevant for the binary metrics (AP, P@k, RR, AUC, pAUC) when its
        label is ``> relevance_threshold`` and ``<= max_relevant_label``.
    max_relevant_label : float
        Upper end of the relevant labels (Eval-Score-4.0.pl counts only labels 1 and 2).
    precision_k_beyond_n : {"k", "n"}
        P@k of a query with fewer than k documents divides by ``k`` (trec_eval, LETOR) or
        by ``n`` (RankLib, XGBoost's ``pre@k``).
    ap_normalizer : {"relevant", "min_k_relevant"}
        AP@k divides by R, the number of relevant documents of the query (RankLib, LETOR,
        trec_eval), or by :math:`\min(k, R)` (LightGBM's ``map@k``).
    err_max_label : float or None
        :math:`l_{max}` of ERR's :math:`R(l) = (2^l - 1)/2^{l_{max}}`; ``None`` takes the
        largest label of ``y`` (all queries of the call). RankLib fixes it at 4.
    ties : {"stable", "trec"}
        ``stable``: tied scores keep input order. ``trec``: tied scores are ranked by
        document id, descending string order (trec_eval's ``comp_sim_docno``); needs ``doc_ids``.
    scores_float32 : bool
        Round scores to float32 before ranking (trec_eval stores scores as ``float``).
    """

    gain: str = "exp2"
    discount: str = "log2"
    ndcg_k_beyond_n: str = "cut"
    no_relevant_value: float = 1.0
    relevance_threshold: float = 0.5
    max_relevant_label: float = math.inf
    precision_k_beyond_n: str = "n"
    ap_normalizer: str = "min_k_relevant"
    err_max_label: float | None = None
    ties: str = "stable"
    scores_float32: bool = False

    def __post_init__(self):
        for name, choices in _CHOICES.items():
            if getattr(self, name) not in choices:
                raise ParameterError(f"Convention.{name} must be one of {choices}, got {getattr(self, name)!r}")
        for name in ("no_relevant_value", "relevance_threshold"):
            if not math.isfinite(getattr(self, name)):
                raise ParameterError(f"Convention.{name} must be finite, got {getattr(self, name)!r}")
        if self.err_max_label is not None and not math.isfinite(self.err_max_label):
            raise ParameterError(f"Convention.err_max_label must be finite or None, got {self.err_max_label!r}")


_CHOICES = {
    "gain": ("exp2", "linear", "letor"),
    "discount": ("log2", "jarvelin"),
    "ndcg_k_beyond_n": ("cut", "zero"),
    "precision_k_beyond_n": ("k", "n"),
    "ap_normalizer": ("relevant", "min_k_relevant"),
    "ties": ("stable", "trec"),
}

_LIGHTGBM = Convention()
CONVENTIONS: dict[str, Convention] = {
    "lightgbm": _LIGHTGBM,
    "xgboost": _LIGHTGBM,
    "ranklib": Convention(no_relevant_value=0.0, relevance_threshold=0.0, ap_normalizer="relevant",
                          err_max_label=4.0),
    "letor": Convention(gain="letor", discount="jarvelin", ndcg_k_beyond_n="zero", no_relevant_value=0.0,
                        max_relevant_label=2.0, precision_k_beyond_n="k", ap_normalizer="relevant"),
    "trec": Convention(gain="linear", no_relevant_value=0.0, precision_k_beyond_n="k", ap_normalizer="relevant",
                       ties="trec", scores_float32=True),
}


def get_convention(convention: str | Convention) -> Convention:
    """The :class:`Convention` named by a preset name, or the given one."""
    if isinstance(convention, Convention):
        return convention
    if convention not in CONVENTIONS:
        raise ParameterError(f"unknown convention {convention!r}; presets are {sorted(CONVENTIONS)}")
    return CONVENTIONS[convention]


def gain(labels: np.ndarray, convention: str | Convention = DEFAULT_CONVENTION) -> np.ndarray:
    """The gain of each label under the convention (see :class:`Convention`)."""
    c, labels = get_convention(convention), np.asarray(labels, dtype=np.float64)
    if c.gain == "exp2":
        return np.exp2(labels) - 1.0
    if c.gain == "linear":
        return labels.copy()
    return np.where(labels == 1.0, 1.0, np.where(labels == 2.0, 3.0, 0.0))


def discount(ranks: np.ndarray, convention: str | Convention = DEFAULT_CONVENTION) -> np.ndarray:
    """The discount of each 1-based rank under the convention (see :class:`Convention`)."""
    c, ranks = get_convention(convention), np.asarray(ranks, dtype=np.float64)
    if c.discount == "log2":
        return 1.0 / np.log2(1.0 + ranks)
    return 1.0 / np.log2(np.maximum(ranks, 2.0))


def relevant(labels: np.ndarray, convention: str | Convention = DEFAULT_CONVENTION) -> np.ndarray:
    """Whether each label counts as relevant for the binary metrics (bool array)."""
    c, labels = get_convention(convention), np.asarray(labels, dtype=np.float64)
    return (labels > c.relevance_threshold) & (labels <= c.max_relevant_label)


def err_grades(labels: np.ndarray, convention: str | Convention = DEFAULT_CONVENTION) -> np.ndarray:
    r"""ERR's stopping probability :math:`R(l) = (2^l - 1) / 2^{l_{max}}` of each label.

    :math:`l_{max}` is ``convention.err_max_label``, or the largest of ``labels`` when that
    is None. A label above a fixed :math:`l_{max}` would make :math:`R > 1` and is an error.
    """
    c, labels = get_convention(convention), np.asarray(labels, dtype=np.float64)
    top = c.err_max_label if c.err_max_label is not None else (labels.max() if len(labels) else 0.0)
    if len(labels) and labels.max() > top:
        raise ParameterError(f"label {labels.max()} exceeds the convention's err_max_label {top}")
    return (np.exp2(labels) - 1.0) / np.exp2(top)


def doc_ids_from_comments(comments) -> np.ndarray:
    """The ``docid = X`` of each row's comment (LETOR files), as an array of str.

    Raises ParameterError naming the first row whose comment has no ``docid``.
    """
    comments = [] if comments is None else list(comments)
    found = [re.search(r"docid\s*=\s*(\S+)", c or "") for c in comments]
    missing = [i for i, m in enumerate(found) if m is None]
    if missing:
        raise ParameterError(f"row {missing[0]} has no 'docid = ...' in its comment {comments[missing[0]]!r}")
    return np.array([m.group(1) for m in found], dtype=str)


class Prepared(NamedTuple):
    """Validated inputs of a metric call, shared by both twins."""

    y: np.ndarray  # (n_rows,) float64
    scores: np.ndarray  # (n_rows,) float64, float32-rounded if the convention says so
    query_offsets: np.ndarray  # (n_queries + 1,) int64
    convention: Convention
    tie_keys: np.ndarray | None  # (n_rows,) int64 rank of each doc id in string order; None unless trec ties


def prepare(y, scores, query_offsets, convention, doc_ids=None) -> Prepared:
    """Check and convert the inputs every metric takes (both twins call this)."""
    c = get_convention(convention)
    y = np.ascontiguousarray(y, dtype=np.float64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    if y.ndim != 1 or scores.shape != y.shape:
        raise ParameterError(f"y and scores must be 1-D of the same length, got {y.shape} and {scores.shape}")
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(y) \
            or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"query_offsets must start at 0, end at n_rows={len(y)} and never decrease")
    if np.isnan(y).any():
        raise ParameterError(f"y[{np.flatnonzero(np.isnan(y))[0]}] is NaN")
    if np.isnan(scores).any():
        raise ParameterError(f"scores[{np.flatnonzero(np.isnan(scores))[0]}] is NaN; a NaN score cannot be ranked")
    if c.scores_float32:
        scores = scores.astype(np.float32).astype(np.float64)
    return Prepared(y, scores, offsets, c, _tie_keys(c, doc_ids, len(y)))


def _tie_keys(c: Convention, doc_ids, n_rows: int) -> np.ndarray | None:
    if c.ties == "stable":
        return None
    if doc_ids is None:
        raise ParameterError("the 'trec' tie rule ranks tied scores by document id: pass doc_ids")
    doc_ids = np.asarray(doc_ids).astype(str)
    if doc_ids.shape != (n_rows,):
        raise ParameterError(f"doc_ids has shape {doc_ids.shape}, expected ({n_rows},)")
    # code point order of str == byte order of UTF-8 == C's strcmp
    return np.unique(doc_ids, return_inverse=True)[1].astype(np.int64).ravel()


def check_k(k, name="k") -> None:
    """``k`` is None (the whole list) or an integer >= 1."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"{name} must be an integer >= 1 or None, got {k!r}")


# ---------------------------------------------------------------- ranking


class _Ranked(NamedTuple):
    """Rows in ranked order: query by query, best first."""

    order: np.ndarray  # (n_rows,) row index at each ranked slot
    query: np.ndarray  # (n_rows,) query of each slot (ranked order keeps queries in place)
    position: np.ndarray  # (n_rows,) 0-based position of each slot inside its query
    sizes: np.ndarray  # (n_queries,)


def _rank(p: Prepared) -> _Ranked:
    """One stable lexsort over all rows: by query, then descending score, then the tie rule."""
    sizes = np.diff(p.query_offsets)  # (n_queries,)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    if p.tie_keys is None:
        order = np.lexsort((-p.scores, query))
    else:
        order = np.lexsort((-p.tie_keys, -p.scores, query))
    position = np.arange(len(query)) - np.repeat(p.query_offsets[:-1], sizes)  # (n_rows,)
    return _Ranked(order, query, position, sizes)


def _per_query_sum(values: np.ndarray, r: _Ranked) -> np.ndarray:
    """Sum of ``values`` (ranked order) inside each query, added in rank order."""
    return np.bincount(r.query, weights=values, minlength=len(r.sizes))


def _padded(values: np.ndarray, r: _Ranked, fill: float) -> np.ndarray:
    """``values`` (ranked order) as a ``(n_queries, largest query)`` matrix, ``fill`` after each query's end."""
    out = np.full((len(r.sizes), int(r.sizes.max(initial=0))), fill)  # (n_queries, max_size)
    out[r.query, r.position] = values
    return out


def _cutoff(k, r: _Ranked) -> np.ndarray:
    """Mask of the ranked slots inside the top ``k`` (all slots when k is None)."""
    return np.ones(len(r.query), bool) if k is None else r.position < k


def _ideal_gains(gains: np.ndarray, r: _Ranked) -> np.ndarray:
    """Gains (input order) sorted descending inside each query: the ideal ranking's gains."""
    return gains[np.lexsort((-gains, r.query))]


# ---------------------------------------------------------------- metrics


def dcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Discounted cumulative gain of each query's top ``k`` (Järvelin & Kekäläinen 2002).

    .. math:: \mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} g(l_r)\, d(r)

    with :math:`l_r` the label at rank :math:`r`, gain :math:`g` and discount :math:`d`
    of the convention. ``k=None`` sums the whole list. Empty queries score 0.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    terms = gain(p.y[r.order], p.convention) * discount(r.position + 1, p.convention)  # (n_rows,)
    return _per_query_sum(np.where(_cutoff(k, r), terms, 0.0), r)


def ndcg(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Normalised DCG of each query (Järvelin & Kekäläinen 2002).

    .. math:: \mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}

    where IDCG@k is the DCG@k of the labels sorted by descending gain. Under
    ``ndcg_k_beyond_n="zero"`` a query with fewer than ``k`` documents scores 0 (this
    rule is applied first); a query with IDCG@k <= 0 scores ``no_relevant_value``.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    c, top_k = p.convention, _cutoff(k, r)
    discounts = discount(r.position + 1, c)  # (n_rows,)
    g = gain(p.y, c)  # (n_rows,) input order
    actual = _per_query_sum(np.where(top_k, g[r.order] * discounts, 0.0), r)
    ideal = _per_query_sum(np.where(top_k, _ideal_gains(g, r) * discounts, 0.0), r)
    out = np.where(ideal > 0, actual / np.where(ideal > 0, ideal, 1.0), c.no_relevant_value)
    if c.ndcg_k_beyond_n == "zero" and k is not None:
        out[r.sizes < k] = 0.0
    return out


def mean_ndcg(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""LETOR's MeanNDCG: the mean of NDCG@1 .. NDCG@n of each query (Qin & Liu 2013, LETOR 4.0).

    .. math:: \mathrm{MeanNDCG} = \frac{1}{n} \sum_{k=1}^{n} \mathrm{NDCG@k}

    A query without a document of positive gain (or without documents) scores
    ``no_relevant_value``. Memory: one ``(n_queries, largest query)`` matrix.
    """
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    c = p.convention
    discounts = discount(r.position + 1, c)  # (n_rows,)
    g = gain(p.y, c)
    dcg_at = np.cumsum(_padded(g[r.order] * discounts, r, 0.0), axis=1)[r.query, r.position]  # (n_rows,)
    ideal_at = np.cumsum(_padded(_ideal_gains(g, r) * discounts, r, 0.0), axis=1)[r.query, r.position]
    ndcg_at = np.where(ideal_at > 0, dcg_at / np.where(ideal_at > 0, ideal_at, 1.0), c.no_relevant_value)
    return np.where(r.sizes > 0, _per_query_sum(ndcg_at, r) / np.maximum(r.sizes, 1), c.no_relevant_value)


def average_precision(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                      doc_ids=None) -> np.ndarray:
    r"""Average precision of each query's top ``k`` (MAP is its mean over queries).

    .. math:: \mathrm{AP@k} = \frac{1}{Z} \sum_{r \le \min(k,n),\ \mathrm{rel}_r} \mathrm{P@r}

    with :math:`Z = R`, the number of relevant documents of the query, or
    :math:`Z = \min(k, R)` under ``ap_normalizer="min_k_relevant"`` (LightGBM).
    ``k=None`` is the whole list. :math:`Z = 0` scores ``no_relevant_value``.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    c = p.convention
    rel = relevant(p.y[r.order], c)  # (n_rows,) ranked order
    hits = _hits_so_far(rel, r)  # (n_rows,)
    summed = _per_query_sum(np.where(rel & _cutoff(k, r), hits / (r.position + 1), 0.0), r)
    n_relevant = _per_query_sum(rel.astype(np.float64), r)
    z = n_relevant if (k is None or c.ap_normalizer == "relevant") else np.minimum(n_relevant, k)
    return np.where(z > 0, summed / np.where(z > 0, z, 1.0), c.no_relevant_value)


def _hits_so_far(rel: np.ndarray, r: _Ranked) -> np.ndarray:
    """Relevant documents at or above each ranked slot, inside its query (exact integers)."""
    total = np.cumsum(rel)  # (n_rows,)
    before_query = np.r_[0, total][np.repeat(np.cumsum(r.sizes) - r.sizes, r.sizes)]  # (n_rows,)
    return total - before_query


def precision(y, scores, query_offsets, k, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Precision at ``k``: the fraction of relevant documents in each query's top ``k``.

    .. math:: \mathrm{P@k} = \frac{1}{D} \sum_{r=1}^{\min(k,n)} \mathrm{rel}_r

    with :math:`D = k`, or :math:`D = \min(k, n)` under ``precision_k_beyond_n="n"``
    (RankLib). An empty query scores 0.
    """
    if k is None:
        raise ParameterError("precision needs a cutoff k (an integer >= 1)")
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    rel = relevant(p.y[r.order], p.convention) & _cutoff(k, r)
    denominator = np.full(len(r.sizes), float(k)) if p.convention.precision_k_beyond_n == "k" \
        else np.minimum(r.sizes, k).astype(np.float64)
    return _per_query_sum(rel.astype(np.float64), r) / np.maximum(denominator, 1.0)


def err(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Expected reciprocal rank of each query's top ``k`` (Chapelle, Metzler, Zhang & Grinspan 2009).

    .. math:: \mathrm{ERR@k} = \sum_{r=1}^{\min(k,n)} \frac{1}{r}\, R_r \prod_{i<r} (1 - R_i),
              \qquad R_r = \frac{2^{l_r} - 1}{2^{l_{max}}}

    the probability that the user, scanning down and stopping at document :math:`i` with
    probability :math:`R_i`, stops at rank :math:`r`, weighted by :math:`1/r`.
    :math:`l_{max}` is ``convention.err_max_label``, or the largest label in ``y``.
    Empty queries and queries of zero labels score 0. Memory: one ``(n_queries, largest query)`` matrix.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    stop = err_grades(p.y, p.convention)[r.order]  # (n_rows,) R at each ranked slot
    go_on = np.cumprod(_padded(1.0 - stop, r, 1.0), axis=1)  # (n_queries, max_size) prod_{i<=r}(1-R_i)
    reach = np.hstack([np.ones((len(r.sizes), 1)), go_on[:, :-1]])[r.query, r.position]  # prod_{i<r}
    return _per_query_sum(np.where(_cutoff(k, r), reach * stop / (r.position + 1), 0.0), r)


def reciprocal_rank(y, scores, query_offsets, *, k=None, convention=DEFAULT_CONVENTION,
                    doc_ids=None) -> np.ndarray:
    r"""Reciprocal rank of the first relevant document in each query's top ``k`` (MRR is the mean).

    .. math:: \mathrm{RR} = 1 / r^*, \qquad r^* = \min\{r : \mathrm{rel}_r\}

    0 when no relevant document is in the top ``k`` (``k=None``: the whole list).
    RankLib returns this as a float32; here it is float64.
    """
    check_k(k)
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    rel = relevant(p.y[r.order], p.convention)
    first = rel & (_hits_so_far(rel, r) == 1) & _cutoff(k, r)  # (n_rows,)
    return _per_query_sum(np.where(first, 1.0 / (r.position + 1), 0.0), r)


def auc(y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Area under the ROC curve of each query's ranking (Mann–Whitney statistic of the ranks).

    .. math:: \mathrm{AUC} = \frac{1}{P N} \sum_{j \text{ irrelevant}} \#\{\text{relevant ranked above } j\}

    with :math:`P` relevant and :math:`N` irrelevant documents. Tied scores are first
    ranked by the convention's tie rule (so a tie never counts 1/2). :math:`PN = 0` scores
    ``no_relevant_value``.
    """
    p = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(p)
    rel = relevant(p.y[r.order], p.convention)
    above = _hits_so_far(rel, r)  # (n_rows,) relevant at or above; for an irrelevant slot, above it
    n_pos = _per_query_sum(rel.astype(np.float64), r)
    pairs = n_pos * (r.sizes - n_pos)  # (n_queries,)
    ordered = _per_query_sum(np.where(rel, 0.0, above), r)
    return np.where(pairs > 0, ordered / np.where(pairs > 0, pairs, 1.0), p.convention.no_relevant_value)


def pauc(y, scores, query_offsets, *, p=0.05, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
    r"""Standardised partial AUC over false-positive rates :math:`[0, p]` of each query (McClish 1989).

    The ranking's ROC curve is a staircase: the :math:`m`-th irrelevant document moves the
    false-positive rate from :math:`(m-1)/N` to :math:`m/N` at true-positive rate
    (relevant above it)/:math:`P`. Its area over :math:`[0, p]` is :math:`A`, standardised
    as in McClish (1989, *Medical Decision Making* 9(3):190-195) and scikit-learn's
    ``roc_auc_score(max_fpr=p)``:

    .. math:: \mathrm{pAUC} = \frac{1}{2}\left(1 + \frac{A - p^2/2}{p - p^2/2}\right)

    so 0.5 is a random ranking, 1 a perfect one, and ``p=1`` gives the AUC. Ties are
    ranked by the convention's tie rule. :math:`PN = 0` scores ``no_relevant_value``.
    """
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < p <= 1.0:
        raise ParameterError(f"pauc's p must be in (0, 1], got {p!r}")
    prep = prepare(y, scores, query_offsets, convention, doc_ids)
    r = _rank(prep)
    rel = relevant(prep.y[r.order], prep.convention)
    above = _hits_so_far(rel, r)  # (n_rows,)
    n_pos = _per_query_sum(rel.astype(np.float64), r)  # (n_queries,)
    n_neg = r.sizes - n_pos  # (n_queries,)
    pos_of, neg_of = np.maximum(n_pos, 1.0)[r.query], np.maximum(n_neg, 1.0)[r.query]  # (n_rows,)
    m = r.position + 1 - above  # (n_rows,) index of an irrelevant slot among the irrelevant ones
    width = np.maximum(np.minimum(m / neg_of, p) - (m - 1) / neg_of, 0.0)  # (n_rows,) FPR step inside [0, p]
    area = _per_query_sum(np.where(rel, 0.0, above / pos_of * width), r)
    standardised = 0.5 * (1.0 + (area - p * p / 2.0) / (p - p * p / 2.0))
    return np.where(n_pos * n_neg > 0, standardised, prep.convention.no_relevant_value)


def rmse(y, scores) -> float:
    r"""Root mean squared error over all rows, :math:`\sqrt{\frac{1}{n}\sum_i (s_i - y_i)^2}`."""
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


# ---------------------------------------------------------------- names and evaluate


_NAME = re.compile(r"^(?P<family>[a-z]+)(?:@(?P<arg>[0-9.eE+-]+))?$")
_FAMILIES = {  # family: (function name, argument name or None, argument required)
    "ndcg": ("ndcg", "k", False), "dcg": ("dcg", "k", False), "map": ("average_precision", "k", False),
    "p": ("precision", "k", True), "precision": ("precision", "k", True), "err": ("err", "k", False),
    "rr": ("reciprocal_rank", "k", False), "mrr": ("reciprocal_rank", "k", False),
    "auc": ("auc", None, False), "pauc": ("pauc", "p", False), "meanndcg": ("mean_ndcg", None, False),
    "rmse": ("rmse_per_query", None, False),
}


def parse_metric(name: str) -> tuple[str, dict]:
    """``"ndcg@10"`` -> ``("ndcg", {"k": 10})``: the per-query function's name and its arguments.

    Names: ``ndcg[@k] dcg[@k] map[@k] p@k err[@k] rr[@k] mrr[@k] auc pauc[@p] meanndcg rmse``
    (case-insensitive). ``pauc`` alone is ``pauc@0.05``.
    """
    m = _NAME.match(str(name).strip().lower())
    if m is None or m["family"] not in _FAMILIES:
        raise ParameterError(f"unknown metric {name!r}; known: {', '.join(sorted(_FAMILIES))} (e.g. ndcg@10, map, p@5)")
    function, arg_name, required = _FAMILIES[m["family"]]
    if m["arg"] is None:
        if required:
            raise ParameterError(f"metric {name!r} needs a cutoff, e.g. {m['family']}@10")
        return function, {}
    if arg_name is None:
        raise ParameterError(f"metric {name!r} takes no @ argument")
    try:
        value = int(m["arg"]) if arg_name == "k" else float(m["arg"])
    except ValueError:
        raise ParameterError(f"metric {name!r}: {m['arg']!r} is not a valid {arg_name}") from None
    if arg_name == "k":
        check_k(value, f"the cutoff of {name!r}")
    elif not 0.0 < value <= 1.0:
        raise ParameterError(f"metric {name!r}: p must be in (0, 1]")
    return function, {arg_name: value}


@dataclass(frozen=True)
class Metric:
    """A metric parsed from its name: call it like a per-query metric function."""

    name: str
    function: Callable = field(repr=False)
    arguments: dict = field(default_factory=dict)

    def __call__(self, y, scores, query_offsets, *, convention=DEFAULT_CONVENTION, doc_ids=None) -> np.ndarray:
        return self.function(y, scores, query_offsets, convention=convention, doc_ids=doc_ids, **self.arguments)


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


def _metric_from(functions: dict, name: str) -> Metric:
    """The :class:`Metric` ``name`` built from a twin's table of per-query functions."""
    function, arguments = parse_metric(name)
    return Metric(name, functions[function], arguments)


def _evaluate(functions: dict, metrics, y, scores, query_offsets, *, convention, doc_ids, per_query) -> dict:
    """:func:`evaluate` on a twin's table of per-query functions (both twins share this)."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(query_offsets) < 2:
        raise ParameterError("there are no queries to evaluate")
    out = {}
    for name in names:
        values = _metric_from(functions, name)(y, scores, query_offsets, convention=convention, doc_ids=doc_ids)
        if per_query:
            out[name] = values
        elif parse_metric(name)[0] == "rmse_per_query":
            out[name] = functions["rmse"](y, scores)
        else:
            out[name] = float(np.mean(values))
    return out


_FUNCTIONS = {f.__name__: f for f in (dcg, ndcg, mean_ndcg, average_precision, precision, err,
                                      reciprocal_rank, auc, pauc, rmse, rmse_per_query)}

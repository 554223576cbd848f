r"""Evaluation conventions: what a label is worth, how ranks discount it, how ties and edge cases count.

Tools that report "NDCG@10" or "MAP" disagree on the details, and the differences
move published numbers: the gain of a label, the discount of a rank, the value of a
query without relevant documents, what divides P@k and AP@k, how tied scores are
ranked. A :class:`Convention` names every such knob; :data:`CONVENTIONS` holds the
presets that reproduce the peer tools (checked against them, see
``tests/evaluation/test_metrics_oracles.py``):

==========  ==============  ================  ==========  ==========  ============  ===========  ============
preset      gain            discount          k > n       no rel.     relevant      P@k divides  AP@k divides
==========  ==============  ================  ==========  ==========  ============  ===========  ============
lightgbm    2^l - 1         1/log2(1+r)       cut         1           l > 0.5       min(k, n)    min(k, R)
ranklib     2^l - 1         1/log2(1+r)       cut         0           l > 0         min(k, n)    R
letor       0, 1, 3         1/log2(max(r,2))  **0**       0           l in {1,2}    k            R
mslr        0, 1, 3, 7, 15  1/log2(max(r,2))  **0**       0           l in {2,3,4}  k            R
trec        l               1/log2(1+r)       cut         0           l >= 1        k            R
mohan       2^l - 1         1/log2(1+r)       cut         **1/2**     l > 0         k            R
==========  ==============  ================  ==========  ==========  ============  ===========  ============

(``xgboost`` is an alias of ``lightgbm``: LightGBM's ``ndcg@k``/``map@k`` and XGBoost's
``ndcg@k``/``map@k``/``pre@k`` agree with it; XGBoost's ``ndcg``/``map`` without ``@k`` mean
``@32``, so name the cutoff. ``letor`` is LETOR 4.0's ``Eval-Score-4.0.pl`` (grades 0-2);
``mslr`` is the MSLR-WEB data sets' version of that script (grades 0-4, gain $2^l - 1$, a
document relevant from grade 2 on); ``trec`` is trec_eval's
``ndcg_cut``/``P``/``map``/``recip_rank``; ``mohan`` is Mohan's (2010, MS thesis, Table 6.1)
NDCG, which scores a query without relevant documents 1/2.) ``letor`` and ``mslr`` refuse a
label outside their scripts' gain tables (:data:`GAIN_TABLES`) instead of reading it as gain 0
and not relevant, as the scripts do silently. All rank ties by input
order (a stable sort by descending score) except ``trec``, which ranks tied scores by
document id, descending, after rounding scores to float32 as trec_eval reads them.
The default convention is ``"lightgbm"``, the one the boosting loop and the benchmarks
report next to LightGBM and XGBoost.

Also here, because every metric of both twins starts with them: the convention's
gains, discounts, relevance and ERR grades of an array of labels, and the checked
inputs of a metric call (:func:`prepare`). The metrics themselves are in
:mod:`twinrank.reference.evaluation.metrics`, which re-exports every name of this module.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from twinrank.reference.constants import MAX_LABEL
from twinrank.reference.errors import ParameterError

DEFAULT_CONVENTION = "lightgbm"


@dataclass(frozen=True)
class Convention:
    r"""Every knob of an evaluation convention (presets in :data:`CONVENTIONS`).

    Parameters
    ----------
    gain : {"exp2", "linear", "letor", "mslr"}
        Gain of label $l$: ``exp2`` is $2^l - 1$ (Burges et al. 2005),
        ``linear`` is $l$ (trec_eval); ``letor`` and ``mslr`` are the tables of
        :data:`GAIN_TABLES`: $\{0: 0, 1: 1, 2: 3\}$ of Eval-Score-4.0.pl (LETOR 4.0) and
        $\{0: 0, 1: 1, 2: 3, 3: 7, 4: 15\}$ ($2^l - 1$ on grades 0-4) of the MSLR-WEB
        script. A label outside a table is a ParameterError (the scripts read it as gain 0
        and not relevant, silently).
    discount : {"log2", "jarvelin"}
        Discount at rank $r \ge 1$: ``log2`` is $1/\log_2(1 + r)$;
        ``jarvelin`` is Järvelin & Kekäläinen's (2002) original with base $b = 2$,
        $1$ for $r \le 2$ and $1/\log_2 r$ after (LETOR's Eval-Score;
        also trec_eval's ``ndcg`` in its 2008 9.0 code, since changed to ``log2``).
    ndcg_k_beyond_n : {"cut", "zero"}
        NDCG@k of a query with fewer than k documents: ``cut`` is NDCG@n; ``zero`` is 0
        (Eval-Score-4.0.pl's NDCG@k does not exist for such a query and counts as 0).
    no_relevant_value : float
        Value of a metric measured against its best value (1 for a perfect ranking) on a
        query where there is nothing to rank: NDCG, MeanNDCG, AP and RR of a query without
        a document of positive gain / relevant document, AUC and pAUC of a query without a
        relevant or without an irrelevant document. Empty queries too. One rule for the six:
        LightGBM's ``ndcg`` and ``map`` (and XGBoost's) score such a query 1, RankLib,
        ``Eval-Score-4.0.pl`` (and its MSLR-WEB version) and trec_eval 0, Mohan's (2010)
        NDCG 1/2, and each preset extends its tool's value to
        the metrics the tool does not have. DCG, P@k and ERR are sums with no best value to
        divide by: every ranking of such a query scores 0, and so do they, in every preset.
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
        trec_eval), or by $\min(k, R)$ (LightGBM's ``map@k``).
    err_max_label : float or None
        $l_{max}$ of ERR's $R(l) = (2^l - 1)/2^{l_{max}}$; ``None`` takes the
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
    "gain": ("exp2", "linear", "letor", "mslr"),
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
    "mslr": Convention(gain="mslr", discount="jarvelin", ndcg_k_beyond_n="zero", no_relevant_value=0.0,
                       relevance_threshold=1.0, precision_k_beyond_n="k", ap_normalizer="relevant",
                       err_max_label=4.0),
    "trec": Convention(gain="linear", no_relevant_value=0.0, precision_k_beyond_n="k", ap_normalizer="relevant",
                       ties="trec", scores_float32=True),
    "mohan": Convention(no_relevant_value=0.5, relevance_threshold=0.0, precision_k_beyond_n="k",
                        ap_normalizer="relevant"),
}
r"""The presets. ``mslr`` is Eval-Score-4.0.pl as the MSLR-WEB data sets ship it ("modified by Jun Xu,
June 12, 2010 (for Microsoft Learning to Rank Datasets)"): LETOR's discount and rules with the gains
$2^l - 1$ of grades 0-4, and only grades 2-4 relevant for P@k and MAP; ERR (not in the script)
takes $l_{max} = 4$, the top of its grades. ``mohan`` is the NDCG of Mohan (2010, MS thesis,
Washington University in St. Louis, Table 6.1): gain $2^l - 1$, discount $1/\log_2(1 + r)$, and
1/2 for a query without a relevant document, where every ranking is as good as any other; a
document is relevant when its label is above 0 (the binary relevance of the thesis' AUC). The
thesis reports no P@k, AP or ERR: they are the textbook ones (P@k divides by k, AP by R, ERR's
$l_{max}$ is the largest label)."""

GAIN_TABLES: dict[str, tuple[float, ...]] = {
    "letor": (0.0, 1.0, 3.0),
    "mslr": (0.0, 1.0, 3.0, 7.0, 15.0),
}
"""Gains of the grades 0, 1, 2, ... of the table gains: ``%hsNdcgRelScore`` of LETOR 4.0's
Eval-Score-4.0.pl (grades 0-2) and of the MSLR-WEB script (grades 0-4). Both scripts look a label up
in their table and read any other label as gain 0 and not relevant; twinrank refuses it instead."""

_INSTEAD = {  # what the refusal of a label outside a gain table points at
    "letor": "LETOR 4.0's Eval-Score-4.0.pl grades documents 0-2; for MSLR-WEB's grades 0-4 use "
             "convention='mslr' (the MSLR-WEB script: gain 2^l - 1, grades 2-4 relevant), or a convention of "
             "gain 2^l - 1 such as 'lightgbm' or 'ranklib' for labels of any scale",
    "mslr": "the MSLR-WEB script grades documents 0-4; for labels of another scale use a convention of gain "
            "2^l - 1 such as 'lightgbm' or 'ranklib'",
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
    check_table_labels(labels, c)
    return np.asarray(GAIN_TABLES[c.gain])[labels.astype(np.int64)]


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
    r"""ERR's stopping probability $R(l) = (2^l - 1) / 2^{l_{max}}$ of each label.

    $l_{max}$ is ``convention.err_max_label``, or the largest of ``labels`` when that
    is None. A label above a fixed $l_{max}$ would make $R > 1$ and is an error.
    """
    c, labels = get_convention(convention), np.asarray(labels, dtype=np.float64)
    top = c.err_max_label if c.err_max_label is not None else (labels.max() if len(labels) else 0.0)
    if len(labels) and labels.max() > top:
        raise ParameterError(f"label {labels.max()} exceeds the convention's err_max_label {top}")
    check_exp2_labels(labels)
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
    if c.gain == "exp2":
        check_exp2_labels(y)
    check_table_labels(y, c)
    if np.isnan(scores).any():
        raise ParameterError(f"scores[{np.flatnonzero(np.isnan(scores))[0]}] is NaN; a NaN score cannot be ranked")
    if c.scores_float32:
        scores = scores.astype(np.float32).astype(np.float64)
    return Prepared(y, scores, offsets, c, _tie_keys(c, doc_ids, len(y)))


def check_exp2_labels(y: np.ndarray, name: str = "y") -> None:
    """ParameterError naming the first label above ``MAX_LABEL`` (31): its gain $2^l - 1$ would swamp or overflow."""
    high = np.flatnonzero(y > MAX_LABEL)  # (n_high,)
    if len(high):
        raise ParameterError(f"{name}[{high[0]}] = {y[high[0]]:g} is above {MAX_LABEL}, the largest label of the "
                             "exponential gain 2^l - 1 (XGBoost's bound; 2^1024 overflows float64)")


def check_table_labels(y: np.ndarray, convention: str | Convention, name: str = "y") -> None:
    """ParameterError naming the first label that is not a grade of the convention's gain table.

    Only the table gains (``letor``, ``mslr``: :data:`GAIN_TABLES`) have a set of grades;
    every label passes the others. The message names the table, the label and what to use instead.
    """
    c = get_convention(convention)
    if c.gain not in GAIN_TABLES:
        return
    grades = len(GAIN_TABLES[c.gain])
    outside = np.flatnonzero(~np.isin(y, np.arange(grades)))  # (n_outside,)
    if len(outside):
        i = outside[0]
        raise ParameterError(f"{name}[{i}] = {y[i]:g} is not a grade of the {c.gain!r} convention's gain table "
                             f"(grades 0-{grades - 1}): its script would read it as gain 0 and not relevant, "
                             f"silently; {_INSTEAD[c.gain]}")


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


TIE_RULES = ("stable", "trec", "expected")


def resolve_ties(convention: str | Convention, ties: str | None) -> tuple[Convention, bool]:
    """The convention to rank by and whether tied scores count in expectation (``ties="expected"``).

    ``ties=None`` keeps the convention's rule; ``"stable"`` or ``"trec"`` replaces it;
    ``"expected"`` ranks by the convention's rule (any order of a tie group will do) and
    tells the metric to average each tie group's discounts (DCG and NDCG only).
    """
    c = get_convention(convention)
    if ties is None or ties == "expected":
        return c, ties == "expected"
    if ties not in TIE_RULES:
        raise ParameterError(f"ties must be one of {TIE_RULES} or None, got {ties!r}")
    return replace(c, ties=ties), False


def check_k(k, name="k") -> None:
    """``k`` is None (the whole list) or an integer >= 1."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"{name} must be an integer >= 1 or None, got {k!r}")


def check_p(p, name: str) -> None:
    """``p``, the upper end of a partial AUC's false-positive rates, is a number in (0, 1]."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < p <= 1.0:
        raise ParameterError(f"{name}'s p must be in (0, 1], got {p!r}")

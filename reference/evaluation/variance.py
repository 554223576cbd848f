r"""The bias and variance of a score matrix, pointwise and listwise (Ibrahim, Applied AI 2021).

$B$ models score one fixed test set: the score matrix $P$ ($B$ models $\times$ $n$
documents), $P_{bi}$ the score of model $b$ for document $i$, label $y_i$. The mean column
$\bar P_i = \frac1B \sum_b P_{bi}$ is the *systematic prediction*.

**Pointwise** (each document a regression example; Eqs. 5-8), averaged over documents:

$$\mathrm{bias}^2 = \frac1n \sum_i (\bar P_i - y_i)^2, \qquad
  \mathrm{variance} = \frac1n \sum_i \frac{1}{B - \delta} \sum_b (P_{bi} - \bar P_i)^2,$$

$$\mathrm{MSE} = \frac1n \sum_i \frac1B \sum_b (P_{bi} - y_i)^2
  = \mathrm{bias}^2 + \frac{B - \delta}{B}\,\mathrm{variance},$$

with $\delta$ = ``ddof`` (1, the paper's $1/(B-1)$, by default; 0 makes the sum exact).

**Listwise** (each query one example; Eqs. 11-17). The ranking loss of query $q$
under scores $s$ is $L(q; s) = 1 - \mathrm{NDCG}(q; s)$, so the loss of model $b$ is
$1 - N_b(q)$ and that of the systematic prediction $1 - \bar N(q)$, with
$\bar N(q) = \mathrm{NDCG}(q; \bar P)$:

$$\mathrm{SRE}(q) = 1 - \bar N(q), \qquad
  \mathrm{VRE}(q) = \frac{1}{B - \delta} \sum_b \max\bigl(0,\ \bar N(q) - N_b(q)\bigr),$$

$$\mathrm{VRE}_\pm(q) = \frac1B \sum_b \bigl(\bar N(q) - N_b(q)\bigr), \qquad
  \mathrm{error}(q) = \frac1B \sum_b \bigl(1 - N_b(q)\bigr) = \mathrm{SRE}(q) + \mathrm{VRE}_\pm(q).$$

SRE, the *systematic ranking error*, is the bias: the loss of the ranking the models
agree on. VRE, the *variability of ranking error*, is the variance: how much worse
than that ranking the individual models rank, on average. A model can rank a query
better than the mean scores do, so the signed terms can be negative: VRE keeps only
the losses (the paper's choice, a variance is never negative), and the signed
VRE$_\pm$ (with $1/B$) is what makes the sum exact, SRE + VRE$_\pm$ = the mean ranking
error. Footnote 13: the ranking loss is not a squared error, so $(1 - N)^2$ must not
be decomposed like a regression loss; there is no cross term to cancel, and the
listwise terms are defined on the loss itself.

The metric is NDCG (``"ndcg"``, ``"ndcg@k"``) or MeanNDCG (``"meanndcg"``) under a
:mod:`~twinrank.reference.evaluation.conventions` convention. A query with no document of
positive gain has nothing to rank: its NDCG is the convention's ``no_relevant_value``
for every model, so its SRE is constant and its VRE zero. Such queries are counted
(``n_excluded``) and, unless ``include_no_relevant``, left out of the listwise means;
the per-query arrays cover every query (``included`` marks those averaged).
Pointwise numbers are over every document.

:func:`decompose` computes all of this from a score matrix; training the $B$ models is
:mod:`~twinrank.reference.analysis.diagnostics`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION, gain, get_convention
from twinrank.reference.evaluation.metric_names import parse_metric
from twinrank.reference.evaluation.metrics import metric_by_name

__all__ = ["Decomposition", "pointwise", "listwise", "ranking_terms", "decompose", "has_relevant",
           "check_score_matrix", "check_listwise_metric", "assemble", "LISTWISE_METRICS", "NUMBERS"]

LISTWISE_METRICS = ("ndcg", "meanndcg")  # metric families whose best value is 1 (loss = 1 - metric)
NUMBERS = ("bias2", "variance", "mse", "sre", "vre", "vre_signed", "error")


@dataclass(frozen=True)
class Decomposition:
    """The pointwise and listwise terms of one score matrix (means over documents / included queries).

    Per-document arrays ``*_d`` have shape (n_rows,); per-query arrays ``*_q`` (n_queries,),
    every query, ``included`` marking those in the listwise means.
    """

    bias2: float
    variance: float
    mse: float
    sre: float
    vre: float
    vre_signed: float
    error: float
    n_excluded: int
    bias2_d: np.ndarray
    variance_d: np.ndarray
    sre_q: np.ndarray
    vre_q: np.ndarray
    vre_signed_q: np.ndarray
    error_q: np.ndarray
    included: np.ndarray

    def numbers(self) -> dict:
        """The aggregate numbers (:data:`NUMBERS`) and ``n_excluded`` as plain Python values."""
        return {**{name: float(getattr(self, name)) for name in NUMBERS}, "n_excluded": int(self.n_excluded)}


def check_score_matrix(P, y, query_offsets, ddof) -> tuple:
    """``P, y, query_offsets`` as float64, float64, int64 arrays; ParameterError unless they fit."""
    P = np.asarray(P, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    query_offsets = np.asarray(query_offsets, dtype=np.int64)
    if P.ndim != 2 or P.shape[1] != len(y):
        raise ParameterError(f"the score matrix must be (n_models, n_rows) with n_rows = len(y) = {len(y)}, "
                        f"got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ParameterError("the score matrix holds NaN or infinite scores")
    if len(query_offsets) < 1 or query_offsets[0] != 0 or query_offsets[-1] != len(y) \
            or np.any(np.diff(query_offsets) < 0):
        raise ParameterError("query_offsets must rise from 0 to len(y)")
    if not isinstance(ddof, (int, np.integer)) or ddof < 0 or P.shape[0] - ddof < 1:
        raise ParameterError(f"ddof must be an integer with 0 <= ddof < n_models = {P.shape[0]}, got {ddof!r}")
    return P, y, query_offsets


def pointwise(P, y, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per document: bias$^2$ $(\bar P_i - y_i)^2$, variance $\frac{1}{B-\delta}\sum_b (P_{bi} - \bar P_i)^2$
    and MSE $\frac1B \sum_b (P_{bi} - y_i)^2$ (Eqs. 5-8), each (n_rows,).

    $\bar P$ is ``P.sum(axis=0) / B``: the rows added in model order, then divided by $B$.
    """
    P = np.asarray(P, dtype=np.float64)  # (B, n_rows)
    mean = P.sum(axis=0) / P.shape[0]  # (n_rows,) rows added in order
    bias2 = (mean - y) ** 2
    variance = ((P - mean) ** 2).sum(axis=0) / (P.shape[0] - ddof)
    mse = ((P - y) ** 2).sum(axis=0) / P.shape[0]
    return bias2, variance, mse


def has_relevant(y, query_offsets, *, convention=DEFAULT_CONVENTION) -> np.ndarray:
    """Whether each query has a document of positive gain (n_queries,) bool: the queries NDCG can judge."""
    g = gain(np.asarray(y, dtype=np.float64), get_convention(convention))  # (n_rows,)
    sizes = np.diff(np.asarray(query_offsets, dtype=np.int64))  # (n_queries,)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    return np.bincount(query, weights=g > 0, minlength=len(sizes)) > 0


def ranking_terms(model_values: np.ndarray, mean_values: np.ndarray, *, ddof: int = 1) -> tuple:
    r"""SRE(q), VRE(q), VRE$_\pm$(q) and the mean ranking error(q) from metric values (Eqs. 11-17).

    ``model_values`` (B, n_queries): $N_b(q)$; ``mean_values`` (n_queries,): $\bar N(q)$.
    Sums run over models in order; each is (n_queries,).
    """
    B = model_values.shape[0]
    gap = mean_values - model_values  # (B, n_queries)  N̄(q) - N_b(q)
    sre = 1.0 - mean_values
    vre = np.maximum(gap, 0.0).sum(axis=0) / (B - ddof)
    vre_signed = gap.sum(axis=0) / B
    error = (1.0 - model_values).sum(axis=0) / B
    return sre, vre, vre_signed, error


def listwise(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION,
             ddof: int = 1) -> tuple:
    r"""SRE(q), VRE(q), VRE$_\pm$(q), error(q), each (n_queries,), of the score matrix ``P``.

    Ranks every model's scores and the mean scores $\bar P$ by ``metric``
    (:func:`~twinrank.reference.evaluation.metrics.metric_by_name`) and hands the values to
    :func:`ranking_terms`.
    """
    P, y, query_offsets = check_score_matrix(P, y, query_offsets, ddof)
    score = metric_by_name(check_listwise_metric(metric))
    mean = P.sum(axis=0) / P.shape[0]
    model_values = np.stack([score(y, P[b], query_offsets, convention=convention) for b in range(P.shape[0])])
    return ranking_terms(model_values, score(y, mean, query_offsets, convention=convention), ddof=ddof)


def check_listwise_metric(metric: str) -> str:
    """``metric``, unless its loss is not ``1 - metric`` (NDCG and MeanNDCG only)."""
    if parse_metric(metric)[0] not in ("ndcg", "mean_ndcg"):
        raise ParameterError(f"metric {metric!r}: the ranking loss is 1 - metric, so the metric must be "
                             "ndcg, ndcg@k or meanndcg")
    return metric


def decompose(P, y, query_offsets, *, metric: str = "ndcg", convention=DEFAULT_CONVENTION, ddof: int = 1,
              include_no_relevant: bool = False) -> Decomposition:
    """Every pointwise and listwise term of the score matrix ``P`` (n_models, n_rows) (module docstring)."""
    P, y, query_offsets = check_score_matrix(P, y, query_offsets, ddof)
    return assemble(pointwise(P, y, ddof=ddof),
                     listwise(P, y, query_offsets, metric=metric, convention=convention, ddof=ddof),
                     has_relevant(y, query_offsets, convention=convention), include_no_relevant)


def assemble(points: tuple, lists: tuple, relevant: np.ndarray, include_no_relevant: bool) -> Decomposition:
    """Means over documents and over the included queries (NaN when none is included)."""
    bias2_d, variance_d, mse_d = points
    included = np.ones_like(relevant) if include_no_relevant else relevant
    means = [float(v[included].mean()) if included.any() else float("nan") for v in lists]
    return Decomposition(float(bias2_d.mean()), float(variance_d.mean()), float(mse_d.mean()), *means,
                         int((~relevant).sum()), bias2_d, variance_d, *lists, included)

r"""Bias and variance of a ranker: training the models of Ibrahim's estimators (Applied AI 2021).

Train $B$ models on $B$ training sets drawn from one pool of queries, score one fixed
test set with each, and decompose the score matrix $P$ (:mod:`~twinrank.reference.evaluation.variance`:
bias$^2$, variance and MSE per document, Eqs. 5-8; SRE, VRE and the ranking error per
query, Eqs. 11-17). Two ways to draw the training sets (Sec. 5.2):

**Bootstrap** (Sec. 5.2.1): $B$ = ``n_models`` samples of ``fraction`` of the queries
without replacement (the paper's 63%, the share of distinct items in a bootstrap sample),
one decomposition of the $B \times n$ matrix.

**Repeated two-fold** (Sec. 5.2.2, Eqs. 7-8 and 16-17): $J$ = ``n_repeats`` random
halvings of the queries, a model trained on each half. Each repeat $j$ is decomposed on
its own two models, around their own mean $\bar f_j$ with $\frac{1}{2-1}$, and the
estimates are averaged over the repeats:

$$\mathrm{variance} = \frac1J \sum_{j=1}^{J} \frac1n \sum_i \frac{1}{2-1}
  \sum_{b \in \{2j, 2j+1\}} \bigl(P_{bi} - \bar f_{j,i}\bigr)^2,$$

and so for every term (SRE, VRE, ... of Eq. 17: the mean over repeats of each repeat's).
``pooled=True`` decomposes all $2J$ models around one grand mean with $\frac{1}{2J-1}$
instead (twinrank 0.1's estimator: smaller variances, since halves of different repeats
overlap; on MQ2008 with a random forest and $J = 4$, VRE 0.042 pooled against 0.070).
The score matrix keeps the models in repeat order: rows $2j$ and $2j+1$ are repeat $j$'s halves.

:func:`bias_variance` trains the models through :mod:`~twinrank.reference.ensembles.runs`
(any executor, Dask included) and :func:`sweep` repeats it over the values of one
parameter; both decompose with the engine's :func:`decompose` (``run_bias_variance``,
``run_sweep`` take the engine).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.ensembles.runs import Fold, Run, ScoreMatrix, derive_seed, execute
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.evaluation.variance import (
    LISTWISE_METRICS,
    NUMBERS,
    Decomposition,
    check_listwise_metric,
    decompose,
    has_relevant,
    listwise,
    pointwise,
    ranking_terms,
)
from twinrank.reference.io.data import Dataset
from twinrank.reference.sampling import make_rng, subsample

__all__ = ["Decomposition", "BiasVariance", "bias_variance", "sweep", "run_bias_variance", "run_sweep",
           "draw_training_sets", "mean_decomposition", "decompose", "pointwise", "listwise", "ranking_terms",
           "has_relevant", "METHODS", "LISTWISE_METRICS", "NUMBERS", "BOOTSTRAP_FRACTION"]

METHODS = ("bootstrap", "twofold")
BOOTSTRAP_FRACTION = 0.63  # Sec. 5.2.1: each sample holds 63% of the queries


@dataclass(frozen=True)
class BiasVariance(Decomposition):
    """:func:`bias_variance`'s result: the :class:`Decomposition`, the models' test scores
    (``scores``, a :class:`~twinrank.reference.ensembles.runs.ScoreMatrix`, one row per model), the
    ``method``, whether the two-fold models were ``pooled``, and the estimator parameters of this
    setting (``params``)."""

    scores: ScoreMatrix
    method: str
    params: dict
    pooled: bool = False


def draw_training_sets(n_queries: int, *, method: str = "bootstrap", n_models: int = 10, n_repeats: int = 5,
                       fraction: float = BOOTSTRAP_FRACTION, seed: int = 0) -> list[np.ndarray]:
    """The query indices of every model's training set, drawn from ``make_rng(derive_seed(seed, 0))``.

    ``bootstrap``: ``n_models`` samples of ``subset_size(n_queries, fraction)`` queries
    without replacement (``sampling.subsample``), one after another. ``twofold``: for each
    of ``n_repeats`` repetitions one permutation of the queries, its first ``n_queries // 2``
    and the rest, so ``2 * n_repeats`` models. Model seeds come from other keys
    (``derive_seed(seed, 1, b)``), so they are independent of these draws.
    """
    rng = make_rng(derive_seed(seed, 0))
    if method == "bootstrap":
        return [subsample(rng, n_queries, fraction) for _ in range(n_models)]
    halves = []
    for _ in range(n_repeats):
        order = rng.permutation(n_queries)
        halves += [np.sort(order[:n_queries // 2]), np.sort(order[n_queries // 2:])]
    return halves


def _check_experiment(train: Dataset, test: Dataset, method, n_models, n_repeats, fraction, metric, ddof,
                      pooled) -> int:
    """Every argument checked before any training; returns the number of models."""
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
    for name, value in (("n_models", n_models), ("n_repeats", n_repeats)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ParameterError(f"{name} must be an integer, got {value!r}")
    if method == "bootstrap" and n_models < 2:
        raise ParameterError(f"n_models (B) must be >= 2 to measure a variance, got {n_models}")
    if method == "twofold" and n_repeats < 1:
        raise ParameterError(f"n_repeats (J) must be >= 1 (two models each), got {n_repeats}")
    if not isinstance(fraction, (int, float, np.floating)) or not 0.0 < fraction <= 1.0:
        raise ParameterError(f"fraction must be in (0, 1], got {fraction!r}")
    check_listwise_metric(metric)
    if train.n_features != test.n_features:
        raise ParameterError(f"the test set has {test.n_features} features but the training set has "
                        f"{train.n_features}: score the test set with the training set's width")
    if method == "twofold" and train.n_queries < 2 or train.n_queries < 1:
        raise ParameterError(f"the training set has {train.n_queries} queries, too few for {method!r} samples")
    if not isinstance(pooled, bool):
        raise ParameterError(f"pooled must be True or False, got {pooled!r}")
    B = n_models if method == "bootstrap" else 2 * n_repeats
    per_decomposition = 2 if method == "twofold" and not pooled else B
    if not isinstance(ddof, (int, np.integer)) or not 0 <= ddof < per_decomposition:
        raise ParameterError(f"ddof must be an integer with 0 <= ddof < {per_decomposition}, the models of "
                             f"one decomposition, got {ddof!r}")
    return B


def mean_decomposition(parts: list) -> Decomposition:
    """The mean of decompositions of one test set, term by term (Eq. 17: the repeats' estimates averaged).

    Every number and every per-document and per-query array is the mean over ``parts``;
    ``n_excluded`` and ``included`` depend on the test set only and are the first part's.
    """
    first = parts[0]
    mean = {f.name: sum(getattr(p, f.name) for p in parts) / len(parts) for f in fields(Decomposition)}
    for name in NUMBERS:
        mean[name] = float(mean[name])
    return Decomposition(**{**mean, "n_excluded": first.n_excluded, "included": first.included})


def _decomposed(engine: Engine, P, test: Dataset, method: str, pooled: bool, **options) -> Decomposition:
    """The decomposition of ``P``: whole, or (two-fold, not ``pooled``) the mean of each repeat's pair."""
    if method == "bootstrap" or pooled:
        return engine.decompose(P, test.y, test.query_offsets, **options)
    return mean_decomposition([engine.decompose(P[j:j + 2], test.y, test.query_offsets, **options)
                               for j in range(0, len(P), 2)])


def run_bias_variance(engine: Engine, make_model, train: Dataset, test: Dataset, configs: list, *,
                      method: str, n_models: int, n_repeats: int, fraction: float, metric: str, convention,
                      ddof: int, seed: int, executor, include_no_relevant: bool, pooled: bool, params: dict | None,
                      progress) -> list:
    """One :class:`BiasVariance` per configuration of ``configs``, all from one :func:`execute`,
    decomposed by ``engine.decompose``.

    Every configuration trains on the same training sets with the same model seeds
    (common random numbers), so the curves of a sweep differ only by the parameter.
    """
    B = _check_experiment(train, test, method, n_models, n_repeats, fraction, metric, ddof, pooled)
    samples = draw_training_sets(train.n_queries, method=method, n_models=n_models, n_repeats=n_repeats,
                                 fraction=fraction, seed=seed)
    folds = [Fold(f"sample{b}", train.take_queries(q), None, test) for b, q in enumerate(samples)]
    runs = [Run(c * B + b, c, dict(config), b, b, derive_seed(seed, 1, b))
            for c, config in enumerate(configs) for b in range(B)]
    results = execute(runs, folds, make_model, fixed=params, metrics=(metric,), convention=convention,
                      executor=executor, keep_scores=True, progress=progress)
    if results.failed:
        row = results.failed[0]
        raise ParameterError(f"{len(results.failed)} of {len(runs)} models failed; the first "
                             f"(sample {row['fold']}, {row['config']}): {row['error']}")
    out = []
    for c, config in enumerate(configs):
        P = np.stack([results.scores[(c * B + b, "test")] for b in range(B)])  # (B, n_rows)
        d = _decomposed(engine, P, test, method, pooled, metric=metric, convention=convention, ddof=ddof,
                        include_no_relevant=include_no_relevant)
        matrix = ScoreMatrix(np.arange(c * B, (c + 1) * B), P, test.y, test.query_offsets)
        out.append(BiasVariance(**{f.name: getattr(d, f.name) for f in fields(Decomposition)},
                                scores=matrix, method=method, params={**(params or {}), **config},
                                pooled=pooled and method == "twofold"))
    return out


def bias_variance(make_model, train: Dataset, test: Dataset, *, method: str = "bootstrap", n_models: int = 10,
                  n_repeats: int = 5, fraction: float = BOOTSTRAP_FRACTION, metric: str = "ndcg",
                  convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
                  include_no_relevant: bool = False, pooled: bool = False, params: dict | None = None,
                  progress=None) -> BiasVariance:
    """Train the models of ``method`` on samples of ``train``, score ``test``, decompose the errors.

    Parameters
    ----------
    make_model : an estimator class or a callable ``make_model(**params)`` (as
        :func:`~twinrank.reference.ensembles.runs.execute` takes), called with ``params`` and ``seed``.
    method : ``"bootstrap"`` (``n_models`` samples of ``fraction`` of the queries, 0.63 as the
        paper) or ``"twofold"`` (``n_repeats`` random halvings, both halves trained: ``2 n_repeats``
        models; for deterministic learners, whose overlapping samples would hide variance).
    metric, convention, ddof, include_no_relevant : as :func:`~twinrank.reference.evaluation.variance.decompose`.
    pooled : two-fold only: decompose all models around one mean (``1/(2J - 1)``) instead of the
        paper's mean of the repeats' estimates (the module docstring).
    seed : master seed; samples from ``derive_seed(seed, 0)``, model ``b``'s seed ``derive_seed(seed, 1, b)``.
    executor : a :mod:`~twinrank.reference.ensembles.runs` executor (in process by default; Dask).
    progress : ``progress(done, total, row)`` as each model finishes.
    """
    return run_bias_variance(REFERENCE, make_model, train, test, [{}], method=method, n_models=n_models,
                             n_repeats=n_repeats, fraction=fraction, metric=metric, convention=convention,
                             ddof=ddof, seed=seed, executor=executor, include_no_relevant=include_no_relevant,
                             pooled=pooled, params=params, progress=progress)[0]


def sweep(make_model, train: Dataset, test: Dataset, name: str, values, *, method: str = "bootstrap",
          n_models: int = 10, n_repeats: int = 5, fraction: float = BOOTSTRAP_FRACTION, metric: str = "ndcg",
          convention=DEFAULT_CONVENTION, ddof: int = 1, seed: int = 0, executor=None,
          include_no_relevant: bool = False, pooled: bool = False, params: dict | None = None,
          progress=None) -> list[BiasVariance]:
    """:func:`bias_variance` for each value of parameter ``name`` (e.g. ``query_subsample``), one
    :class:`BiasVariance` per value, in order: the curves of the paper's Figs. 5-7.

    Every value trains on the same samples with the same model seeds; all models of all
    values go to ``executor`` at once.
    """
    return run_sweep(REFERENCE, make_model, train, test, name, values, method=method, n_models=n_models,
                     n_repeats=n_repeats, fraction=fraction, metric=metric, convention=convention, ddof=ddof,
                     seed=seed, executor=executor, include_no_relevant=include_no_relevant, pooled=pooled,
                     params=params, progress=progress)


def run_sweep(engine: Engine, make_model, train: Dataset, test: Dataset, name: str, values, **options) -> list:
    """:func:`sweep` decomposed by ``engine.decompose`` (``options``: :func:`sweep`'s keywords)."""
    values = list(values)
    if not values:
        raise ParameterError(f"sweep over {name!r}: give at least one value")
    return run_bias_variance(engine, make_model, train, test, [{name: v} for v in values], **options)

r"""Model pools and the variance experiment of BL-MART (Ganjisaffar, Caruana & Lopes 2011, Sec. 4).

**Pools (the paper's Fig. 4).** Train many members once, keep each one's scores on the
validation and test sets, and form bags of any size $b$ by drawing $b$ members: the
bag-size curve costs no further training. Every member is trained with the overfitting
tolerance, and records both stopping points of one run: the **overfitted** member (the
trees the tolerance kept) and the **non-overfitted** one (its first ``best_iteration``
trees, where validation peaked).

**Variance (the paper's Table 5).** $T$ samples of a fraction of the training queries;
on each, train every method and score one test set; per metric, the mean and the sample
variance over the $T$ samples, and each method's reduction of the first method's
variance, $1 - \sigma^2_{\mathrm{method}} / \sigma^2_{\mathrm{first}}$.

A pool is built from a fitted :class:`~twinrank.reference.rankers.bagging.BLMART` and computes
on that bag's twin (its ``engine``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinrank.reference.ensembles.runs import derive_seed
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset
from twinrank.reference.rankers.bagging import BLMART

__all__ = ["STOPPING_POINTS", "ModelPool", "bag_curve", "variance_experiment", "VarianceTable"]

STOPPING_POINTS = ("overfitted", "non-overfitted")


@dataclass
class ModelPool:
    """Every member's scores: ``scores[kind][split]`` is a (P, n_rows) matrix; ``data[split]`` its Dataset."""

    scores: dict
    data: dict
    engine: object

    @classmethod
    def from_bag(cls, bag: BLMART, valid: Dataset, test: Dataset | None = None) -> "ModelPool":
        """The pool of a fitted bag's members (trained with ``overfit_tolerance`` for both kinds)."""
        members = bag._fitted_model().members
        data = {"valid": valid} if test is None else {"valid": valid, "test": test}
        kept = {"overfitted": members,
                "non-overfitted": [m.truncated(m.best_iteration) if m.best_iteration else m for m in members]}
        with bag.engine.threads(bag.n_threads):
            scores = {kind: {split: np.stack([bag.engine.predict_ensemble(m, d.X) for m in models])
                             for split, d in data.items()} for kind, models in kept.items()}
        return cls(scores, data, bag.engine)

    @property
    def n_members(self) -> int:
        return len(self.scores["overfitted"]["valid"])


def bag_curve(pool: ModelPool, sizes, *, draws: int = 100, metric: str = "map", rule: str = "minmax",
              kind: str = "overfitted", split: str = "valid", convention: str = "letor", seed: int = 0):
    """The mean and standard deviation of ``metric`` over ``draws`` bags of each size in ``sizes``.

    Bag ``d`` of size ``b`` is ``b`` members drawn without replacement by
    ``default_rng(derive_seed(seed, b, d))``, combined by ``rule``. Returns two arrays of
    ``len(sizes)``.
    """
    if kind not in STOPPING_POINTS:
        raise ParameterError(f"kind must be one of {', '.join(STOPPING_POINTS)}; got {kind!r}")
    if split not in pool.data:
        raise ParameterError(f"the pool has no {split!r} scores")
    scores, data = pool.scores[kind][split], pool.data[split]
    means, stds = [], []
    for b in sizes:
        if not 1 <= b <= pool.n_members:
            raise ParameterError(f"a bag size must be in 1..{pool.n_members}, got {b}")
        values = []
        for d in range(draws):
            members = np.random.default_rng(derive_seed(seed, b, d)).choice(pool.n_members, b, replace=False)
            combined = pool.engine.combine_scores(scores[np.sort(members)], data.query_offsets, rule)
            values.append(pool.engine.evaluate(metric, data.y, combined, data.query_offsets,
                                               convention=convention)[metric])
        means.append(np.mean(values))
        stds.append(np.std(values))
    return np.array(means), np.array(stds)


@dataclass
class VarianceTable:
    """``mean[method][metric]``, ``variance[method][metric]`` over the samples, and ``reduction``
    (each method's variance against the first method's: $1 - \\sigma^2 / \\sigma^2_1$)."""

    mean: dict
    variance: dict
    reduction: dict

    def to_text(self) -> str:
        """The table in the paper's layout: one row per metric, mean (variance) per method."""
        methods = list(self.mean)
        metrics = list(self.mean[methods[0]])
        lines = ["metric     " + "".join(f"{m:>26}" for m in methods) + "".join(
            f"{'reduction ' + m:>24}" for m in methods[1:])]
        for metric in metrics:
            cells = "".join(f"{self.mean[m][metric]:>14.4f} ({self.variance[m][metric]:.1e})" for m in methods)
            cuts = "".join(f"{100 * self.reduction[m][metric]:>23.1f}%" for m in methods[1:])
            lines.append(f"{metric:<11}{cells}{cuts}")
        return "\n".join(lines)


def variance_experiment(methods: dict, train: Dataset, test: Dataset, *, valid: Dataset | None = None,
                        samples: int = 10, fraction: float = 0.67,
                        metrics=("ndcg@1", "ndcg@3", "ndcg@10", "map"), convention: str = "letor",
                        seed: int = 0, progress=None) -> VarianceTable:
    """Train every method on ``samples`` samples of ``fraction`` of the training queries; score ``test``.

    ``methods``: ``{name: make(seed) -> estimator}``; sample ``t`` draws its queries from
    ``derive_seed(seed, t)`` and every method on it gets that seed. ``progress(t, samples)``
    after each sample.
    """
    if samples < 2:
        raise ParameterError(f"a variance needs at least 2 samples, got {samples}")
    if not 0 < fraction <= 1:
        raise ParameterError(f"fraction must be in (0, 1], got {fraction!r}")
    values = {name: [] for name in methods}
    k = max(1, int(round(fraction * train.n_queries)))
    for t in range(samples):
        sample_seed = derive_seed(seed, t)
        queries = np.sort(np.random.default_rng(sample_seed).choice(train.n_queries, k, replace=False))
        sample = train.take_queries(queries)
        for name, make in methods.items():
            est = make(sample_seed)
            est.fit(sample, eval_set=None if valid is None else [valid])
            scores = est.predict(test)
            result = est.engine.evaluate(list(metrics), test.y, scores, test.query_offsets, convention=convention)
            values[name].append([result[m] for m in metrics])
        if progress is not None:
            progress(t + 1, samples)
    table = {name: np.array(v) for name, v in values.items()}  # (samples, n_metrics) each
    first = table[next(iter(methods))].var(axis=0, ddof=1)
    mean = {n: dict(zip(metrics, v.mean(axis=0))) for n, v in table.items()}
    variance = {n: dict(zip(metrics, v.var(axis=0, ddof=1))) for n, v in table.items()}
    reduction = {n: dict(zip(metrics, 1 - v.var(axis=0, ddof=1) / first)) for n, v in table.items()}
    return VarianceTable(mean, variance, reduction)

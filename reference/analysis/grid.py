r"""Grid search as BL-MART does it (Ganjisaffar, Caruana & Lopes, SIGIR 2011, Sec. 3.1-3.2).

Every configuration of a parameter grid is trained on every fold with several
seeds (:mod:`~twinrank.reference.ensembles.runs`), each run early-stopped on its fold's
validation set. A configuration is judged by its validation metric averaged over
folds and seeds; the test metric is only reported, never used to choose.

**Hyper-parameter overfitting curve** (the paper's Fig. 1). Choosing the best of
many configurations on validation data overfits the validation data: the more
configurations are tried, the higher the winner's validation metric, while its
test metric rises less, or falls. To see it, draw $n$ of the $C$ configurations
uniformly without replacement, keep the one with the best mean validation metric
(the first drawn among equals), record its validation and test means; average over
many draws; plot both against $n = 1 .. C$. Each draw is one permutation of the
configurations from ``make_rng(seed)``, and size $n$ uses its first $n$ entries, so
the curves of all sizes come from the same draws (they are nested, as a search that
keeps trying more configurations is).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from twinrank.reference.ensembles.run_record import RunRecord, fold_fingerprints
from twinrank.reference.ensembles.runs import Results, execute, plan
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.sampling import make_rng

__all__ = ["configurations", "grid_search", "GridResult", "overfitting_curve"]


def configurations(param_grid: dict) -> list[dict]:
    """Every combination of ``{name: [values]}``, the last name varying fastest."""
    if not param_grid:
        return [{}]
    names = list(param_grid)
    for name, values in param_grid.items():
        if len(values) == 0:
            raise ParameterError(f"parameter {name!r} has no values to try")
    return [dict(zip(names, combo)) for combo in itertools.product(*(param_grid[n] for n in names))]


@dataclass
class GridResult:
    """A finished grid: the runs' :class:`~twinrank.reference.ensembles.runs.Results`, the configurations, the metric."""

    results: Results
    configs: list
    metric: str

    def config_means(self, split: str) -> np.ndarray:
        """Each configuration's ``split`` metric averaged over its folds and seeds (failed runs left
        out; NaN when every run failed), shape (n_configs,)."""
        values = self.results.column(f"{split}:{self.metric}")
        config = self.results.column("config").astype(int)
        sums = np.bincount(config, np.where(np.isnan(values), 0.0, values), minlength=len(self.configs))
        counts = np.bincount(config, ~np.isnan(values), minlength=len(self.configs))
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def summary(self) -> list[dict]:
        """One row per configuration, best mean validation metric first (ties: grid order;
        configurations whose runs all failed last): ``rank``, ``config``, the parameters,
        ``valid`` and ``test`` means, ``valid_std`` over runs, ``n_trees`` mean, ``runs``, ``failed``."""
        valid, test = self.config_means("valid"), self.config_means("test")
        rows = []
        for c, params in enumerate(self.configs):
            mine = [r for r in self.results.rows if r["config"] == c]
            ok = [r for r in mine if not r["error"]]
            v = [r[f"valid:{self.metric}"] for r in ok]
            rows.append({"config": c, **params, "valid": float(valid[c]), "test": float(test[c]),
                         "valid_std": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                         "n_trees": float(np.mean([r["n_trees"] for r in ok])) if ok else float("nan"),
                         "runs": len(mine), "failed": len(mine) - len(ok)})
        order = sorted(range(len(rows)), key=lambda c: (np.isnan(valid[c]), -np.nan_to_num(valid[c]), c))
        return [{"rank": rank + 1, **rows[c]} for rank, c in enumerate(order)]

    def best(self) -> dict:
        """The parameters of the configuration with the best mean validation metric."""
        return dict(self.configs[self.summary()[0]["config"]])

    def overfitting_curve(self, sizes=None, *, draws: int = 1000, seed=0) -> dict:
        """:func:`overfitting_curve` of this grid's configuration means."""
        return overfitting_curve(self.config_means("valid"), self.config_means("test"), sizes,
                                 draws=draws, seed=seed)


def overfitting_curve(valid, test, sizes=None, *, draws: int = 1000, seed=0) -> dict:
    r"""The mean validation and test metric of the best-on-validation of $n$ random configurations.

    valid, test : (n_configs,) each configuration's mean metrics (NaN ones are left out).
    sizes : the $n$ values (default 1 .. n_configs). Returns
    ``{"size": (k,), "valid": (k,), "test": (k,), "draws": draws}``.
    """
    valid, test = np.asarray(valid, dtype=np.float64), np.asarray(test, dtype=np.float64)
    keep = ~(np.isnan(valid) | np.isnan(test))
    valid, test = valid[keep], test[keep]
    n = len(valid)
    sizes = np.arange(1, n + 1) if sizes is None else np.asarray(sizes, dtype=np.int64)
    if n == 0 or len(sizes) == 0 or sizes.min() < 1 or sizes.max() > n:
        raise ParameterError(f"sizes must lie in 1..{n} (the configurations with results), got {sizes.tolist()}")
    order = np.argsort(make_rng(seed).random((draws, n)), axis=1, kind="stable")  # (draws, n) permutations
    drawn = valid[order]  # (draws, n)
    new_best = np.ones_like(drawn, dtype=bool)
    new_best[:, 1:] = drawn[:, 1:] > np.maximum.accumulate(drawn, axis=1)[:, :-1]  # strictly better
    at = np.maximum.accumulate(np.where(new_best, np.arange(n), 0), axis=1)  # (draws, n) winner's position
    winner = np.take_along_axis(order, at, axis=1)[:, sizes - 1]  # (draws, k) configuration index
    return {"size": sizes, "valid": valid[winner].mean(axis=0), "test": test[winner].mean(axis=0),
            "draws": draws}


def grid_search(estimator, folds: list, param_grid: dict, *, n_seeds: int = 3, metric: str = "ndcg@10",
                convention: str = DEFAULT_CONVENTION, fixed: dict | None = None, seed=0, executor=None,
                keep_scores: bool = False, progress=None, record=None, resume: bool = False) -> GridResult:
    """Train every configuration of ``param_grid`` on every fold with ``n_seeds`` seeds.

    ``estimator`` (a class such as ``twinrank.fast.LambdaMART``) gets ``fixed``, the
    configuration and the run's seed; ``metric`` and ``convention`` are also passed to it
    (its validation metric, for early stopping with ``fixed={"early_stopping_rounds": ...}``)
    when it takes them. The table's ``valid:`` and ``test:`` columns hold ``metric``.
    ``executor``, ``keep_scores``, ``progress``: :func:`~twinrank.reference.ensembles.runs.execute`.

    ``record``: a file (JSON lines, :mod:`~twinrank.reference.ensembles.run_record`) that each run
    is added to as it finishes. With ``resume=True`` the runs it holds finished are not trained
    again; it must have been written for the same search (estimator, grid, folds' data, seeds,
    metric, fixed parameters), or it is refused naming what differs. Without ``resume``, the
    record of a search that stopped before its end is refused rather than replaced. Ctrl-C
    raises :class:`~twinrank.reference.ensembles.runs.Interrupted` with the runs finished.
    """
    configs = configurations(param_grid)
    names = getattr(estimator, "_param_names", None)
    accepted = set(names()) if names is not None else set()
    fixed = {**{k: v for k, v in (("metric", metric), ("convention", convention)) if k in accepted},
             **(fixed or {})}
    runs = plan(configs, len(folds), n_seeds, seed=seed)
    if record is not None:
        if keep_scores and resume:
            raise ParameterError("keep_scores=True with resume=True: a record keeps the runs' rows, not their scores")
        settings = {"estimator": f"{estimator.__module__}.{getattr(estimator, '__qualname__', estimator)}",
                    "param_grid": param_grid, "folds": fold_fingerprints(folds), "n_seeds": n_seeds, "seed": seed,
                    "metric": metric, "convention": convention, "fixed": fixed}
        record = RunRecord(record, settings, len(runs), resume=resume)
    try:
        results = execute(runs, folds, estimator, fixed=fixed, metrics=(metric,), convention=convention,
                          executor=executor, keep_scores=keep_scores, progress=progress, record=record)
    finally:
        if record is not None:
            record.close()
    return GridResult(results, configs, metric)

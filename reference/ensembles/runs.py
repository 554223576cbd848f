r"""Many independent trainings: configurations x folds x seeds, in process, in processes or on Dask.

A *plan* is a list of :class:`Run` s, one per (configuration, fold, repeat), in that
order (configuration-major). :func:`execute` trains every run with an *executor*
and returns a :class:`Results` table: one row per run with its parameters, fold,
seed, the number of trees kept and the validation and test metrics; optionally
each run's scores on the validation and test sets (the *score matrix*, which
pools, bags and bias/variance reuse without scoring again).

Seeds. Every run's seed is a function of the master seed and the run's repeat
index only,

$$\mathrm{seed}_r = \mathrm{SeedSequence}(\mathrm{master}, \mathrm{spawn\_key}=(r,)).\mathrm{generate\_state}(1)[0],$$

a 32-bit integer, never of the worker or the order in which runs finish. So the
table is the same for any executor and any number of workers; and the runs of one
repeat share a seed across configurations and folds (common random numbers: two
configurations are compared on the same random draws). The seed is an ordinary
integer, so ``twinrank train --seed`` reproduces any row.

Executors. :class:`InProcess` (the default) runs one model after another. The
executors that run several at once are infrastructure, not algorithm, and live in
:mod:`twinrank.executors`: ``ProcessPool`` (``n_jobs`` local processes) and
``DaskExecutor`` (a ``dask.distributed`` cluster, which does the distribution,
retries and recovery from lost workers; a run interrupted by a lost worker is run
again, with the same seed); ``make_executor`` picks one from options. When several
models run at once each trains single-threaded (``n_threads=1`` where the estimator
takes it), so the machine is not oversubscribed; the model does not depend on the
thread count.

A run that raises reports its configuration and error in the ``error`` column
(metrics NaN) and does not stop the others.

Interruptions. Ctrl-C stops the runs (an executor's workers with them) and raises
:class:`Interrupted`, which holds the runs finished before it. A
:class:`~twinrank.reference.ensembles.run_record.RunRecord` keeps every run on disk as
it finishes, so a search stopped in any way resumes with the runs it does not hold.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
from dataclasses import dataclass, field

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.io._atomic import atomic_output
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import read_letor

__all__ = ["Fold", "Run", "Results", "ScoreMatrix", "derive_seed", "plan", "execute", "read_folds", "InProcess",
           "Interrupted"]
SCORED_SPLITS = ("valid", "test")


@dataclass(frozen=True)
class Fold:
    """One train / validation / test split (``valid`` and ``test`` may be None)."""

    name: str
    train: Dataset
    valid: Dataset | None = None
    test: Dataset | None = None


@dataclass(frozen=True)
class Run:
    """One training: configuration ``config`` (its ``params``) on fold ``fold``, repeat ``repeat``."""

    index: int
    config: int
    params: dict
    fold: int
    repeat: int
    seed: int


def derive_seed(master_seed: int, *key: int) -> int:
    """The 32-bit seed ``SeedSequence(master_seed, spawn_key=key)`` gives first."""
    return int(np.random.SeedSequence(master_seed, spawn_key=tuple(int(k) for k in key))
               .generate_state(1)[0])


def plan(configs: list, n_folds: int, n_seeds: int, *, seed: int = 0) -> list[Run]:
    """Runs of every configuration on every fold with ``n_seeds`` repeats (configuration-major).

    ``configs``: a list of parameter dicts. The seed of repeat ``r`` is
    ``derive_seed(seed, r)`` for every configuration and fold.
    """
    if n_folds < 1 or n_seeds < 1:
        raise ParameterError(f"need at least one fold and one seed, got {n_folds} folds, {n_seeds} seeds")
    seeds = [derive_seed(seed, r) for r in range(n_seeds)]
    cells = [(c, f, r) for c in range(len(configs)) for f in range(n_folds) for r in range(n_seeds)]
    return [Run(i, c, dict(configs[c]), f, r, seeds[r]) for i, (c, f, r) in enumerate(cells)]


@dataclass(frozen=True)
class Task:
    """What a worker needs to train one run (the fold's data travel apart, once per worker)."""

    run: Run
    estimator: object  # a class or a callable ``estimator(**params)``
    fixed: dict
    metrics: tuple
    convention: str
    single_thread: bool
    keep_scores: bool
    keep_models: bool = False


@dataclass
class Outcome:
    """A finished run: its table row and (with ``keep_scores``) its validation and test scores."""

    index: int
    row: dict
    scores: dict = field(default_factory=dict)
    model: object = None  # the fitted model, with ``keep_models``


def train_run(task: Task, fold: Fold) -> Outcome:
    """Train ``task.run`` on ``fold``; an exception becomes the row's ``error``, never a raise."""
    run = task.run
    row = {"run": run.index, "config": run.config, **run.params, "fold": fold.name,
           "repeat": run.repeat, "seed": run.seed, "n_trees": None}
    metric_columns = {f"{split}:{m}": float("nan") for split in SCORED_SPLITS for m in task.metrics}
    try:
        est = _estimator(task)
        est.fit(fold.train, eval_set=None if fold.valid is None else [fold.valid])
        row["n_trees"] = getattr(est.model_, "n_trees", None)
        scores = {}
        for split in SCORED_SPLITS:
            data = getattr(fold, split)
            if data is not None:
                scores[split] = est.predict(data)
                values = est.engine.evaluate(list(task.metrics), data.y, scores[split], data.query_offsets,
                                             convention=task.convention)
                metric_columns.update({f"{split}:{k}": float(v) for k, v in values.items()})
        return Outcome(run.index, {**row, **metric_columns, "error": ""},
                       scores if task.keep_scores else {}, est.model_ if task.keep_models else None)
    except Exception as e:  # noqa: BLE001  (one failed run must not stop the others)
        return Outcome(run.index, {**row, **metric_columns, "error": f"{type(e).__name__}: {e}"})


def _estimator(task: Task):
    """The run's estimator: fixed parameters, the configuration's, the seed (and one thread)."""
    params = {**task.fixed, **task.run.params, "seed": task.run.seed}
    names = getattr(task.estimator, "_param_names", None)
    if task.single_thread and names is not None and "n_threads" in names():
        params["n_threads"] = 1
    return task.estimator(**params)


class InProcess:
    """Runs one after another in this process (the default executor)."""

    parallel = False

    def map(self, tasks: list, folds: list):
        for task in tasks:
            yield train_run(task, folds[task.run.fold])

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class ScoreMatrix:
    """The scores of several runs on one evaluation set: ``scores[i]`` is run ``runs[i]``'s.

    scores : (n_runs, n_rows) float64;  y : (n_rows,);  query_offsets : (n_queries + 1,)
    """

    runs: np.ndarray
    scores: np.ndarray
    y: np.ndarray
    query_offsets: np.ndarray


@dataclass
class Results:
    """The outcome of :func:`execute`: ``rows`` (one dict per run, in run order) and the scores kept."""

    runs: list
    folds: list
    rows: list
    scores: dict = field(default_factory=dict)  # {(run index, split): (n_rows,) scores}
    models: dict = field(default_factory=dict)  # {run index: fitted model}, with ``keep_models``

    @property
    def columns(self) -> list:
        """Every column, in first-seen order (parameters may differ between configurations)."""
        return list(dict.fromkeys(k for row in self.rows for k in row))

    @property
    def failed(self) -> list:
        """The rows of the runs that raised (their ``error`` is not empty)."""
        return [row for row in self.rows if row["error"]]

    def column(self, name: str) -> np.ndarray:
        """One column over all runs as a float array (NaN where a run has no value)."""
        return np.array([np.nan if row.get(name) is None else row[name] for row in self.rows], dtype=float)

    def to_csv(self, path=None) -> str:
        """The table as CSV (floats written exactly, ``repr``); also written to ``path``, atomically."""
        out = io.StringIO()
        writer = csv.DictWriter(out, self.columns, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in self.rows)
        return _written(out.getvalue(), path)

    def to_json(self, path=None) -> str:
        """The table as a JSON list of row objects (NaN as null); also written to ``path``."""
        rows = [{k: None if isinstance(v, float) and np.isnan(v) else v for k, v in row.items()}
                for row in self.rows]
        return _written(json.dumps(rows, indent=1), path)

    def score_matrix(self, fold: int, split: str = "test") -> ScoreMatrix:
        """The runs of fold ``fold`` that kept scores on ``split``, as a :class:`ScoreMatrix`."""
        runs = [r.index for r in self.runs if r.fold == fold and (r.index, split) in self.scores]
        if not runs:
            raise ParameterError(f"no scores kept for fold {fold}, split {split!r}: execute(..., keep_scores=True)")
        data = getattr(self.folds[fold], split)
        return ScoreMatrix(np.array(runs), np.stack([self.scores[(i, split)] for i in runs]),
                           data.y, data.query_offsets)


def _cell(value):
    return repr(value) if isinstance(value, float) else ("" if value is None else value)


def _written(text: str, path) -> str:
    if path is not None:
        with atomic_output(path) as f:
            f.write(text.encode())
    return text


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`execute`: ``results`` holds the runs that finished before it, in plan
    order (a :class:`Results` of those runs only), and ``total`` the number of runs planned."""

    def __init__(self, results: Results, total: int):
        super().__init__(f"{len(results.rows)} of {total} runs finished")
        self.results, self.total = results, total


def execute(runs: list, folds: list, estimator, *, fixed: dict | None = None, metrics=("ndcg@10",),
            convention: str = DEFAULT_CONVENTION, executor=None, keep_scores: bool = False,
            keep_models: bool = False, progress=None, record=None) -> Results:
    """Train every run of ``runs`` on its fold and return the :class:`Results` table.

    Ctrl-C (``KeyboardInterrupt``) stops the executor's runs and raises :class:`Interrupted`,
    holding the runs finished before it.

    Parameters
    ----------
    runs : list of Run (:func:`plan`); folds : list of Fold, indexed by ``Run.fold``
    estimator : an estimator class (e.g. ``twinrank.fast.LambdaMART``) or any callable
        ``estimator(**params)`` returning an object with ``fit(train, eval_set=...)``,
        ``predict``, ``model_`` and ``engine``; called with ``fixed``, then the run's
        parameters, then ``seed=run.seed``.
    metrics, convention : what the ``valid:`` and ``test:`` columns hold.
    executor : :class:`InProcess` (default), or one of :mod:`twinrank.executors`
        (``ProcessPool``, ``DaskExecutor``; ``make_executor``).
    keep_scores : keep every run's validation and test scores (:meth:`Results.score_matrix`).
    keep_models : keep every run's fitted model (``Results.models``; bags and pools are built of them).
    progress : ``progress(done, total, row)`` called as each run finishes (in any order); when it
        returns True no further run is taken: the table holds the runs finished so far (the
        executor's map is closed, which stops the runs it started, as on Ctrl-C).
    record : a :class:`~twinrank.reference.ensembles.run_record.RunRecord`: the runs it holds
        finished are not trained again (their rows are read from it, without scores or models),
        and every run is added to it as it finishes.
    """
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    executor = executor or InProcess()
    outcomes = {} if record is None else {run.index: Outcome(run.index, record.row_of(run)) for run in runs
                                          if run.index in record.finished}
    tasks = [Task(run, estimator, dict(fixed or {}), metrics, convention, executor.parallel, keep_scores,
                  keep_models) for run in runs if run.index not in outcomes]
    try:
        with contextlib.closing(executor.map(tasks, list(folds))) as finished:
            for outcome in finished:
                outcomes[outcome.index] = outcome
                if record is not None:
                    record.append(outcome.row)
                if progress is not None and progress(len(outcomes), len(runs), outcome.row):
                    break
    except KeyboardInterrupt:
        raise Interrupted(_results(runs, folds, outcomes), len(runs)) from None
    return _results(runs, folds, outcomes)


def _results(runs: list, folds: list, outcomes: dict) -> Results:
    """The :class:`Results` of the runs finished (``outcomes``: ``{run index: Outcome}``), in plan order."""
    ordered = [outcomes[run.index] for run in runs if run.index in outcomes]
    scores = {(o.index, split): s for o in ordered for split, s in o.scores.items()}
    models = {o.index: o.model for o in ordered if o.model is not None}
    return Results([run for run in runs if run.index in outcomes], list(folds), [o.row for o in ordered],
                   scores, models)


def read_folds(directory) -> list[Fold]:
    """The folds of a LETOR folder: ``Fold1 .. FoldK``, each with ``train.txt``, ``vali.txt``, ``test.txt``.

    (As MQ2008 and MSLR ship; ``.txt.gz`` is read too.) Validation and test files are
    read with the training file's width.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ParameterError(f"--folds {directory}: no such folder")
    names = sorted((n for n in os.listdir(directory) if re.fullmatch(r"Fold\d+", n)
                    and os.path.isdir(os.path.join(directory, n))), key=lambda n: int(n[4:]))
    if not names:
        raise ParameterError(f"--folds {directory}: no Fold1 .. FoldK folders in it")
    return [_read_fold(os.path.join(directory, name), name) for name in names]


def _read_fold(folder: str, name: str) -> Fold:
    paths = {}
    for split in ("train", "vali", "test"):
        found = [p for p in (os.path.join(folder, f"{split}.txt"), os.path.join(folder, f"{split}.txt.gz"))
                 if os.path.exists(p)]
        if not found:
            raise ParameterError(f"{folder}: no {split}.txt (a fold folder holds train.txt, vali.txt, test.txt)")
        paths[split] = found[0]
    train = read_letor(paths["train"])
    width = {"n_features": train.n_features}
    return Fold(name, train, read_letor(paths["vali"], **width), read_letor(paths["test"], **width))


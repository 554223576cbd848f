"""The runs layer: the same table in process, in a process pool and on Dask (a LocalCluster and a
separately started scheduler with workers, one of them killed mid-run); failures; score matrices."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from twinrank.executors import DASK_INSTALL, DaskExecutor, ProcessPool, make_executor
from twinrank.reference import LambdaMART
from twinrank.reference.ensembles.runs import Fold, derive_seed, execute, plan
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import load_mq2008

FIXED = dict(n_trees=6, early_stopping_rounds=3, metric="ndcg@3", query_subsample=0.7, min_samples_leaf=3)
CONFIGS = [{"max_leaves": 4, "learning_rate": 0.1}, {"max_leaves": 7, "learning_rate": 0.2}]


@pytest.fixture(scope="module")
def folds():
    out = []
    for k in (1, 2):
        train, vali, test = load_mq2008(k)
        out.append(Fold(f"Fold{k}", train.take_queries(range(30)), vali.take_queries(range(15)),
                        test.take_queries(range(15))))
    return out


def grid(folds, executor=None, **kwargs):
    runs = plan(CONFIGS, len(folds), 2, seed=7)
    return execute(runs, folds, LambdaMART, fixed=FIXED, metrics=["ndcg@3", "map"], executor=executor, **kwargs)


@pytest.fixture(scope="module")
def in_process(folds):
    return grid(folds)


def test_one_row_per_configuration_fold_and_seed(in_process):
    rows = in_process.rows
    assert len(rows) == len(CONFIGS) * 2 * 2
    assert {(r["config"], r["fold"], r["repeat"]) for r in rows} == {
        (c, f, s) for c in range(2) for f in ("Fold1", "Fold2") for s in range(2)}
    assert not in_process.failed
    assert all(0 < r["test:ndcg@3"] <= 1 and 1 <= r["n_trees"] <= 6 for r in rows)


def test_seeds_come_from_the_master_seed_by_repeat_only(in_process):
    seeds = {r["repeat"]: set() for r in in_process.rows}
    for r in in_process.rows:
        seeds[r["repeat"]].add(r["seed"])
    assert seeds == {0: {derive_seed(7, 0)}, 1: {derive_seed(7, 1)}}
    assert derive_seed(7, 0) != derive_seed(7, 1) != derive_seed(8, 1)
    # the seeds matter: query subsampling gives the two repeats different models
    a, b = (in_process.column("valid:ndcg@3")[r::2] for r in (0, 1))
    assert not np.array_equal(a, b)


def test_process_pool_gives_the_same_table(folds, in_process):
    assert grid(folds, ProcessPool(2)).to_csv() == in_process.to_csv()


def test_a_failing_run_reports_its_configuration_and_the_others_finish(folds):
    runs = plan([{"max_leaves": 4}, {"max_leaves": 1}], 1, 1)
    results = execute(runs, folds[:1], LambdaMART, fixed=FIXED)
    good, bad = results.rows
    assert good["error"] == "" and good["valid:ndcg@10"] > 0
    assert bad["max_leaves"] == 1 and "max_leaves" in bad["error"] and np.isnan(bad["test:ndcg@10"])
    assert results.failed == [bad]


def test_scores_kept_form_a_score_matrix(folds):
    results = grid(folds, keep_scores=True)
    matrix = results.score_matrix(1, "test")
    assert list(matrix.runs) == [r.index for r in results.runs if r.fold == 1]
    assert matrix.scores.shape == (4, folds[1].test.n_rows)
    run = results.runs[int(matrix.runs[0])]
    model = LambdaMART(**FIXED, **run.params, seed=run.seed).fit(folds[1].train, eval_set=[folds[1].valid])
    np.testing.assert_array_equal(matrix.scores[0], model.predict(folds[1].test))
    np.testing.assert_array_equal(matrix.query_offsets, folds[1].test.query_offsets)


def test_csv_and_json_writers(in_process, tmp_path):
    in_process.to_csv(tmp_path / "r.csv")
    in_process.to_json(tmp_path / "r.json")
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].split(",")[:4] == ["run", "config", "max_leaves", "learning_rate"]
    assert len(lines) == 9
    rows = json.loads((tmp_path / "r.json").read_text())
    assert rows[3]["test:map"] == in_process.rows[3]["test:map"]  # floats round-trip exactly


def test_executor_options_are_exclusive_and_dask_missing_says_how_to_install(monkeypatch):
    with pytest.raises(ParameterError, match="at most one"):
        make_executor(n_jobs=2, workers=2)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ParameterError, match=r"pip install 'twinrank\[distributed\]'") as e:
        make_executor(workers=2)
    assert str(e.value) == DASK_INSTALL


def test_dask_local_cluster_gives_the_same_table(folds, in_process):
    pytest.importorskip("distributed")
    executor = DaskExecutor(workers=2)
    try:
        assert len(executor.client.scheduler_info()["workers"]) == 2
        assert grid(folds, executor).to_csv() == in_process.to_csv()
    finally:
        executor.close()


@pytest.fixture
def scheduler(tmp_path):
    """A ``dask scheduler`` and two ``dask worker`` s (no nanny) as subprocesses on 127.0.0.1."""
    pytest.importorskip("distributed")
    file = tmp_path / "scheduler.json"
    spawned = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for _ in range(2):
            spawned.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file),
                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        address = json.loads(file.read_text())["address"]
        import distributed
        with distributed.Client(address) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, spawned[1:]
    finally:
        for p in reversed(spawned):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in spawned:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_a_separate_scheduler_gives_the_same_table_even_when_a_worker_dies(folds, in_process, scheduler):
    address, workers = scheduler
    executor = make_executor(scheduler=address)
    done = []

    def kill_one_worker(n, total, row):
        done.append(n)
        if n == 2:
            workers[0].send_signal(signal.SIGKILL)

    try:
        assert grid(folds, executor).to_csv() == in_process.to_csv()
        again = grid(folds, executor, progress=kill_one_worker)
    finally:
        executor.close()
    assert workers[0].wait(timeout=20) == -signal.SIGKILL
    assert again.to_csv() == in_process.to_csv()
    assert done == list(range(1, len(in_process.rows) + 1))

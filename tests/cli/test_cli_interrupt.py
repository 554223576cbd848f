"""Ctrl-C: a real SIGINT to a running command ends it with one line and status 130, no traceback,
and leaves no partial file and no child process."""
import os
import signal
import subprocess
import sys
import time

import pytest
from synthetic import ranking_data

from twinrank.reference.io.letor import write_letor


def start(argv, cwd, *, group=False):
    """``twinrank ARGV`` in a subprocess (its own session with ``group``, as a terminal's job)."""
    return subprocess.Popen([sys.executable, "-m", "twinrank.cli", *argv], cwd=cwd, stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=group)


def interrupt_when(process, started, *, group=False, timeout=120):
    """Read stderr until a line satisfies ``started``, send SIGINT (to the process group with ``group``:
    what Ctrl-C in a terminal does); return (exit status, stderr lines, stdout)."""
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if started(line):
            break
    else:
        process.kill()
    assert lines and started(lines[-1]), lines
    (os.killpg if group else os.kill)(process.pid, signal.SIGINT)
    out, rest = process.communicate(timeout=timeout)
    return process.returncode, lines + rest.splitlines(), out


def session_processes(sid: int) -> list:
    """The processes still alive in session ``sid`` (zombies excepted), from /proc."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(pid))
    return found


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a process is POSIX")
def test_ctrl_c_in_train_is_one_line_and_status_130(tmp_path):
    write_letor(ranking_data(seed=1, n_queries=30), tmp_path / "train.txt")
    process = start(["train", "--train", "train.txt", "--model", "m.json", "--trees", "1000000", "--leaves", "4",
                     "--engine", "reference"], tmp_path)
    status, err, _ = interrupt_when(process, lambda line: line.startswith("[   20/"))
    assert status == 130
    assert not any("Traceback" in line for line in err), err
    assert err[-1].startswith("twinrank train: interrupted (Ctrl-C); after ")
    assert err[-1].endswith(" of 1000000 trees; no model written")
    assert os.listdir(tmp_path) == ["train.txt"]


@pytest.fixture(scope="module")
def folds(tmp_path_factory):
    """Two MQ2008 folds in miniature, LETOR layout."""
    from twinrank.reference.io.data import load_mq2008

    root = tmp_path_factory.mktemp("folds")
    for k in (1, 2):
        (root / f"Fold{k}").mkdir()
        for name, data, n in zip(("train", "vali", "test"), load_mq2008(k), (24, 12, 12)):
            write_letor(data.take_queries(range(n)), root / f"Fold{k}" / f"{name}.txt")
    return root


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a process group is POSIX")
@pytest.mark.parametrize("where", [["--jobs", "2"], ["--workers", "2"]], ids=["processes", "dask"])
def test_ctrl_c_in_a_grid_keeps_the_finished_runs_and_leaves_no_process(folds, tmp_path, where):
    """Ctrl-C as a terminal sends it, to every process of the job: one line, status 130, the finished
    runs' table, and every worker process gone."""
    if "--workers" in where:
        pytest.importorskip("distributed")
    process = start(["grid", "--folds", str(folds), "--param", "max_leaves=3,7", "--seeds", "2", "--trees", "300",
                     "--early-stopping", "0", "--engine", "reference", "--output", "r.csv", *where], tmp_path,
                    group=True)
    status, err, _ = interrupt_when(process, lambda line: line.startswith("[runs 1/8]"), group=True)
    time.sleep(0.5)  # a worker killed last may take a moment to be reaped by its parent
    assert status == 130 and session_processes(process.pid) == []
    assert not any("Traceback" in line or "WARNING" in line for line in err), err
    assert err[-1].startswith("twinrank grid: interrupted (Ctrl-C); ")
    assert "runs written to r.csv and recorded in r.csv.runs.jsonl; the same command with --resume" in err[-1]
    done = int(err[-1].split("; ")[1].split()[0])
    assert done >= 1 and len((tmp_path / "r.csv").read_text().splitlines()) == 1 + done

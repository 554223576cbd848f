"""Grid search: the table (one row per configuration, fold and seed), a row reproduced by
``twinrank train`` alone, the same table on Dask, selection, the overfitting curve, bad input."""
import csv
import json
import sys

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference import LambdaMART
from twinrank.reference.analysis.grid import configurations, grid_search, overfitting_curve
from twinrank.reference.ensembles import runs
from twinrank.reference.ensembles.runs import read_folds
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import write_letor
from twinrank.reference.sampling import make_rng

GRID = ["--param", "max_leaves=3,7", "--param", "learning_rate=0.05,0.2", "--set", "query_subsample=0.7",
        "--set", "min_samples_leaf=3", "--seeds", "2", "--metric", "ndcg@3", "--trees", "6",
        "--early-stopping", "3", "--quiet", "--engine", "reference"]


@pytest.fixture(scope="module")
def folds_dir(tmp_path_factory):
    """Two MQ2008 folds in miniature (24 training queries, 12 validation, 12 test), LETOR layout."""
    root = tmp_path_factory.mktemp("folds")
    for k in (1, 2):
        train, vali, test = load_mq2008(k)
        (root / f"Fold{k}").mkdir()
        for name, data, n in (("train", train, 24), ("vali", vali, 12), ("test", test, 12)):
            write_letor(data.take_queries(range(n)), root / f"Fold{k}" / f"{name}.txt")
    return root


@pytest.fixture(scope="module")
def table(folds_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("grid") / "results.csv"
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out)]) == 0
    return out


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_one_row_per_configuration_fold_and_seed(table):
    rows = rows_of(table)
    assert len(rows) == 4 * 2 * 2
    assert {(r["max_leaves"], r["learning_rate"], r["fold"], r["repeat"]) for r in rows} == {
        (str(l), str(r), f"Fold{k}", str(s)) for l in (3, 7) for r in (0.05, 0.2) for k in (1, 2) for s in (0, 1)}
    assert all(r["error"] == "" and 0 < float(r["test:ndcg@3"]) <= 1 for r in rows)


def test_a_row_is_reproduced_by_twinrank_train_alone(table, folds_dir, tmp_path, capsys):
    row = rows_of(table)[13]
    fold = folds_dir / row["fold"]
    model, scores = tmp_path / "m.json", tmp_path / "s.txt"
    assert main(["train", "--engine", "reference", "--train", str(fold / "train.txt"), "--valid",
                 str(fold / "vali.txt"), "--model", str(model), "--max-leaves", row["max_leaves"],
                 "--learning-rate", row["learning_rate"], "--query-subsample", "0.7", "--min-samples-leaf", "3",
                 "--n-trees", "6", "--early-stopping-rounds", "3", "--metric", "ndcg@3", "--seed", row["seed"],
                 "--quiet"]) == 0
    assert json.loads(model.read_text())["trees"].__len__() == int(row["n_trees"])
    assert main(["predict", "--engine", "reference", "--model", str(model), "--data", str(fold / "test.txt"),
                 "--output", str(scores)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--data", str(fold / "test.txt"), "--scores", str(scores), "--metric", "ndcg@3",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ndcg@3"] == float(row["test:ndcg@3"])


def test_the_same_grid_on_two_dask_workers_gives_the_same_table(table, folds_dir, tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "dask.csv"
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out), "--workers", "2"]) == 0
    assert out.read_text() == table.read_text()


def test_top_table_and_plot(folds_dir, table, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out, png = tmp_path / "r.json", tmp_path / "over.png"
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out), "--plot", str(png),
                 "--draws", "50", "--top", "2"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("# top 2 of 4 configurations") and len(printed) == 4
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curve = (tmp_path / "over.csv").read_text().splitlines()
    assert curve[1] == "size,valid,test" and len(curve) == 6
    assert len(json.loads(out.read_text())) == 16


def test_selection_by_the_mean_over_folds_and_seeds(folds_dir):
    folds = read_folds(folds_dir)
    result = grid_search(LambdaMART, folds, {"max_leaves": [3, 7]}, n_seeds=2, metric="ndcg@3",
                         fixed={"n_trees": 4, "query_subsample": 0.7})
    valid = result.results.column("valid:ndcg@3")
    means = [valid[:4].mean(), valid[4:].mean()]
    summary = result.summary()
    assert [s["valid"] for s in summary] == sorted(means, reverse=True)
    assert result.best() == {"max_leaves": [3, 7][int(np.argmax(means))]}
    assert summary[0]["runs"] == 4 and summary[0]["failed"] == 0


def test_configurations_vary_the_last_parameter_fastest():
    assert configurations({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(ParameterError, match="no values"):
        configurations({"a": []})


def test_overfitting_curve_matches_a_plain_loop():
    rng = np.random.default_rng(0)
    valid, test = rng.random(9).round(1), rng.random(9)  # rounded: ties in validation happen
    curve = overfitting_curve(valid, test, draws=200, seed=4)
    orders = np.argsort(make_rng(4).random((200, 9)), axis=1, kind="stable")
    for n in range(1, 10):
        winners = []
        for order in orders:
            best = order[0]
            for c in order[1:n]:
                if valid[c] > valid[best]:
                    best = c
            winners.append(best)
        assert curve["valid"][n - 1] == pytest.approx(valid[winners].mean(), abs=1e-15)
        assert curve["test"][n - 1] == pytest.approx(test[winners].mean(), abs=1e-15)
    assert curve["valid"][-1] == pytest.approx(valid.max(), abs=1e-15)  # all tried: always the best


def test_bad_grid_input(folds_dir, tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "r.csv")
    cases = [(["--param", "max_leafs=3,7"], "no parameter 'max_leafs'"),
             (["--param", "max_leaves=3,x"], "max_leaves=3,x"),
             (["--param", "max_leaves"], "expected NAME=VALUE"),
             (["--folds", str(tmp_path)], "no Fold1"),
             (["--param", "max_leaves=3", "--set", "max_leaves=4"], "both in --param and --set")]
    for extra, message in cases:
        argv = ["grid", "--folds", str(folds_dir), "--output", out, "--quiet", *extra]
        assert main(argv) == 2, extra
        assert message in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["grid", "--folds", str(folds_dir), "--output", out, "--workers", "2"]) == 2
    assert "pip install 'twinrank[distributed]'" in capsys.readouterr().err


def test_an_interrupted_grid_resumes_to_the_same_table(folds_dir, table, tmp_path, capsys, monkeypatch):
    """Ctrl-C in the 6th run: one line and status 130, the table and the record of the 5 finished runs;
    --resume trains the other 11 only, and writes the table of a grid never interrupted."""
    trained = []

    def train_run(task, fold):
        if len(trained) == 5 and stop:
            raise KeyboardInterrupt
        trained.append(task.run.index)
        return real_train_run(task, fold)

    real_train_run, stop = runs.train_run, True
    monkeypatch.setattr(runs, "train_run", train_run)
    out = tmp_path / "results.csv"
    capsys.readouterr()
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"twinrank grid: interrupted (Ctrl-C); 5 of 16 runs written to {out} and recorded in "
                   f"{out}.runs.jsonl; the same command with --resume trains the other 11"]
    assert [int(r["run"]) for r in rows_of(out)] == trained == [0, 1, 2, 3, 4]
    assert len((tmp_path / "results.csv.runs.jsonl").read_text().splitlines()) == 1 + 5
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out)]) == 2  # not without --resume
    assert "records 5 of the 16 runs of a search that stopped before its end" in capsys.readouterr().err
    stop = False
    assert main(["grid", "--folds", str(folds_dir), *GRID, "--output", str(out), "--resume"]) == 0
    assert trained == list(range(16))  # each run trained once in all
    assert out.read_text() == table.read_text()


def test_a_record_resumes_only_its_own_search(folds_dir, tmp_path):
    folds = read_folds(folds_dir)
    record = tmp_path / "runs.jsonl"
    fixed = {"n_trees": 2, "min_samples_leaf": 3}
    search = dict(n_seeds=1, metric="ndcg@3", fixed=fixed, record=record)
    first = grid_search(LambdaMART, folds, {"max_leaves": [3, 7]}, **search)
    with pytest.raises(ParameterError, match=r"param_grid.max_leaves: \[3, 7\] in the record, \[3, 9\] now"):
        grid_search(LambdaMART, folds, {"max_leaves": [3, 9]}, **search, resume=True)
    with pytest.raises(ParameterError, match=r"fixed.n_trees: 2 in the record, 3 now"):
        grid_search(LambdaMART, folds, {"max_leaves": [3, 7]}, **{**search, "fixed": {**fixed, "n_trees": 3}},
                    resume=True)
    other = read_folds(folds_dir)
    other[1] = runs.Fold(other[1].name, other[1].train.take_queries(range(20)), other[1].valid, other[1].test)
    with pytest.raises(ParameterError, match=r"folds.Fold2: \"\w+\" in the record, \"\w+\" now"):
        grid_search(LambdaMART, other, {"max_leaves": [3, 7]}, **search, resume=True)
    lines = record.read_bytes().split(b"\n")
    record.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:20])  # two runs kept, the third cut short
    resumed = grid_search(LambdaMART, folds, {"max_leaves": [3, 7]}, **search, resume=True)
    assert resumed.results.to_csv() == first.results.to_csv()
    assert len(record.read_text().splitlines()) == 1 + 4  # the cut line gone, the two runs added again

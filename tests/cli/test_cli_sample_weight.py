"""``twinrank train --sample-weight FILE``: LightGBM's weight file, one number per line, one per row
or one per query; ``grid --sample-weight NAME`` (the file in each fold's folder) and
``experiment variance --sample-weight FILE`` read it the same way.

Oracles: the command's model is the Python API's ``fit(train, sample_weight=w)`` on the same file,
in both engines; a file of one weight per query is the file of each query's weight repeated over
its rows; a bad file is refused in one line naming the file, the line and the field.
"""
import csv
import dataclasses
import importlib
import json

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.analysis.pools import variance_experiment
from twinrank.reference.io.letor import read_letor, write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.trees.predict import predict_ensemble

FLAGS = ["--trees", "4", "--leaves", "4", "--min-samples-leaf", "2", "--quiet"]


@pytest.fixture
def files(tmp_path):
    train = ranking_data(seed=1, n_queries=20)
    write_letor(train, tmp_path / "train.txt")
    return tmp_path, read_letor(tmp_path / "train.txt")


def write_numbers(path, numbers) -> str:
    path.write_text("".join(f"{v!r}\n" for v in np.asarray(numbers, dtype=float).tolist()))
    return str(path)


def train(tmp, weights, model="m.json", *extra):
    return main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / model), *FLAGS,
                 *(["--sample-weight", weights] if weights else []), *extra])


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_the_command_fits_what_the_python_api_fits_with_the_same_weights(files, engine):
    tmp, data = files
    w = np.random.default_rng(3).uniform(0.0, 3.0, data.n_rows)
    assert train(tmp, write_numbers(tmp / "train.txt.w", w), "m.json", "--engine", engine) == 0
    LambdaMART = importlib.import_module(f"twinrank.{engine}").LambdaMART
    api = LambdaMART(n_trees=4, max_leaves=4, min_samples_leaf=2).fit(data, sample_weight=w)
    np.testing.assert_array_equal(predict_ensemble(Ensemble.load(tmp / "m.json"), data.X), api.predict(data))
    assert train(tmp, None, "plain.json", "--engine", engine) == 0
    plain = predict_ensemble(Ensemble.load(tmp / "plain.json"), data.X)
    assert np.max(np.abs(plain - api.predict(data))) > 1e-6  # the weights matter


def test_one_weight_per_query_is_that_weight_on_each_of_its_rows(files):
    tmp, data = files
    per_query = np.arange(1, data.n_queries + 1) % 3 + 0.5
    assert train(tmp, write_numbers(tmp / "q.weight", per_query), "q.json") == 0
    assert train(tmp, write_numbers(tmp / "r.weight", np.repeat(per_query, data.query_sizes)), "r.json") == 0
    assert (tmp / "q.json").read_text() == (tmp / "r.json").read_text()


@pytest.mark.parametrize("text, where, says", [
    ("1\n2\nabc\n", ":3:", "weight 'abc' is not a number"),
    ("1\n-2\n", ":2:", "weight -2.0 is negative"),
    ("1\n2 3\n", ":2:", "expected one weight per line, got '2 3'"),
    ("1\ninf\n", ":2:", "weight 'inf' is not a finite number"),
    ("1\n2\n3\n", ": ", "holds 3 weights: give one per row"),
    ("{\"trees\": []}\n", ":1:", "looks like a model file (JSON), not a weight file"),
])
def test_a_bad_weight_file_is_one_line_naming_the_file_the_line_and_the_field(files, capsys, text, where, says):
    tmp, _ = files
    (tmp / "bad.weight").write_text(text)
    assert train(tmp, str(tmp / "bad.weight")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"bad.weight{where}" in err and says in err
    assert not (tmp / "m.json").exists()


def test_zero_weights_too_many_weights_and_a_missing_file_are_refused(files, capsys):
    tmp, data = files
    assert train(tmp, write_numbers(tmp / "zero.weight", np.zeros(data.n_rows))) == 2
    assert "zero.weight: every weight is 0" in capsys.readouterr().err
    assert train(tmp, write_numbers(tmp / "long.weight", np.ones(data.n_rows + 5))) == 2
    assert f"long.weight:{data.n_rows + 1}: holds more than the {data.n_rows} weights" in capsys.readouterr().err
    assert train(tmp, str(tmp / "absent.weight")) == 2
    assert "--sample-weight" in capsys.readouterr().err and not (tmp / "m.json").exists()


def test_the_model_may_not_overwrite_the_weight_file(files, capsys):
    tmp, data = files
    weights = write_numbers(tmp / "w.txt", np.ones(data.n_rows))
    assert train(tmp, weights, "w.txt") == 2
    err = capsys.readouterr().err
    assert "--model" in err and "--sample-weight" in err
    assert (tmp / "w.txt").read_text().count("\n") == data.n_rows


def test_lightgbms_sibling_weight_file_is_not_read_unless_named_and_the_command_says_so(files, capsys):
    tmp, data = files
    assert train(tmp, None, "alone.json") == 0
    write_numbers(tmp / "train.txt.weight", np.arange(data.n_rows) % 4)
    assert train(tmp, None, "plain.json") == 0
    assert "train.txt.weight is not read" in capsys.readouterr().err
    assert (tmp / "plain.json").read_text() == (tmp / "alone.json").read_text()
    assert train(tmp, str(tmp / "train.txt.weight"), "named.json") == 0
    assert "is not read" not in capsys.readouterr().err
    assert (tmp / "named.json").read_text() != (tmp / "plain.json").read_text()


def test_a_setting_that_cannot_weigh_rows_names_the_flag(files, capsys):
    tmp, data = files
    weights = write_numbers(tmp / "w.weight", np.ones(data.n_rows))
    assert train(tmp, weights, "m.json", "--split-gain", "least_squares") == 2
    err = capsys.readouterr().err
    assert "split_gain='least_squares'" in err and "--sample-weight" in err
    assert not (tmp / "m.json").exists()


# ----------------------------------------------------------------------------- grid and experiment

GRID = ["--param", "max_leaves=3,5", "--set", "min_samples_leaf=2", "--seeds", "1", "--trees", "3",
        "--early-stopping", "0", "--metric", "ndcg@5", "--quiet"]


@pytest.fixture
def folds(tmp_path):
    """Two folds of synthetic queries, LETOR layout, and each fold's training rows' count."""
    n_rows = {}
    for k in (1, 2):
        fold = tmp_path / f"Fold{k}"
        fold.mkdir()
        for name, seed in (("train", k), ("vali", 10 + k), ("test", 20 + k)):
            write_letor(ranking_data(seed=seed, n_queries=15), fold / f"{name}.txt")
        n_rows[f"Fold{k}"] = read_letor(fold / "train.txt").n_rows
    return tmp_path, n_rows


def grid(tmp, out, *extra):
    return main(["grid", "--folds", str(tmp), *GRID, "--output", str(tmp / out), *extra])


def metrics_of(path):
    with open(path) as f:
        return [(row["valid:ndcg@5"], row["test:ndcg@5"]) for row in csv.DictReader(f)]


def test_grid_weighs_each_folds_training_rows_by_the_named_file_in_its_folder(folds, capsys):
    tmp, n_rows = folds
    assert grid(tmp, "plain.csv") == 0
    for fold, n in n_rows.items():
        write_numbers(tmp / fold / "ones.weight", np.ones(n))
        write_numbers(tmp / fold / "w.weight", np.random.default_rng(n).uniform(0.0, 4.0, n))
    assert grid(tmp, "ones.csv", "--sample-weight", "ones.weight") == 0
    assert grid(tmp, "w.csv", "--sample-weight", "w.weight") == 0
    assert metrics_of(tmp / "ones.csv") == metrics_of(tmp / "plain.csv")  # weights of 1 are no weights
    assert metrics_of(tmp / "w.csv") != metrics_of(tmp / "plain.csv")
    (tmp / "Fold2" / "w.weight").unlink()
    capsys.readouterr()
    assert grid(tmp, "missing.csv", "--sample-weight", "w.weight") == 2
    err = capsys.readouterr().err
    assert "--sample-weight" in err and "Fold2" in err and not (tmp / "missing.csv").exists()


def test_a_grid_record_resumes_only_with_the_same_weights(folds, capsys):
    tmp, n_rows = folds
    for fold, n in n_rows.items():
        write_numbers(tmp / fold / "w.weight", np.arange(n) % 3 + 1.0)
    assert grid(tmp, "w.csv", "--sample-weight", "w.weight") == 0
    assert grid(tmp, "w.csv", "--resume") == 2  # the record's folds were weighted
    assert "recorded for other settings" in capsys.readouterr().err


def test_grid_names_a_lightgbm_weight_file_it_does_not_read(folds, capsys):
    tmp, n_rows = folds
    write_numbers(tmp / "Fold1" / "train.txt.weight", np.ones(n_rows["Fold1"]))
    assert grid(tmp, "plain.csv") == 0
    assert "Fold1/train.txt.weight is not read" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_the_variance_experiment_samples_the_weighted_rows_as_the_python_api_does(files, capsys, engine):
    tmp, data = files
    write_letor(ranking_data(seed=2, n_queries=15), tmp / "test.txt")
    w = np.random.default_rng(5).uniform(0.0, 3.0, data.n_rows)
    argv = ["experiment", "variance", "--train", str(tmp / "train.txt"), "--test", str(tmp / "test.txt"),
            "--set", "n_trees=3", "--set", "max_leaves=4", "--models", "2", "--samples", "2", "--metric", "ndcg@5",
            "--convention", "lightgbm", "--json", "--quiet", "--engine", engine]
    assert main(argv + ["--sample-weight", write_numbers(tmp / "w.weight", w)]) == 0
    weighted = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) != weighted
    twin, bagging = (importlib.import_module(f"twinrank.{engine}{name}") for name in ("", ".rankers.bagging"))
    test = read_letor(tmp / "test.txt", n_features=data.n_features)
    methods = {"LambdaMART": lambda seed: twin.LambdaMART(n_trees=3, max_leaves=4, seed=seed),
               "BL-MART (B=2)": lambda seed: bagging.BLMART(n_trees=3, max_leaves=4, seed=seed, n_models=2)}
    api = variance_experiment(methods, dataclasses.replace(data, weight=w), test, samples=2, fraction=0.67,
                              metrics=("ndcg@5",), convention="lightgbm", seed=0)
    assert weighted["mean"] == api.mean and weighted["variance"] == api.variance

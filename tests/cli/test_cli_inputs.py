"""The CLI's checks of the user's files and flags, on small files."""
import json
import subprocess
import sys

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import read_letor, read_scores, write_letor
from twinrank.reference.io.model import Ensemble

FAST = ["--leaves", "4", "--min-samples-leaf", "2", "--quiet"]


@pytest.fixture
def files(tmp_path):
    write_letor(ranking_data(seed=1, n_queries=20), tmp_path / "train.txt")
    write_letor(ranking_data(seed=2, n_queries=8), tmp_path / "valid.txt")
    no_qid = "\n".join(" ".join(t for t in line.split() if not t.startswith("qid:"))
                       for line in (tmp_path / "train.txt").read_text().splitlines())
    (tmp_path / "noqid.txt").write_text(no_qid + "\n")
    return tmp_path


def error_of(capsys) -> str:
    """The one error line a failed command printed last (earlier lines: earlier commands' summaries)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("twinrank ") and ": error: " in line
    return line


def train(tmp, *extra):
    return main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / "m.json"), *FAST, *extra])


# ----------------------------------------------------------------------------- item 3: no queries


def test_reader_records_whether_the_file_had_queries(files):
    assert read_letor(files / "train.txt").has_queries
    data = read_letor(files / "noqid.txt")
    assert not data.has_queries and data.n_queries == 1
    (files / "noqid.txt.query").write_text(f"{data.n_rows - 3}\n3\n")
    assert read_letor(files / "noqid.txt").has_queries
    assert Dataset(data.X, data.y, [0, data.n_rows]).has_queries  # offsets given: the caller's queries


def test_train_refuses_a_file_without_queries(files, capsys):
    assert main(["train", "--train", str(files / "noqid.txt"), "--model", str(files / "m.json"), *FAST]) == 2
    err = error_of(capsys)
    assert err.startswith("twinrank train: error: ") and "noqid.txt" in err and "qid" in err
    assert not (files / "m.json").exists()


def test_train_refuses_a_validation_file_without_queries(files, capsys):
    assert train(files, "--valid", str(files / "noqid.txt")) == 2
    assert "noqid.txt" in error_of(capsys)


def test_pointwise_training_takes_one_query_only_when_asked(files, capsys):
    args = ["train", "--train", str(files / "noqid.txt"), "--model", str(files / "m.json"),
            "--algorithm", "gbrt", "--trees", "2", *FAST]
    assert main(args) == 2 and "--single-query" in error_of(capsys)
    assert main(args + ["--single-query"]) == 0
    assert Ensemble.load(files / "m.json").n_trees == 2
    capsys.readouterr()
    assert train(files, "--train", str(files / "noqid.txt"), "--single-query") == 2  # never for lambdamart
    assert "lambdamart" in error_of(capsys)


def test_evaluate_refuses_query_metrics_on_a_file_without_queries(files, capsys):
    data = read_letor(files / "noqid.txt")
    (files / "s.txt").write_text("".join(f"{v}\n" for v in np.arange(data.n_rows)))
    args = ["evaluate", "--data", str(files / "noqid.txt"), "--scores", str(files / "s.txt")]
    assert main(args) == 2
    assert "noqid.txt" in error_of(capsys)
    assert main(args + ["--metric", "rmse"]) == 0  # a metric over rows needs no queries
    capsys.readouterr()
    assert main(args + ["--metric", "ndcg@10", "--single-query", "--json"]) == 0
    assert 0 < json.loads(capsys.readouterr().out)["ndcg@10"] <= 1


# ----------------------------------------------------------------------------- item 4: width


@pytest.fixture
def model(files):
    assert train(files, "--trees", "3") == 0
    return files / "m.json"


def test_predict_refuses_a_narrower_file_unless_asked(files, model, capsys):
    narrow = files / "narrow.txt"
    narrow.write_text("1 qid:1 1:0.5 2:0.25\n0 qid:1 1:0.1 2:0.75\n")
    args = ["predict", "--model", str(model), "--data", str(narrow), "--output", str(files / "s.txt")]
    assert main(args) == 2
    err = error_of(capsys)
    assert "narrow.txt" in err and "2 features" in err and "6" in err and "--allow-fewer-features" in err
    assert not (files / "s.txt").exists()
    assert main(args + ["--allow-fewer-features"]) == 0
    padded = np.zeros((2, 6), dtype=np.float32)
    padded[:, :2] = [[0.5, 0.25], [0.1, 0.75]]
    from twinrank.reference.trees.predict import predict_ensemble
    np.testing.assert_array_equal(read_scores(files / "s.txt"), predict_ensemble(Ensemble.load(model), padded))


# ----------------------------------------------------------------------------- item 5: paths


def test_an_unwritable_model_path_fails_before_training(files, capsys, monkeypatch):
    import twinrank.reference.io.letor as letor
    monkeypatch.setattr(letor, "read_letor", lambda *a, **k: pytest.fail("data read before the check"))
    code = main(["train", "--train", str(files / "train.txt"), "--model", "/nonexistent/dir/m.json", *FAST])
    err = error_of(capsys)
    assert code == 2 and "/nonexistent/dir/m.json" in err and ".tmp-" not in err and "Errno" not in err


@pytest.mark.parametrize("command", [
    ["train", "--train", "{tmp}/missing.txt", "--model", "{tmp}/m.json"],
    ["train", "--train", "{tmp}/train.txt", "--valid", "{tmp}/missing.txt", "--model", "{tmp}/m.json"],
    ["predict", "--model", "{tmp}/missing.txt", "--data", "{tmp}/train.txt"],
    ["evaluate", "--data", "{tmp}/train.txt", "--scores", "{tmp}/missing.txt"],
])
def test_a_missing_input_is_named_without_errno_text(files, capsys, command):
    assert main([a.format(tmp=files) for a in command]) == 2
    err = error_of(capsys)
    assert f"{files}/missing.txt: no such file" in err and "Errno" not in err


def test_predict_checks_its_output_before_reading(files, model, capsys):
    assert main(["predict", "--model", str(model), "--data", str(files / "train.txt"),
                 "--output", str(files / "no" / "s.txt")]) == 2
    assert "no/s.txt" in error_of(capsys)


def test_an_atomic_write_names_the_users_path(tmp_path):
    from twinrank.reference.io.letor import write_scores
    with pytest.raises(OSError) as e:
        write_scores(tmp_path / "no" / "s.txt", [1.0])
    assert e.value.filename == str(tmp_path / "no" / "s.txt") and ".tmp-" not in str(e.value)


# ----------------------------------------------------------------------------- item 7: predict, --version, help


def test_version():
    result = subprocess.run([sys.executable, "-m", "twinrank.cli", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("twinrank ")


def test_predict_writes_to_stdout_without_output(files, model, capsys):
    assert main(["predict", "--model", str(model), "--data", str(files / "valid.txt")]) == 0
    out = capsys.readouterr().out.split()
    assert len(out) == read_letor(files / "valid.txt").n_rows
    assert main(["predict", "--model", str(model), "--data", str(files / "valid.txt"), "--output", "-"]) == 0
    assert capsys.readouterr().out.split() == out


def test_predict_with_the_first_trees(files, capsys):
    assert train(files, "--trees", "6", "--valid", str(files / "valid.txt")) == 0
    full = Ensemble.load(files / "m.json")
    data = read_letor(files / "valid.txt")
    from twinrank.reference.trees.predict import predict_ensemble
    for trees, k in (("2", 2), ("best", full.best_iteration)):
        assert main(["predict", "--model", str(files / "m.json"), "--data", str(files / "valid.txt"),
                     "--trees", trees, "--output", str(files / "s.txt")]) == 0
        np.testing.assert_array_equal(read_scores(files / "s.txt"), predict_ensemble(full.truncated(k), data.X))
    assert main(["predict", "--model", str(files / "m.json"), "--data", str(files / "valid.txt"), "--trees", "7"]) == 2
    assert "6 trees" in error_of(capsys)


@pytest.mark.parametrize("flags, reason", [
    ((), "it was trained without validation data (--valid)"),
    (("--valid", "VALID", "--algorithm", "dart"), "this dart model keeps none, since its first k trees were rescaled"),
    (("--valid", "VALID", "--algorithm", "gbrt", "--average-runs", "2"), "its runs (--average-runs > 1)"),
])
def test_trees_best_names_why_the_model_has_no_best_iteration(files, capsys, flags, reason):
    flags = [str(files / "valid.txt") if f == "VALID" else f for f in flags]
    assert train(files, "--trees", "3", *flags) == 0
    assert main(["predict", "--model", str(files / "m.json"), "--data", str(files / "valid.txt"),
                 "--trees", "best"]) == 2
    assert f"--trees best: the model has no best iteration: {reason}" in error_of(capsys)


def test_first_trees_of_a_forest_are_their_average(files):
    from twinrank.cli.training.predict import first_trees
    assert train(files, "--algorithm", "random-forest", "--trees", "4") == 0
    forest = Ensemble.load(files / "m.json")
    two = first_trees(forest, "2")
    np.testing.assert_array_equal(two.tree_weights, [0.5, 0.5])
    assert two.n_trees == 2


def test_train_help_gives_every_flag_a_help_text_and_default():
    from twinrank.cli import build_parser
    train_parser = build_parser()._subparsers._group_actions[0].choices["train"]
    for action in train_parser._actions:
        if action.option_strings and not action.required and action.dest != "help":
            assert action.help and "default" in action.help, action.option_strings


# ----------------------------------------------------------------------------- item 8: messages


def test_early_stopping_without_valid_names_the_flag(files, capsys):
    assert train(files, "--early-stopping", "3") == 2
    assert "--valid" in error_of(capsys)


@pytest.mark.parametrize("flag, value", [("--convention", "foo"), ("--metric", "foo")])
def test_a_bad_metric_or_convention_is_refused_without_valid(files, capsys, flag, value):
    with pytest.raises(SystemExit) as e:
        train(files, flag, value)
    assert e.value.code == 2 and value in capsys.readouterr().err


def test_igbrt_summary_counts_the_forest(files, capsys):
    assert main(["train", "--train", str(files / "train.txt"), "--model", str(files / "m.json"),
                 "--algorithm", "igbrt", "--trees", "3", "--rf-trees", "4", *FAST]) == 0
    err = capsys.readouterr().err
    assert "trained 7 trees (4 in the starting forest, 3 boosted)" in err and "keeps all 7" in err


def test_summary_says_which_trees_the_model_keeps(files, capsys):
    assert train(files, "--trees", "30", "--early-stopping", "2", "--valid", str(files / "valid.txt")) == 0
    model = Ensemble.load(files / "m.json")
    err = capsys.readouterr().err
    grown = len(model.history["valid:ndcg@10"])
    assert grown > model.n_trees
    assert f"trained {grown} trees; the model keeps the first {model.n_trees} " in err
    assert f"best iteration {model.best_iteration}" in err
    assert f"valid:ndcg@10 {model.history['valid:ndcg@10'][model.best_iteration - 1]:.4f}, lightgbm convention)" in err


def test_summary_names_a_chosen_convention(files, capsys):
    assert train(files, "--trees", "3", "--valid", str(files / "valid.txt"), "--convention", "ranklib",
                 "--early-stopping", "5") == 0
    assert ", ranklib convention)" in capsys.readouterr().err


def test_a_reappearing_numpy_query_id_is_printed_plainly():
    X, y = np.zeros((3, 1)), np.zeros(3)
    with pytest.raises(ValueError) as e:
        Dataset.from_qid(X, y, np.array([463, 7, 463]))
    assert "query id 463 reappears" in str(e.value)


def test_lambdamart_estimator_refuses_data_read_without_queries(files):
    from twinrank.fast.rankers.lambdamart import LambdaMART
    from twinrank.reference.errors import ParameterError
    with pytest.raises(ParameterError, match="without query ids"):
        LambdaMART(n_trees=1).fit(read_letor(files / "noqid.txt"))
    with pytest.raises(ParameterError, match="eval_set"):
        LambdaMART(n_trees=1).fit(read_letor(files / "train.txt"), eval_set=[read_letor(files / "noqid.txt")])


def test_igbrt_summary_with_early_stopping_keeps_the_forest(files, capsys):
    assert main(["train", "--train", str(files / "train.txt"), "--model", str(files / "m.json"),
                 "--valid", str(files / "valid.txt"), "--algorithm", "igbrt", "--trees", "30",
                 "--rf-trees", "3", "--early-stopping", "2", *FAST]) == 0
    model = Ensemble.load(files / "m.json")
    assert f"the model keeps the forest and the first {model.n_trees} boosted trees" in capsys.readouterr().err

"""No command overwrites a file it reads: an output that is an input is refused before any work."""
import os

import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.io.letor import write_letor

FAST = ["--trees", "2", "--leaves", "4", "--min-samples-leaf", "2", "--quiet"]


@pytest.fixture
def tmp(tmp_path):
    write_letor(ranking_data(seed=1, n_queries=12), tmp_path / "train.txt")
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "m.json"), *FAST]) == 0
    return tmp_path


def refused(capsys, argv, *options) -> str:
    """Run ``argv``: exit 2, one error line naming every option of ``options``, no traceback."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ": error: " in err[0], err
    assert all(option in err[0] for option in options), err
    return err[0]


def test_train_refuses_a_model_written_over_its_data(tmp, capsys):
    before = (tmp / "train.txt").read_bytes()
    line = refused(capsys, ["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / "train.txt"), *FAST],
                   "--model", "--train")
    assert "overwrite --train" in line
    assert (tmp / "train.txt").read_bytes() == before


@pytest.mark.parametrize("option", ["--valid", "--init-model"])
def test_train_refuses_a_model_written_over_valid_or_init_model(tmp, capsys, option):
    write_letor(ranking_data(seed=2, n_queries=5), tmp / "valid.txt")
    source = tmp / ("valid.txt" if option == "--valid" else "m.json")
    refused(capsys, ["train", "--train", str(tmp / "train.txt"), option, str(source), "--model", str(source),
                     *FAST], "--model", option)


def test_train_refuses_the_data_s_group_file_and_a_costs_file(tmp, capsys):
    (tmp / "train.txt.query").write_text("".join(f"{n}\n" for n in
                                                 ranking_data(seed=1, n_queries=12).query_sizes))
    refused(capsys, ["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / "train.txt.query"), *FAST],
            "--model", "--train's group file")
    (tmp / "costs.txt").write_text("1 1.0\n")
    refused(capsys, ["train", "--train", str(tmp / "train.txt"), "--feature-costs", str(tmp / "costs.txt"),
                     "--model", str(tmp / "costs.txt"), *FAST], "--model", "--feature-costs")


def test_another_path_to_the_same_file_is_the_same_file(tmp, capsys):
    """A hard link, a symbolic link and a path with '..' all name the input."""
    os.link(tmp / "train.txt", tmp / "hard.txt")
    os.symlink(tmp / "train.txt", tmp / "soft.txt")
    os.mkdir(tmp / "sub")
    for other in ("hard.txt", "soft.txt", "sub/../train.txt"):
        refused(capsys, ["predict", "--model", str(tmp / "m.json"), "--data", str(tmp / "train.txt"),
                         "--output", str(tmp / other)], "--output", "--data")


@pytest.mark.parametrize("command", ["predict", "export", "import"])
def test_commands_refuse_an_output_written_over_the_model(tmp, capsys, command):
    extra = ["--data", str(tmp / "train.txt")] if command == "predict" else []
    before = (tmp / "m.json").read_bytes()
    refused(capsys, [command, "--model", str(tmp / "m.json"), *extra, "--output", str(tmp / "m.json")],
            "--output", "--model")
    assert (tmp / "m.json").read_bytes() == before


def test_a_distinct_output_and_standard_output_pass(tmp, capsys):
    assert main(["predict", "--model", str(tmp / "m.json"), "--data", str(tmp / "train.txt"),
                 "--output", str(tmp / "scores.txt")]) == 0
    assert main(["predict", "--model", str(tmp / "m.json"), "--data", str(tmp / "train.txt"), "--output", "-"]) == 0


def test_a_retrained_private_model_stays_private(tmp, capsys):
    (tmp / "m.json").chmod(0o600)
    assert main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / "m.json"), *FAST,
                 "--seed", "3"]) == 0
    assert (tmp / "m.json").stat().st_mode & 0o777 == 0o600


def test_grid_refuses_outputs_over_its_folds_or_each_other(tmp, capsys):
    (tmp / "folds" / "Fold1").mkdir(parents=True)
    for name in ("train", "vali", "test"):
        write_letor(ranking_data(seed=1, n_queries=6), tmp / "folds" / "Fold1" / f"{name}.txt")
    grid = ["grid", "--folds", str(tmp / "folds"), "--param", "max_leaves=3", "--quiet"]
    before = (tmp / "folds" / "Fold1" / "vali.txt").read_bytes()
    refused(capsys, [*grid, "--output", str(tmp / "folds" / "Fold1" / "vali.txt")], "--output", "Fold1/vali.txt")
    assert (tmp / "folds" / "Fold1" / "vali.txt").read_bytes() == before
    refused(capsys, [*grid, "--output", str(tmp / "r.csv"), "--plot", str(tmp / "r.png")], "--plot's data",
            "--output")


def test_diagnose_refuses_a_plot_over_its_data(tmp, capsys):
    refused(capsys, ["diagnose", "bias-variance", "--algorithm", "gbrt", "--train", str(tmp / "train.txt"),
                     "--test", str(tmp / "m.json"), "--plot", str(tmp / "train.txt")], "--plot", "--train")

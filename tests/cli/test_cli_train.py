"""The train / predict / demo commands, end to end on small files."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.io.letor import read_scores, write_letor
from twinrank.reference.io.model import Ensemble


@pytest.fixture
def files(tmp_path):
    train, valid = ranking_data(seed=1, n_queries=25), ranking_data(seed=2, n_queries=10)
    write_letor(train, tmp_path / "train.txt")
    write_letor(valid, tmp_path / "valid.txt.gz")
    return tmp_path, valid


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_train_then_predict_then_evaluate(files, engine, capsys):
    tmp, valid = files
    model = tmp / "model.json"
    assert main(["train", "--train", str(tmp / "train.txt"), "--valid", str(tmp / "valid.txt.gz"),
                 "--model", str(model), "--trees", "5", "--leaves", "4", "--min-samples-leaf", "2",
                 "--engine", engine]) == 0
    err = capsys.readouterr().err
    assert "valid:ndcg@10" in err and "model written to" in err
    assert "(lightgbm convention)" in err.splitlines()[0]  # progress lines name the metric's convention
    assert Ensemble.load(model).n_trees == 5
    out = tmp / "scores.txt"
    assert main(["predict", "--model", str(model), "--data", str(tmp / "valid.txt.gz"),
                 "--output", str(out), "--engine", engine]) == 0
    scores = read_scores(out)
    assert scores.shape == (valid.n_rows,)
    history = Ensemble.load(model).history["valid:ndcg@10"]
    assert main(["evaluate", "--data", str(tmp / "valid.txt.gz"), "--scores", str(out),
                 "--metric", "ndcg@10", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["ndcg@10"] == pytest.approx(history[-1], rel=1e-9) and printed["convention"] == "lightgbm"


def test_x_dart_progress_counts_iterations_and_says_why(files, capsys):
    """X-DART runs up to 3 x --trees iterations: the progress total counts iterations, said once why;
    the summary says what the pruned and normalised iterations did."""
    tmp, _ = files
    assert main(["train", "--algorithm", "x-dart", "--train", str(tmp / "train.txt"), "--valid",
                 str(tmp / "valid.txt.gz"), "--model", str(tmp / "x.json"), "--trees", "12", "--leaves", "4",
                 "--min-samples-leaf", "2"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("x-dart: up to 36 iterations for 12 trees (an iteration adds a tree or prunes")
    assert any("/36]" in line and "iterations/s" in line for line in err)
    assert "pruned the dropped trees" in err[-1] and "kept them rescaled by DART's normalisation" in err[-1]


def test_both_engines_write_the_same_trees(files):
    tmp, _ = files
    for engine in ("fast", "reference"):
        main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / f"{engine}.json"),
              "--trees", "4", "--leaves", "4", "--min-samples-leaf", "2", "--quiet",
              "--query-subsample", "0.7", "--seed", "5", "--engine", engine])
    fast, ref = Ensemble.load(tmp / "fast.json"), Ensemble.load(tmp / "reference.json")
    for s, t in zip(fast.trees, ref.trees):
        np.testing.assert_array_equal(s.feature, t.feature)
        np.testing.assert_array_equal(s.bin_threshold, t.bin_threshold)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)


def test_bad_input_is_an_error_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\nx qid:1 1:0.2\n")
    code = main(["train", "--train", str(bad), "--model", str(tmp_path / "m.json"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "bad.txt:2" in err and "Traceback" not in err
    assert not (tmp_path / "m.json").exists()


def test_predict_rejects_data_wider_than_the_model(files, capsys):
    tmp, _ = files
    main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / "m.json"),
          "--trees", "2", "--leaves", "3", "--min-samples-leaf", "2", "--quiet"])
    wide = tmp / "wide.txt"
    wide.write_text("0 qid:1 1:0.5 99:1.0\n")
    assert main(["predict", "--model", str(tmp / "m.json"), "--data", str(wide),
                 "--output", str(tmp / "s.txt")]) == 2
    assert "wide.txt:1" in capsys.readouterr().err


def test_every_command_has_help():
    for command in ["train", "predict", "evaluate", "demo"]:
        result = subprocess.run([sys.executable, "-m", "twinrank.cli", command, "--help"],
                                capture_output=True, text=True)
        assert result.returncode == 0 and "--engine" in result.stdout


def test_no_help_text_shows_markup(capsys):
    """Help comes from docstrings written for the docs: a terminal sees no ``x`` or :func:`x`."""
    from twinrank.cli import COMMANDS, build_parser
    from twinrank.cli._common import plain_text

    assert plain_text("``--trees`` and :func:`~twinrank.cli.main`, :mod:`a.b`, $\\eta$") == "--trees and main, a.b, eta"
    parser = build_parser()
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        text = capsys.readouterr().out
        assert "``" not in text and not re.search(r":\w+:`", text), command


def test_demo_prints_test_metrics(capsys):
    assert main(["demo", "--quiet"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    values = [float(v) for v in lines["ranklib"]]
    assert len(values) == 5 and all(0.2 < v < 0.9 for v in values)
    assert lines["convention"] == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]
    letor = [float(v) for v in lines["letor"]]
    assert letor[3] < letor[2]  # NDCG@10 < NDCG@5: the output says why
    assert "fewer than k documents 0" in out and "no relevant document" in out
    assert "lightgbm convention" in out  # the summary's best validation value names its convention


def test_low_memory_flag_trains_the_same_trees(files):
    tmp, _ = files
    for name, flags in (("default", []), ("lean", ["--low-memory"])):
        main(["train", "--train", str(tmp / "train.txt"), "--model", str(tmp / f"{name}.json"),
              "--trees", "3", "--leaves", "4", "--min-samples-leaf", "2", "--quiet", "--seed", "5", *flags])
    default, lean = Ensemble.load(tmp / "default.json"), Ensemble.load(tmp / "lean.json")
    assert len(lean.trees) == 3
    for s, t in zip(lean.trees, default.trees):
        np.testing.assert_array_equal(s.feature, t.feature)
        np.testing.assert_array_equal(s.value, t.value)

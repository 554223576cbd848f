"""``twinrank compare``: two score files, one JSON answer; SciPy's t-test as the oracle; bad input."""
import json

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.evaluation.metrics import ndcg
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import write_letor


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    _, _, test = load_mq2008(1)
    write_letor(test, tmp / "test.txt")
    for name, feature in (("a.txt", 37), ("b.txt", 24)):
        np.savetxt(tmp / name, test.X[:, feature].astype(np.float64), fmt="%.9g")
    return tmp, test


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_compare_prints_both_tests(files, engine, capsys):
    tmp, test = files
    assert main(["compare", "--data", str(tmp / "test.txt"), "--scores", str(tmp / "a.txt"), "--scores",
                 str(tmp / "b.txt"), "--metric", "ndcg@10", "--permutations", "2000", "--json",
                 "--engine", engine]) == 0
    out = json.loads(capsys.readouterr().out)
    a, b = (ndcg(test.y, np.loadtxt(tmp / n), test.query_offsets, k=10) for n in ("a.txt", "b.txt"))
    scipy_stats = pytest.importorskip("scipy.stats")
    expected = scipy_stats.ttest_rel(a, b)
    assert out["mean_a"] == pytest.approx(a.mean(), abs=1e-12) and out["mean_b"] == pytest.approx(b.mean(), abs=1e-12)
    assert abs(out["t_statistic"] - expected.statistic) <= 1e-9 and abs(out["t_p"] - expected.pvalue) <= 1e-9
    assert out["df"] == test.n_queries - 1 and 0 <= out["randomization_p"] < 0.05


def test_compare_text_output(files, capsys):
    tmp, _ = files
    assert main(["compare", "--data", str(tmp / "test.txt"), "--scores", str(tmp / "a.txt"), "--scores",
                 str(tmp / "b.txt"), "--permutations", "500", "--convention", "letor"]) == 0
    out = capsys.readouterr().out
    assert "randomization test: p =" in out and "paired t-test: t =" in out and "convention letor" in out


def test_compare_bad_input(files, tmp_path, capsys):
    tmp, test = files
    short = tmp_path / "short.txt"
    np.savetxt(short, np.zeros(test.n_rows - 1))
    assert main(["compare", "--data", str(tmp / "test.txt"), "--scores", str(tmp / "a.txt"),
                 "--scores", str(short)]) == 2
    assert "short.txt" in capsys.readouterr().err
    nan = tmp_path / "nan.txt"
    nan.write_text("\n".join(["0.5"] * (test.n_rows - 1) + ["nan"]) + "\n")
    assert main(["compare", "--data", str(tmp / "test.txt"), "--scores", str(tmp / "a.txt"),
                 "--scores", str(nan)]) == 2
    assert "nan.txt" in capsys.readouterr().err
    assert main(["compare", "--data", str(tmp / "test.txt"), "--scores", str(tmp / "a.txt")]) == 2
    assert "exactly two" in capsys.readouterr().err

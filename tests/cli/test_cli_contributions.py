"""``twinrank predict --contributions``: each row's per-feature contributions, written as predict writes scores.

The matrix file must add up to the scores ``predict`` writes, be the same from either engine and
on standard output, and equal LightGBM's ``pred_contrib`` on the model ``twinrank export`` wrote.
"""
import gzip
import importlib

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.io.letor import read_letor, read_scores


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A folder with MQ2008 fold 1 and a small LambdaMART trained on it (three-way missing splits)."""
    d = tmp_path_factory.mktemp("contributions")
    assert main(["data", "mq2008", "--fold", "1", "--out", str(d)]) == 0
    assert main(["train", "--train", str(d / "train.txt"), "--model", str(d / "model.json"), "--n-trees", "5",
                 "--max-leaves", "12", "--missing", "separate", "--quiet"]) == 0
    assert main(["predict", "--model", str(d / "model.json"), "--data", str(d / "test.txt"),
                 "--output", str(d / "scores.txt")]) == 0
    return d


def contributions(d, *flags, output="contributions.txt"):
    assert main(["predict", "--model", str(d / "model.json"), "--data", str(d / "test.txt"),
                 "--output", str(d / output), "--contributions", *flags]) == 0
    return np.loadtxt(d / output, ndmin=2)


def test_the_matrix_adds_up_to_the_scores_and_is_the_same_from_either_engine(trained, capsys):
    phi = contributions(trained)
    scores = read_scores(trained / "scores.txt")
    assert phi.shape == (len(scores), 47)  # MQ2008's 46 features and the base value
    np.testing.assert_allclose(phi.sum(axis=1), scores, rtol=0, atol=1e-12)
    assert np.all(phi[:, -1] == phi[0, -1]) and np.any(phi[:, :-1] != 0)
    assert "contributions (f1 ... f46, then the base value) written to" in capsys.readouterr().err
    np.testing.assert_array_equal(contributions(trained, "--engine", "reference", output="ref.txt"), phi)
    assert (trained / "ref.txt").read_bytes() == (trained / "contributions.txt").read_bytes()
    assert main(["predict", "--model", str(trained / "model.json"), "--data", str(trained / "test.txt"),
                 "--contributions"]) == 0
    assert capsys.readouterr().out == (trained / "contributions.txt").read_text()
    contributions(trained, output="contributions.txt.gz")
    assert gzip.decompress((trained / "contributions.txt.gz").read_bytes()) == \
        (trained / "contributions.txt").read_bytes()


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_trees_k_is_the_python_apis_n_trees_k_and_adds_up_to_its_first_k_trees_score(trained, engine):
    est = importlib.import_module(f"twinrank.{engine}").LambdaMART.load(trained / "model.json")
    X = read_letor(trained / "test.txt", n_features=46).X
    phi = est.predict_contributions(X, n_trees=3)
    np.testing.assert_array_equal(contributions(trained, "--trees", "3", "--engine", engine, output="k.txt"), phi)
    np.testing.assert_allclose(phi.sum(axis=1), est.predict(X, n_trees=3), rtol=0, atol=1e-12)
    assert np.max(np.abs(phi - est.predict_contributions(X))) > 1e-6  # two trees fewer explain otherwise


def test_the_matrix_equals_lightgbm_pred_contrib_on_the_exported_model(trained):
    lgb = pytest.importorskip("lightgbm")
    assert main(["export", "--model", str(trained / "model.json"), "--output", str(trained / "model.txt")]) == 0
    X = read_letor(trained / "test.txt", n_features=46).X  # float32, NaN where a feature is missing
    expected = lgb.Booster(model_file=str(trained / "model.txt")).predict(X, pred_contrib=True, num_threads=1)
    np.testing.assert_allclose(contributions(trained), expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


def test_contributions_with_early_exits_are_refused_in_one_line(trained, capsys):
    code = main(["predict", "--model", str(trained / "model.json"), "--data", str(trained / "test.txt"),
                 "--output", str(trained / "never.txt"), "--contributions", "--exit-every", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--contributions" in err[0] and "--exit-every" in err[0]
    assert not (trained / "never.txt").exists()

"""``twinrank inspect``: the summary, feature importance from the trees' arrays, and the tree dump."""
import json

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble, Tree


def stump(feature, gain, left_value=-1.0, right_value=1.0):
    """A tree of one split on ``feature`` (0-based) with ``gain``, and two leaves."""
    return Tree(feature=[feature, -1, -1], threshold=[0.5, 0, 0], bin_threshold=[3, 0, 0],
                left=[1, -1, -1], right=[2, -1, -1], missing=[1, -1, -1],
                value=[0, left_value, right_value], gain=[gain, 0, 0], count=[10, 6, 4],
                hessian_sum=[10, 6, 4])


@pytest.fixture
def model_file(tmp_path):
    model = Ensemble(trees=[stump(2, 1.5), stump(0, 4.0), stump(2, 0.5)], tree_weights=np.ones(3),
                     n_features=5, algorithm="lambdamart", params={"n_trees": 3},
                     history={"valid:ndcg@10": [0.5, 0.7, 0.6]}, best_iteration=2)
    model.save(tmp_path / "m.json")
    return tmp_path / "m.json"


def test_importance_counts_splits_and_sums_gains(model_file, capsys):
    assert main(["inspect", "--model", str(model_file), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # feature ids as in the data file: 0-based index 0 is feature 1, index 2 is feature 3
    assert printed["importance"] == [{"feature": 1, "splits": 1, "gain": 4.0},
                                     {"feature": 3, "splits": 2, "gain": 1.5 + 0.5}]
    summary = printed["summary"]
    assert summary["n_trees"] == 3 and summary["best_iteration"] == 2 and summary["n_features"] == 5
    assert summary["history"]["valid:ndcg@10"] == {"n": 3, "last": 0.6, "best": 0.7}


def test_text_summary_and_dump(model_file, capsys):
    assert main(["inspect", "--model", str(model_file), "--dump"]) == 0
    out = capsys.readouterr().out
    assert "lambdamart" in out and "best iteration  2" in out
    assert "2 of 5 features split on" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "3 "))]
    assert rows[0][:2] == ["1", "1"] and rows[1][:2] == ["3", "2"]  # largest gain first
    assert "tree 2 (weight 1, 2 leaves)" in out
    assert "0: split on f3 at 0.5 (gain 0.5, rows 10)" in out
    assert "if f3 <= 0.5 or missing:" in out and "if f3 > 0.5:" in out and "1: leaf -1 (rows 6)" in out


def test_a_trained_igbrt_counts_its_forest(tmp_path, capsys):
    write_letor(ranking_data(seed=1, n_queries=15), tmp_path / "train.txt")
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "m.json"),
                 "--algorithm", "igbrt", "--trees", "2", "--rf-trees", "3", "--leaves", "4",
                 "--min-samples-leaf", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--json", "--top", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["summary"]["n_trees"] == 5 and printed["summary"]["prior_trees"] == 3
    assert len(printed["importance"]) == 2
    assert sum(r["splits"] for r in printed["importance"]) >= 2


def test_a_missing_model_is_named(tmp_path, capsys):
    assert main(["inspect", "--model", str(tmp_path / "nope.json")]) == 2
    assert f"--model {tmp_path}/nope.json: no such file" in capsys.readouterr().err

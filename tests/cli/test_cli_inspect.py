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


def test_dart_iterations_say_what_was_normalised(tmp_path, capsys):
    """The branch counts say what each kind of iteration did to the dropped trees, not a bare word."""
    model = Ensemble(trees=[stump(0, 1.0), stump(1, 2.0)], tree_weights=np.array([0.8, 0.9]), n_features=3,
                     algorithm="x-dart", history={"branch": ["add", "normalize", "prune", "normalize"],
                                                  "dropped": [0, 1, 1, 2]})
    model.save(tmp_path / "x.json")
    assert main(["inspect", "--model", str(tmp_path / "x.json")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the summary wraps at 84 columns
    assert ("branch 4 iterations: 1 added a tree, none dropped; 2 kept the dropped trees, rescaled by "
            "DART's normalisation (k/(k + learning_rate)), and added a tree; 1 pruned the dropped trees "
            "(X-DART) and added a tree") in out


def lightgbm_file(tmp_path, names) -> str:
    """A LightGBM model of two stumps on features 3 and 1 (0-based 2 and 0), with ``names``."""
    from twinrank.interop.lightgbm_text import save_lightgbm

    model = Ensemble(trees=[stump(2, 1.5), stump(0, 4.0)], tree_weights=np.ones(2), n_features=3,
                     algorithm="lambdamart")
    save_lightgbm(model, tmp_path / "lgb.txt", feature_names=names)
    return str(tmp_path / "lgb.txt")


def test_an_imported_model_is_dumped_with_its_feature_names(tmp_path, capsys):
    path = lightgbm_file(tmp_path, ["title", "body", "pagerank"])
    assert main(["import", "--model", path, "--output", str(tmp_path / "m.json")]) == 0
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--dump"]) == 0
    out = capsys.readouterr().out
    assert "0: split on pagerank at 0.5" in out and "if pagerank <= 0.5 or missing:" in out
    assert "0: split on title at 0.5" in out and "if title > 0.5:" in out
    assert " f1 " not in out and " f3 " not in out
    assert [line.split()[-1] for line in out.splitlines() if line.startswith(("       1 ", "       3 "))] == \
        ["title", "pagerank"]
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["importance"] == [
        {"feature": 1, "splits": 1, "gain": 4.0, "name": "title"},
        {"feature": 3, "splits": 1, "gain": 1.5, "name": "pagerank"}]


@pytest.mark.parametrize("names", [["Column_0", "Column_1", "Column_2"], None])
def test_an_imported_model_without_names_of_its_own_is_dumped_with_fk(tmp_path, capsys, names):
    """LightGBM's default names (Column_j, 0-based) and twinrank's (f1 ... fN) are not kept: fK, 1-based."""
    path = lightgbm_file(tmp_path, names)
    assert main(["import", "--model", path, "--output", str(tmp_path / "m.json")]) == 0
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--dump"]) == 0
    out = capsys.readouterr().out
    assert "0: split on f3 at 0.5" in out and "0: split on f1 at 0.5" in out and "Column_" not in out


def test_a_lightgbm_model_trained_with_feature_names_keeps_them(tmp_path, capsys):
    lightgbm = pytest.importorskip("lightgbm")
    data = ranking_data(seed=4, n_queries=20, n_features=3)
    params = {"objective": "lambdarank", "num_leaves": 3, "min_data_in_leaf": 2, "verbose": -1}
    booster = lightgbm.train(params, lightgbm.Dataset(data.X, data.y, group=np.diff(data.query_offsets),
                                                      feature_name=["title", "body", "pagerank"]), num_boost_round=2)
    booster.save_model(tmp_path / "lgb.txt")
    assert main(["import", "--model", str(tmp_path / "lgb.txt"), "--output", str(tmp_path / "m.json")]) == 0
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--dump"]) == 0
    out = capsys.readouterr().out
    split_on = {line.split("split on ")[1].split()[0] for line in out.splitlines() if "split on " in line}
    assert split_on and split_on <= {"title", "body", "pagerank"}


def test_feature_names_of_another_width_are_refused_naming_the_line(tmp_path, capsys):
    path = lightgbm_file(tmp_path, ["title", "body", "pagerank"])
    text = open(path).read().replace("feature_names=title body pagerank", "feature_names=title body")
    open(path, "w").write(text)
    assert main(["import", "--model", path, "--output", str(tmp_path / "m.json")]) == 2
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("feature_names="))
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{path}:{line}: feature_names= has 2 names for the 3 features of max_feature_idx=2")

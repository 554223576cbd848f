"""LightGBM's text model format: a twinrank model exported there scores the same in LightGBM,
a LightGBM model imported here scores the same in both twins, and what cannot cross is refused.

The oracle is LightGBM itself (``lightgbm.Booster``), on MQ2008 with missing values.
"""
import json
import re

import numpy as np
import pytest

import twinrank
import twinrank.fast
import twinrank.fast.trees.predict as fast_predict
import twinrank.interop.lightgbm_text as fast_text
import twinrank.reference
from twinrank.cli import main
from twinrank.interop.lightgbm_text import from_lightgbm_text, load_lightgbm, save_lightgbm, to_lightgbm_text
from twinrank.reference import GBRT, IGBRT, LambdaMART, McRank, RandomForest, load_mq2008
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io.model import Ensemble, Tree, load_model
from twinrank.reference.trees.predict import predict_ensemble

lgb = pytest.importorskip("lightgbm")
LGB = {"num_threads": 1, "verbose": -1, "deterministic": True, "seed": 0}


@pytest.fixture(scope="module")
def mq():
    """MQ2008 fold 1 (train, test features) with 10% of the feature values made missing."""
    train, _, test = load_mq2008(1)
    rng = np.random.default_rng(0)
    X, X_test = train.X.copy(), test.X.copy()
    X[rng.random(X.shape) < 0.1] = np.nan
    X_test[rng.random(X_test.shape) < 0.1] = np.nan
    return X, train.y, train.qid, X_test


def lightgbm_scores(text: str, X) -> np.ndarray:
    return lgb.Booster(model_str=text).predict(X)


def assert_twins_score(model, X, expected):
    """Both twins score ``model`` on ``X`` exactly as ``expected``."""
    np.testing.assert_array_equal(predict_ensemble(model, X), expected)
    np.testing.assert_array_equal(fast_predict.predict_ensemble(model, X), expected)


KINDS = {
    "lambdamart": lambda: LambdaMART(n_trees=6, max_leaves=8),
    "lambdamart-separate": lambda: LambdaMART(n_trees=6, max_leaves=8, missing="separate"),
    "lambdamart-mean": lambda: LambdaMART(n_trees=6, max_leaves=8, missing="mean"),
    "gbrt": lambda: GBRT(n_trees=6, max_leaves=8),  # a base score, the label mean
    "random_forest": lambda: RandomForest(n_trees=4, max_leaves=16, seed=3),  # tree weights 1/4
    "igbrt": lambda: IGBRT(n_trees=3, max_leaves=8, rf_n_trees=2, rf_max_leaves=8, seed=1),  # a prior model
}


@pytest.mark.parametrize("kind", KINDS)
def test_exported_model_scores_in_lightgbm_as_in_twinrank(kind, mq, tmp_path):
    X, y, qid, X_test = mq
    model = KINDS[kind]().fit(X, y, qid=qid).model_
    save_lightgbm(model, tmp_path / "model.txt")
    booster = lgb.Booster(model_file=str(tmp_path / "model.txt"))
    assert booster.num_feature() == model.n_features
    assert_twins_score(model, X_test, booster.predict(X_test))


def test_kinds_cover_what_they_claim(mq):
    X, y, qid, _ = mq
    separate = KINDS["lambdamart-separate"]().fit(X, y, qid=qid).model_
    third = [(t.left >= 0) & (t.missing != t.left) & (t.missing != t.right) for t in separate.trees]
    assert sum(int(m.sum()) for m in third) > 0  # third children for missing values were exported
    assert KINDS["gbrt"]().fit(X, y, qid=qid).model_.base_score != 0


def stump(feature, threshold, missing, values, third=None):
    """A split on ``feature``; ``missing`` is "left", "right" or "third" (a third leaf ``third``)."""
    n = 4 if missing == "third" else 3
    miss = {"left": 1, "right": 2, "third": 3}[missing]
    return Tree(feature=[feature] + [-1] * (n - 1), threshold=[threshold] + [0.0] * (n - 1),
                bin_threshold=[0] + [-1] * (n - 1), left=[1] + [-1] * (n - 1), right=[2] + [-1] * (n - 1),
                missing=[miss] + [-1] * (n - 1), value=[0.0, *values] + ([third] if third is not None else []),
                gain=[1.0] + [0.0] * (n - 1), count=[10] * n, hessian_sum=[10.0] * n)


def leaf(value):
    return Tree(feature=[-1], threshold=[0.0], bin_threshold=[-1], left=[-1], right=[-1], missing=[-1],
                value=[value], gain=[0.0], count=[5], hessian_sum=[5.0])


def test_every_route_and_sum_crosses_bit_for_bit():
    """NaN left, right, to a third child; an inf threshold; a one-leaf tree; weights; prior models
    with base scores; rows with NaN, +-inf and values equal to the thresholds."""
    prior = Ensemble(trees=[stump(0, 0.25, "third", [1.5, -2.0], third=0.75)], tree_weights=[0.5],
                     base_score=0.125, n_features=3)
    model = Ensemble(trees=[stump(1, -1.0, "left", [0.1, 0.2]), stump(2, np.inf, "right", [0.3, -0.7]),
                            leaf(0.0625), stump(0, 0.25, "right", [2.0 / 3, 1.0 / 3])],
                     tree_weights=[1.0, 0.3, 1.0, 0.1], base_score=-0.4, n_features=3,
                     init_model=prior)
    rng = np.random.default_rng(1)
    X = rng.choice(np.array([np.nan, -np.inf, np.inf, 0.25, -1.0, 0.0, 3.5, -7.0]), size=(400, 3))
    text = to_lightgbm_text(model)
    assert text.count("Tree=") == 1 + 1 + 4  # the prior's tree, the base score's tree, the trees
    assert_twins_score(model, X, lightgbm_scores(text, X))
    assert_twins_score(from_lightgbm_text(text), X, lightgbm_scores(text, X))


def float32_neighbourhood(t: float) -> np.ndarray:
    """float64 inputs around threshold ``t``: ``t`` and the doubles next to it, the float32 values
    nearest ``t`` and their neighbours, the midpoints between those and the doubles next to them."""
    low = np.float32(t)
    low = np.nextafter(low, np.float32(-np.inf)) if float(low) > t else low
    float32s = [np.nextafter(low, np.float32(-np.inf)), low, np.nextafter(low, np.float32(np.inf))]
    float32s.append(np.nextafter(float32s[-1], np.float32(np.inf)))
    values = [float(v) for v in float32s]
    midpoints = [(a + b) / 2 for a, b in zip(values, values[1:])]
    points = [t, *values, *midpoints]
    return np.array(sorted({x for p in points for x in (np.nextafter(p, -np.inf), p, np.nextafter(p, np.inf))}))


FLOAT64_THRESHOLDS = [  # float32 values with an even and an odd last bit, midpoints, plain doubles
    0.25, 1.0, float(np.nextafter(np.float32(1.0), np.float32(2.0))), 0.4330829977989197,
    (0.4330829977989197 + float(np.nextafter(np.float32(0.4330829977989197), np.float32(1.0)))) / 2,
    0.1, -0.3, -1.0, 1e-3, 2.5e-30, 123456.789, -7.0e30]


def test_float64_inputs_near_every_threshold_take_twinrank_routes_in_lightgbm():
    """twinrank sends a row left iff float32(x) <= t; the exported threshold makes LightGBM's float64
    x <= t' agree for every double: at t, at its float32 neighbours, at the rounding midpoints."""
    trees = [stump(0, t, "left", [0.0, 2.0 ** i]) for i, t in enumerate(FLOAT64_THRESHOLDS)]  # routes as bits
    model = Ensemble(trees=trees, tree_weights=np.ones(len(trees)), n_features=1)
    X64 = np.concatenate([float32_neighbourhood(t) for t in FLOAT64_THRESHOLDS])[:, None]  # (n, 1)
    text = to_lightgbm_text(model)
    twinrank_scores = predict_ensemble(model, X64.astype(np.float32))
    np.testing.assert_array_equal(lgb.Booster(model_str=text).predict(X64, raw_score=True), twinrank_scores)
    assert np.any(predict_ensemble(model, X64) != twinrank_scores)  # the float64 routes differ: the test bites
    written = [tree.threshold[0] for tree in from_lightgbm_text(text).trees]
    for t, w in zip(FLOAT64_THRESHOLDS, written):  # the largest double whose float32 is <= t
        assert float(np.float32(w)) <= t < float(np.float32(np.nextafter(w, np.inf)))
    assert to_lightgbm_text(from_lightgbm_text(text)) == text  # written thresholds map to themselves


def mq2008_test_as_float64(folder) -> np.ndarray:
    """MQ2008 fold 1's test features as the file's decimals read in float64 (twinrank reads float32)."""
    assert main(["data", "mq2008", "--fold", "1", "--out", str(folder)]) == 0
    rows = []
    for line in (folder / "test.txt").read_text().splitlines():
        row = np.zeros(46)
        for token in line.split("#")[0].split()[2:]:
            feature, value = token.split(":")
            row[int(feature) - 1] = float(value)
        rows.append(row)
    return np.array(rows)


def test_mq2008_test_as_float64_scores_the_same_in_lightgbm(tmp_path, capsys):
    train = load_mq2008(1)[0]
    ranker = LambdaMART(n_trees=20).fit(train)
    X64 = mq2008_test_as_float64(tmp_path)
    assert np.any(X64 != X64.astype(np.float32))
    save_lightgbm(ranker, tmp_path / "model.txt")
    theirs = lgb.Booster(model_file=str(tmp_path / "model.txt")).predict(X64, raw_score=True)
    assert len(theirs) == 2874
    np.testing.assert_array_equal(theirs, ranker.predict(X64))  # predict reads X as float32


def test_base_score_without_trees_is_a_one_leaf_tree():
    model = Ensemble(trees=[], tree_weights=[], base_score=0.7, n_features=2)
    X = np.zeros((3, 2))
    np.testing.assert_array_equal(lightgbm_scores(to_lightgbm_text(model), X), [0.7] * 3)


@pytest.fixture(scope="module")
def lightgbm_ranker(mq, tmp_path_factory):
    """A LightGBM lambdarank model trained on data with missing values, saved to a file."""
    X, y, qid, _ = mq
    group = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    booster = lgb.train({**LGB, "objective": "lambdarank", "num_leaves": 15}, lgb.Dataset(X, y, group=group), 20)
    path = tmp_path_factory.mktemp("lgb") / "ranker.txt"
    booster.save_model(str(path))
    return path


def test_imported_lambdarank_scores_as_lightgbm_raw_score(lightgbm_ranker, mq, tmp_path):
    X_test = mq[3]
    booster = lgb.Booster(model_file=str(lightgbm_ranker))
    model = load_lightgbm(lightgbm_ranker)
    assert (model.n_trees, model.n_features, model.algorithm) == (20, 46, "lightgbm")
    assert model.params["objective"].startswith("lambdarank")
    expected = booster.predict(X_test, raw_score=True)
    assert_twins_score(model, X_test, expected)
    model.save(tmp_path / "m.json")  # a twinrank model file like any other
    assert_twins_score(load_model(tmp_path / "m.json"), X_test, expected)
    np.testing.assert_array_equal(lightgbm_scores(to_lightgbm_text(model), X_test), expected)  # and back


def test_round_trip_through_lightgbm_text_keeps_the_model(mq):
    X, y, qid, X_test = mq
    model = KINDS["lambdamart-separate"]().fit(X, y, qid=qid).model_
    back = from_lightgbm_text(to_lightgbm_text(model))
    np.testing.assert_array_equal(predict_ensemble(back, X_test), predict_ensemble(model, X_test))
    assert sum(t.n_leaves for t in back.trees) == sum(t.n_leaves for t in model.trees)
    assert to_lightgbm_text(back) == to_lightgbm_text(model)


def test_nan_in_a_model_trained_without_nan_goes_where_zero_goes(mq):
    """missing type None: LightGBM reads NaN as 0."""
    X, y, _, X_test = mq
    clean = np.nan_to_num(X, nan=0.5)
    booster = lgb.train({**LGB, "objective": "regression", "num_leaves": 8}, lgb.Dataset(clean, y), 5)
    text = booster.model_to_string()
    assert missing_types(text) == {0}
    assert_twins_score(from_lightgbm_text(text), X_test, booster.predict(X_test, raw_score=True))


def missing_types(text: str) -> set:
    """The missing types, bits 3-4 of decision_type, of every node of a LightGBM text model."""
    lines = [line for line in text.splitlines() if line.startswith("decision_type=")]
    return {(int(d) >> 2) & 3 for line in lines for d in line.split("=")[1].split()}


def test_imported_random_forest_averages_its_trees(mq):
    X, y, _, X_test = mq
    params = {**LGB, "objective": "regression", "boosting": "rf", "bagging_freq": 1, "bagging_fraction": 0.5,
              "num_leaves": 8}
    booster = lgb.train(params, lgb.Dataset(X, y), 4)
    model = from_lightgbm_text(booster.model_to_string())
    np.testing.assert_allclose(predict_ensemble(model, X_test), booster.predict(X_test), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(fast_predict.predict_ensemble(model, X_test), predict_ensemble(model, X_test))


def test_zero_as_missing_is_refused_where_zero_changes_side(mq):
    """missing type Zero: where 0 goes with NaN to the side the threshold sends 0, the node
    imports (NaN to the default child); where it goes to the other side, it is refused."""
    X, y, _, X_test = mq
    booster = lgb.train({**LGB, "objective": "regression", "num_leaves": 8, "zero_as_missing": True},
                        lgb.Dataset(X, y, params={"zero_as_missing": True}), 5)
    text = booster.model_to_string()
    assert missing_types(text) == {1}
    with pytest.raises(ModelFormatError, match=r"Tree=0: internal node \d+ \(decision_type=4.*zero_as_missing"):
        from_lightgbm_text(text)
    consistent = "\n".join(_zero_goes_default(line) if line.startswith("decision_type=") else line
                           for line in text.splitlines())  # every Zero node's default = the side of 0
    expected = lgb.Booster(model_str=consistent).predict(X_test, raw_score=True)
    assert_twins_score(from_lightgbm_text(consistent), X_test, expected)
    assert not np.array_equal(expected, booster.predict(X_test, raw_score=True))  # the edit mattered


def _zero_goes_default(line: str) -> str:
    """decision_type 4 (Zero, default right) -> 6 (default left): all thresholds MQ2008 gives are > 0."""
    return "decision_type=" + " ".join("6" if d == "4" else d for d in line.split("=")[1].split())


# ---------------------------------------------------------------- refusals


def test_mcrank_export_is_refused_with_the_reason(mq):
    X, y, qid, _ = mq
    model = McRank(n_trees=2, max_leaves=4).fit(X[:2000], y[:2000], qid=qid[:2000]).model_
    with pytest.raises(ModelFormatError, match="expected relevance.*only sums trees"):
        to_lightgbm_text(model)
    assert lightgbm_scores(to_lightgbm_text(model.classifiers[0]), X[:5]).shape == (5,)  # one by one


def test_iterative_imputation_export_is_refused():
    model = Ensemble(trees=[leaf(1.0)], tree_weights=[1.0], n_features=2,
                     missing={"strategy": "iterative", "fill": [0.0, 0.0],
                              "imputers": [[[0, Ensemble(trees=[leaf(1.0)], tree_weights=[1.0], n_features=2).to_dict()]]]})
    with pytest.raises(ModelFormatError, match="iterative"):
        to_lightgbm_text(model)


def small_data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, d)).astype(np.float64)
    return X, (X[:, 0] + rng.random(n) > 2.5).astype(float) + (X[:, 1] > 2)


@pytest.mark.parametrize("params, dataset, field", [
    ({"objective": "multiclass", "num_class": 3}, {}, "num_class=3"),
    ({"objective": "regression"}, {"categorical_feature": [0]}, "num_cat="),
    ({"objective": "regression", "linear_tree": True}, {}, "is_linear=1"),
])
def test_what_twinrank_trees_cannot_express_is_refused_naming_the_field(params, dataset, field):
    X, y = small_data()
    booster = lgb.train({**LGB, "num_leaves": 4, "min_data_in_leaf": 5, **params},
                        lgb.Dataset(X, y, **dataset), 3)
    with pytest.raises(ModelFormatError, match=field):
        from_lightgbm_text(booster.model_to_string(), source="m.txt")


def test_categorical_bit_in_decision_type_is_refused():
    text = to_lightgbm_text(Ensemble(trees=[stump(0, 0.5, "left", [1.0, 2.0])], tree_weights=[1.0], n_features=1))
    with pytest.raises(ModelFormatError, match=r"m.txt:\d+: Tree=0: internal node 0 \(decision_type=11.*categorical"):
        from_lightgbm_text(text.replace("decision_type=10", "decision_type=11"), source="m.txt")


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("num_class=1", "num_class=x"), r"num_class='x' is not an integer"),
    (lambda t: t.replace("max_feature_idx=0\n", ""), "no max_feature_idx= line"),
    (lambda t: t.replace("leaf_value=1.0 2.0", "leaf_value=1.0"), r"line \d+\): leaf_value has 1 values, expected 2"),
    (lambda t: t.replace("leaf_value=1.0 2.0", "leaf_value=1.0 abc"), "leaf_value: could not convert"),
    (lambda t: t.replace("left_child=-1", "left_child=0"), "do not form a tree"),
    (lambda t: re.sub(r"\nthreshold=.*\n", "\n", t), "has no threshold= line"),
    (lambda t: "{" + t, "JSON"),
])
def test_malformed_file_errors_name_the_line_and_field(edit, message):
    text = to_lightgbm_text(Ensemble(trees=[stump(0, 0.5, "left", [1.0, 2.0])], tree_weights=[1.0], n_features=1))
    with pytest.raises(ModelFormatError, match=message):
        from_lightgbm_text(edit(text), source="m.txt")


def test_feature_names_are_written_checked_and_kept():
    model = Ensemble(trees=[stump(1, 0.5, "left", [1.0, 2.0])], tree_weights=[1.0], n_features=2)
    text = to_lightgbm_text(model, feature_names=["bm25", "pagerank"])
    assert lgb.Booster(model_str=text).feature_name() == ["bm25", "pagerank"]
    assert from_lightgbm_text(text).params["feature_names"] == ["bm25", "pagerank"]
    assert "feature_names=bm25 pagerank\n" in to_lightgbm_text(from_lightgbm_text(text))
    with pytest.raises(ModelFormatError, match="'page rank' cannot be written"):
        to_lightgbm_text(model, feature_names=["bm25", "page rank"])
    with pytest.raises(ModelFormatError, match="1 feature names for a model of 2 features"):
        to_lightgbm_text(model, feature_names=["bm25"])


def test_one_feature_numbering_on_every_surface(tmp_path, capsys):
    """Column 22 of X is LETOR feature 23: f23 in dump_tree (both twins), inspect and the export."""
    model = Ensemble(trees=[stump(22, 0.5, "left", [1.0, 2.0])], tree_weights=[1.0], n_features=46)
    assert twinrank.reference.dump_tree(model.trees[0]).startswith("0: f23 <= 0.5")
    assert twinrank.fast.dump_tree(model.trees[0]).startswith("0: f23 <= 0.5")
    model.save(tmp_path / "m.json")
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--dump"]) == 0
    assert "0: split on f23 at 0.5" in capsys.readouterr().out
    assert main(["inspect", "--model", str(tmp_path / "m.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["importance"][0]["feature"] == 23
    text = to_lightgbm_text(model)
    booster = lgb.Booster(model_str=text)
    assert booster.feature_name() == [f"f{j}" for j in range(1, 47)]
    root = booster.dump_model()["tree_info"][0]["tree_structure"]
    assert booster.feature_name()[root["split_feature"]] == "f23"
    assert "feature_names" not in from_lightgbm_text(text).params  # twinrank's own names are the default


def test_lightgbm_reads_a_letor_file_one_column_wider(tmp_path):
    """What docs/lightgbm.md says: LightGBM's loader takes LETOR's 1-based ids as 0-based columns."""
    (tmp_path / "d.txt").write_text("2 1:0.5 2:0.1 3:0.9\n0 1:0.1 2:0.7 3:0.2\n1 1:0.3 2:0.4 3:0.5\n")
    assert lgb.Dataset(str(tmp_path / "d.txt"), params={"verbose": -1}).construct().num_feature() == 4


def test_fast_twin_offers_the_same_functions():
    for name in ("to_lightgbm_text", "save_lightgbm", "from_lightgbm_text", "load_lightgbm"):
        assert getattr(fast_text, name) is getattr(twinrank.interop.lightgbm_text, name)


# ---------------------------------------------------------------- command line


def test_cli_export_then_import(lightgbm_ranker, mq, tmp_path, capsys):
    X_test = mq[3]
    assert main(["import", "--model", str(lightgbm_ranker), "--output", str(tmp_path / "m.json")]) == 0
    assert "imported 20 trees" in capsys.readouterr().err
    assert main(["export", "--model", str(tmp_path / "m.json"), "--output", str(tmp_path / "m.txt"),
                 "--trees", "5"]) == 0
    expected = lgb.Booster(model_file=str(lightgbm_ranker)).predict(X_test, raw_score=True, num_iteration=5)
    np.testing.assert_array_equal(lgb.Booster(model_file=str(tmp_path / "m.txt")).predict(X_test), expected)
    capsys.readouterr()
    assert main(["export", "--model", str(tmp_path / "m.json"), "--output", "-"]) == 0
    assert capsys.readouterr().out.startswith("tree\nversion=v4\n")


def test_cli_checks_paths_before_work(tmp_path, capsys):
    (tmp_path / "bad.txt").write_text("not a model")
    assert main(["import", "--model", str(tmp_path / "bad.txt"), "--output", "/nonexistent/m.json"]) == 2
    assert "--output /nonexistent/m.json: folder /nonexistent does not exist" in capsys.readouterr().err
    assert main(["export", "--model", str(tmp_path / "nope.json"), "--output", str(tmp_path / "m.txt")]) == 2
    assert f"--model {tmp_path / 'nope.json'}: no such file" in capsys.readouterr().err
    assert main(["import", "--model", str(tmp_path / "bad.txt"), "--output", str(tmp_path / "m.json")]) == 2
    assert "not a LightGBM text model" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_every_new_flag_has_help(capsys):
    for command in ("export", "import"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        for flag in ("--model", "--output", "--format"):
            assert flag in out
        assert "default: lightgbm" in out


def test_package_version():
    assert twinrank.__version__ == twinrank.reference.__version__ == twinrank.fast.__version__
    assert twinrank.__version__ != ""

"""The everyday surface: package-level imports, __version__, predict(n_trees=), feature
importances (both twins, against a hand count) and the readable tree dump."""
import subprocess
import sys

import numpy as np
import pytest
from synthetic import ranking_data

import twinrank.fast as fast
import twinrank.reference as reference
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import Tree
from twinrank.reference.trees.explain import dump_model, dump_tree, feature_importances
from twinrank.reference.trees.predict import predict_tree

EVERYDAY = ["LambdaMART", "GBRT", "RandomForest", "IGBRT", "McRank", "Dataset", "load_mq2008",
            "read_letor", "evaluate", "load_model", "feature_importances", "dump_tree",
            "drop_single_label_queries", "query_level_normalize", "kendall_tau", "spearman_rho", "footrule"]
MODULE_OF = {"LambdaMART": "lambdamart", "GBRT": "gbrt", "RandomForest": "forest", "IGBRT": "forest",
             "McRank": "classification", "Dataset": "data", "load_mq2008": "data",
             "read_letor": "letor", "evaluate": "metrics", "load_model": "model",
             "feature_importances": "explain", "dump_tree": "explain", "drop_single_label_queries": "data",
             "query_level_normalize": "features.query_norm", "kendall_tau": "evaluation.rank_correlation",
             "spearman_rho": "evaluation.rank_correlation", "footrule": "evaluation.rank_correlation"}


@pytest.mark.parametrize("twin", [reference, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("name", EVERYDAY)
def test_everyday_names_import_from_the_package(twin, name):
    module = __import__(f"{twin.__name__}.{MODULE_OF[name]}", fromlist=[name])
    assert getattr(twin, name) is getattr(module, name)
    assert name in twin.__all__ and name in dir(twin)


def test_fast_estimators_are_the_fast_twin():
    from twinrank.fast import LambdaMART  # noqa: F401  (the README's import line)
    assert fast.LambdaMART.engine.name != reference.LambdaMART.engine.name
    with pytest.raises(AttributeError):
        fast.NoSuchName  # noqa: B018


def test_importing_a_fast_module_does_not_load_the_estimators():
    code = ("import sys, twinrank.reference.io.data; "
            "print('twinrank.fast.rankers.lambdamart' in sys.modules, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_core_never_imports_scikit_learn():
    code = ("import sys; from twinrank.fast import LambdaMART, McRank; import twinrank.cli; "
            "import twinrank.testing.registry; print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_version():
    assert reference.__version__ == fast.__version__
    assert reference.__version__[0].isdigit()


@pytest.fixture(scope="module")
def fitted():
    data = ranking_data(n_queries=20, max_docs=10, seed=3)
    params = dict(n_trees=6, max_leaves=5, min_samples_leaf=1, seed=0)
    return data, reference.LambdaMART(**params).fit(data), fast.LambdaMART(**params).fit(data)


def test_predict_with_the_first_trees(fitted):
    data, ref, _ = fitted
    model = ref.model_
    by_hand = np.full(data.n_rows, model.base_score)
    for k in range(model.n_trees + 1):
        np.testing.assert_allclose(ref.predict(data, n_trees=k), by_hand, rtol=1e-12)
        if k < model.n_trees:
            tree_scores = predict_tree(model.trees[k], data.X)  # (n_rows,)
            by_hand = by_hand + model.tree_weights[k] * tree_scores
    np.testing.assert_array_equal(ref.predict(data, n_trees=None), ref.predict(data))
    for bad in (-1, model.n_trees + 1, 2.5):
        with pytest.raises(ParameterError, match="n_trees"):
            ref.predict(data, n_trees=bad)


def test_mcrank_predicts_with_the_first_rounds():
    data = ranking_data(n_queries=15, max_docs=8, seed=1)
    est = reference.McRank(n_trees=4, max_leaves=3, min_samples_leaf=1).fit(data)
    assert not np.allclose(est.predict(data, n_trees=1), est.predict(data))
    np.testing.assert_array_equal(est.predict(data, n_trees=4), est.predict(data))


def test_importances_by_hand_and_between_twins(fitted):
    data, ref, fst = fitted
    trees = ref.model_.trees
    split = np.zeros((len(trees), data.n_features))
    gain = np.zeros((len(trees), data.n_features))
    for t, tree in enumerate(trees):
        for node in range(tree.n_nodes):
            if tree.left[node] != -1:  # internal node
                split[t, tree.feature[node]] += 1
                gain[t, tree.feature[node]] += tree.gain[node]
    np.testing.assert_array_equal(feature_importances(ref, "split", per_tree=True), split)
    np.testing.assert_allclose(feature_importances(ref.model_, "gain", per_tree=True), gain)
    np.testing.assert_array_equal(feature_importances(ref, "split"), split.sum(axis=0))
    # the fast twin grows the same trees: the same importances (gains within summation order)
    np.testing.assert_array_equal(fast.feature_importances(fst, "split"), split.sum(axis=0))
    np.testing.assert_allclose(fast.feature_importances(fst, "gain"), gain.sum(axis=0), rtol=1e-9)
    np.testing.assert_allclose(ref.feature_importances_, gain.sum(axis=0) / gain.sum())
    assert split.sum() == sum(t.n_leaves - 1 for t in trees)  # binary splits: leaves - 1
    with pytest.raises(ParameterError, match="kind"):
        feature_importances(ref, "cover")


def test_mcrank_importances_sum_its_classifiers():
    data = ranking_data(n_queries=15, max_docs=8, seed=1)
    est = fast.McRank(n_trees=2, max_leaves=3, min_samples_leaf=1).fit(data)
    total = sum(feature_importances(c, "split") for c in est.model_.classifiers)
    np.testing.assert_array_equal(feature_importances(est, "split"), total)
    assert feature_importances(est, "gain", per_tree=True).shape == (est.model_.n_trees, data.n_features)


def test_tree_dump_reads_as_the_tree():
    #      0: f2 <= 0.5                  (column 1 of X: LETOR feature 2)
    #     /            \
    #  1: leaf 0.25   2: leaf -0.5      (NaN goes right)
    tree = Tree(feature=[1, -1, -1], threshold=[0.5, 0, 0], bin_threshold=[3, 0, 0],
                left=[1, -1, -1], right=[2, -1, -1], missing=[2, -1, -1],
                value=[0.0, 0.25, -0.5], gain=[12.5, 0, 0], count=[100, 60, 40],
                hessian_sum=[100.0, 60.0, 40.0])
    assert dump_tree(tree) == ("0: f2 <= 0.5 (NaN -> 2)  gain=12.5  count=100\n"
                               "  1: leaf 0.25  count=60\n"
                               "  2: leaf -0.5  count=40")
    assert dump_tree(tree, feature_names=["bm25", "pagerank"]).startswith("0: pagerank <= 0.5")


def test_model_dump_has_every_tree(fitted):
    _, ref, _ = fitted
    text = dump_model(ref)
    assert text.count("tree ") == ref.model_.n_trees
    assert sum(line.lstrip().split(": ")[1].startswith("leaf") for line in text.splitlines()
               if ": " in line) == sum(t.n_leaves for t in ref.model_.trees)


def test_prior_model_trees_count_when_asked():
    data = ranking_data(n_queries=15, max_docs=8, seed=2)
    est = reference.IGBRT(n_trees=2, max_leaves=3, min_samples_leaf=1, rf_n_trees=3,
                          rf_max_leaves=4).fit(data)
    forest, own = est.model_.init_model, est.model_
    both = feature_importances(est, "split", per_tree=True, include_init_model=True)
    assert both.shape == (forest.n_trees + own.n_trees, data.n_features)
    own_only = feature_importances(own, "split", per_tree=True)
    np.testing.assert_array_equal(both[forest.n_trees:], own_only)
    gain = feature_importances(est, "gain", include_init_model=True)
    np.testing.assert_allclose(est.feature_importances_, gain / gain.sum())

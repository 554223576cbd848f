"""Per-feature contributions (path-dependent TreeSHAP): the definition, LightGBM, the score, both twins.

Three oracles, none of them the code under test: the Shapley formula itself, summed over every
subset of a few features with the path-dependent expectation of Lundberg et al.'s Algorithm 1;
LightGBM's ``pred_contrib`` on the exported model; and the model's own score, which every row
of contributions must add up to.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from synthetic import ranking_data

import twinrank.fast.attribution.contributions as fast
import twinrank.reference.attribution.contributions as reference
from twinrank import fast as fast_twin, reference as reference_twin
from twinrank.fast.rankers.dart import DART
from twinrank.interop.lightgbm_text import to_lightgbm_text
from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008
from twinrank.reference.io.model import Ensemble, Tree
from twinrank.reference.trees.predict import predict_ensemble, predict_tree

TWINS = {"reference": reference, "fast": fast}


def path_dependent_value(tree: Tree, x, known: set) -> float:
    """The paper's Algorithm 1, EXPVALUE: f_x(S), following x on the features of S, else every
    child weighted by its share of the node's training rows."""
    def value(j):
        if tree.left[j] == LEAF:
            return tree.value[j]
        children = {int(tree.left[j]), int(tree.right[j]), int(tree.missing[j])}
        if tree.feature[j] in known:
            v = x[tree.feature[j]]
            return value(tree.missing[j] if np.isnan(v) else tree.left[j] if v <= tree.threshold[j]
                         else tree.right[j])
        return sum(tree.count[c] / tree.count[j] * value(c) for c in sorted(children))
    return value(0)


def shapley_by_definition(tree: Tree, x) -> np.ndarray:
    """phi_i = sum over S of |S|! (M - |S| - 1)! / M! (f_x(S + i) - f_x(S)); the last entry f_x({})."""
    m = len(x)
    phi = np.zeros(m + 1)
    for i in range(m):
        others = [f for f in range(m) if f != i]
        for size in range(m):
            weight = math.factorial(size) * math.factorial(m - size - 1) / math.factorial(m)
            for subset in itertools.combinations(others, size):
                phi[i] += weight * (path_dependent_value(tree, x, {*subset, i})
                                    - path_dependent_value(tree, x, set(subset)))
    phi[m] = path_dependent_value(tree, x, set())
    return phi


def small_trees(seed: int, missing: str):
    """The trees of a small GBRT on 4 features with NaNs: deep enough to split on a feature twice
    along a path; ``missing="separate"`` gives three-way splits."""
    data = ranking_data(n_queries=8, max_docs=10, n_features=4, seed=seed, missing=0.15, levels=6)
    model = reference_twin.GBRT(n_trees=2, max_leaves=10, min_samples_leaf=2, missing=missing,
                                seed=seed).fit(data).model_
    return model, data.X


@settings(max_examples=12)
@given(seed=st.integers(0, 2**16), missing=st.sampled_from(["learn", "separate"]))
def test_each_tree_gives_the_shapley_values_of_the_definition(seed, missing):
    model, X = small_trees(seed, missing)
    rows = X[:12]
    for tree in model.trees:
        expected = np.array([shapley_by_definition(tree, x) for x in rows])
        for twin in TWINS.values():
            np.testing.assert_allclose(twin.tree_contributions(tree, rows), expected, rtol=1e-12,
                                       atol=1e-14 * (1 + np.abs(expected).max()))


def test_a_feature_split_twice_on_a_path_and_a_third_child_are_met():
    """The cases the definition test must cover (a vacuous case would prove nothing)."""
    repeated = third = False
    for seed in range(12):
        for tree in small_trees(seed, "separate")[0].trees:
            third |= bool(np.any((tree.missing != tree.left) & (tree.missing != tree.right)))
            repeated |= _splits_twice_on_a_path(tree)
    assert repeated and third


def _splits_twice_on_a_path(tree: Tree, node: int = 0, seen: frozenset = frozenset()) -> bool:
    if tree.left[node] == LEAF:
        return False
    f = int(tree.feature[node])
    return f in seen or any(_splits_twice_on_a_path(tree, int(c), seen | {f})
                            for c in {tree.left[node], tree.right[node], tree.missing[node]})


@pytest.fixture(scope="module")
def mq2008():
    """MQ2008 fold 1 (train, test features) with 10% of the feature values made missing."""
    train, _, test = load_mq2008(fold=1)
    rng = np.random.default_rng(0)
    X, X_test = train.X.copy(), test.X.copy()
    X[rng.random(X.shape) < 0.1] = np.nan
    X_test[rng.random(X_test.shape) < 0.1] = np.nan
    return Dataset(X, train.y, train.query_offsets), X_test


KINDS = {  # estimators whose model LightGBM can hold (tests/interop) and explain
    "lambdamart": lambda: fast_twin.LambdaMART(n_trees=6, max_leaves=15),
    "lambdamart-separate": lambda: fast_twin.LambdaMART(n_trees=6, max_leaves=15, missing="separate"),
    "lambdamart-mean": lambda: fast_twin.LambdaMART(n_trees=6, max_leaves=15, missing="mean"),
    "gbrt": lambda: fast_twin.GBRT(n_trees=6, max_leaves=8),
    "random_forest": lambda: fast_twin.RandomForest(n_trees=4, max_leaves=16, seed=3),
    "igbrt": lambda: fast_twin.IGBRT(n_trees=3, max_leaves=8, rf_n_trees=2, rf_max_leaves=8, seed=1),
    "dart": lambda: DART(n_trees=6, max_leaves=8),
}


@pytest.mark.parametrize("kind", KINDS)
def test_contributions_equal_lightgbm_pred_contrib_on_the_export(kind, mq2008, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    train, X_test = mq2008
    model = KINDS[kind]().fit(train).model_
    (tmp_path / "model.txt").write_text(to_lightgbm_text(model))
    booster = lgb.Booster(model_file=str(tmp_path / "model.txt"))
    expected = booster.predict(X_test, pred_contrib=True, num_threads=1)  # float32 rows
    assert expected.shape == (len(X_test), model.n_features + 1)
    for twin in TWINS.values():
        phi = twin.predict_contributions(model, X_test)
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("name", TWINS)
def test_rows_sum_to_the_score_and_the_twins_agree_on_mq2008(name, mq2008):
    train, X_test = mq2008
    model = fast_twin.LambdaMART(n_trees=8, max_leaves=31, missing="separate").fit(train).model_
    phi = TWINS[name].predict_contributions(model, X_test)
    np.testing.assert_allclose(phi.sum(axis=1), predict_ensemble(model, X_test), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(phi[:, -1], phi[0, -1])  # the base value, one for every row
    np.testing.assert_array_equal(phi, reference.predict_contributions(model, X_test))


def test_duplicated_features_tied_values_depth_one_and_one_leaf_trees():
    """Twins agree bit for bit where splits tie: a copied column, coarse values (ties); stumps;
    an ensemble whose trees are single leaves (every contribution 0, the base value the score)."""
    data = ranking_data(n_queries=20, max_docs=12, n_features=5, seed=4, missing=0.1, levels=3)
    X = np.column_stack([data.X, data.X[:, 0], data.X[:, 0]])  # columns 5 and 6 copy column 0
    tied = Dataset(X, data.y, data.query_offsets)
    for params in (dict(max_leaves=12), dict(max_leaves=2), dict(max_leaves=12, missing="separate")):
        model = fast_twin.LambdaMART(n_trees=4, min_samples_leaf=1, seed=0, **params).fit(tied).model_
        phi = fast.predict_contributions(model, X)
        np.testing.assert_array_equal(phi, reference.predict_contributions(model, X))
        np.testing.assert_allclose(phi.sum(axis=1), predict_ensemble(model, X), rtol=0, atol=1e-12)
    leaf = Tree(feature=[LEAF], threshold=[0.0], bin_threshold=[LEAF], left=[LEAF], right=[LEAF],
                missing=[LEAF], value=[0.75], gain=[0.0], count=[0], hessian_sum=[0.0])
    single = Ensemble(trees=[leaf, leaf], tree_weights=[1.0, 0.5], base_score=0.25, n_features=X.shape[1])
    for twin in TWINS.values():
        phi = twin.predict_contributions(single, X)
        np.testing.assert_array_equal(phi[:, :-1], 0.0)
        np.testing.assert_array_equal(phi[:, -1], predict_ensemble(single, X))


def test_the_base_value_is_the_mean_training_score_of_each_tree():
    """E[f] of a tree is its mean over the rows it was grown on (count is each node's rows)."""
    data = ranking_data(n_queries=15, max_docs=10, seed=2)
    model = reference_twin.GBRT(n_trees=3, max_leaves=6, min_samples_leaf=1).fit(data).model_
    for tree in model.trees:  # GBRT grows every tree on every row
        assert reference.expected_value(tree) == pytest.approx(predict_tree(tree, data.X).mean(), rel=1e-12)


@pytest.mark.parametrize("name", TWINS)
def test_a_tree_without_its_training_counts_is_refused(name):
    model, X = small_trees(0, "learn")
    tree = model.trees[0]
    zeroed = Tree(**{**{f: getattr(tree, f) for f in ("feature", "threshold", "bin_threshold", "left", "right",
                                                     "missing", "value", "gain", "hessian_sum")},
                     "count": np.zeros(tree.n_nodes)})
    with pytest.raises(ModelFormatError, match=r"trees\[1\].count\[0\] = 0: .*training rows"):
        TWINS[name].predict_contributions(Ensemble(trees=[tree, zeroed], tree_weights=[1, 1], n_features=4), X)
    uneven = tree.count.copy()
    uneven[tree.left[0]] += 1  # the root's children hold one row more than the root
    changed = Tree(**{**{f: getattr(tree, f) for f in ("feature", "threshold", "bin_threshold", "left", "right",
                                                      "missing", "value", "gain", "hessian_sum")}, "count": uneven})
    with pytest.raises(ModelFormatError, match=r"tree.count\[0\] = .*children hold"):
        TWINS[name].tree_contributions(changed, X)


ESTIMATORS = {  # every estimator whose score is a sum of trees: (class name, module, parameters)
    "LambdaMART": ("lambdamart", dict(n_trees=3)),
    "GBRT": ("gbrt", dict(n_trees=3, missing="mean")),
    "RandomForest": ("forest", dict(n_trees=3)),
    "IGBRT": ("forest", dict(n_trees=2, rf_n_trees=2)),
    "DART": ("dart", dict(n_trees=4)),
    "XDART": ("dart", dict(n_trees=4)),
    "BLMART": ("bagging", dict(n_trees=2, n_models=2, combine="mean")),
}
REFUSED = {  # estimators whose score is not: the words the refusal must give as its reason
    "McRank": ("classification", dict(n_trees=2), "sigmoids of its classifiers"),
    "CumulativeRegression": ("classification", dict(n_trees=2, rf_n_trees=2), "clipped to \\[0, 1\\]"),
    "BLMART": ("bagging", dict(n_trees=2, n_models=2), "rescales each member's scores within each query"),
}


def estimator(twin: str, name: str, module: str, params: dict):
    cls = getattr(__import__(f"twinrank.{twin}.rankers.{module}", fromlist=[name]), name)
    return cls(max_leaves=6, min_samples_leaf=2, seed=0, **params)


@pytest.fixture(scope="module")
def small():
    return ranking_data(n_queries=20, max_docs=10, seed=5, missing=0.05)


@pytest.mark.parametrize("twin", ["reference", "fast"])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_tree_ensemble_estimator_explains_its_predict(twin, name, small):
    fitted = estimator(twin, name, *ESTIMATORS[name]).fit(small, eval_set=small)  # X-DART prunes on it
    phi = fitted.predict_contributions(small.X)
    assert phi.shape == (small.n_rows, small.n_features + 1) and phi.dtype == np.float64
    np.testing.assert_allclose(phi.sum(axis=1), fitted.predict(small), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(phi, fitted.predict_contributions(small))  # a Dataset is its X


@pytest.mark.parametrize("twin", ["reference", "fast"])
@pytest.mark.parametrize("name", REFUSED)
def test_an_estimator_whose_score_is_no_sum_of_trees_is_refused_with_the_reason(twin, name, small):
    module, params, reason = REFUSED[name]
    fitted = estimator(twin, name, module, params).fit(small, eval_set=small)
    with pytest.raises(ModelFormatError, match=f"no per-feature contributions: .*{reason}") as refusal:
        fitted.predict_contributions(small.X)
    assert "\n" not in str(refusal.value)


STAGED = {  # estimators whose first k trees are a model of their own: (module, parameters, k)
    "LambdaMART": ("lambdamart", dict(n_trees=4), 2),
    "GBRT": ("gbrt", dict(n_trees=4, missing="mean"), 3),
    "RandomForest": ("forest", dict(n_trees=4), 2),
    "IGBRT": ("forest", dict(n_trees=3, rf_n_trees=2), 1),  # the forest counts whole
    "DART": ("dart", dict(n_trees=4, snapshot_sizes=(2,)), 2),
}


@pytest.mark.parametrize("name", STAGED)
def test_n_trees_explains_the_first_trees_as_predict_scores_them_in_both_twins(name, small):
    module, params, k = STAGED[name]
    phis = []
    for twin in ("reference", "fast"):
        fitted = estimator(twin, name, module, params).fit(small)
        phi = fitted.predict_contributions(small.X, n_trees=k)
        np.testing.assert_allclose(phi.sum(axis=1), fitted.predict(small, n_trees=k), rtol=0, atol=1e-12)
        assert np.max(np.abs(phi - fitted.predict_contributions(small.X))) > 1e-9  # fewer trees, other shares
        phis.append(phi)
    np.testing.assert_allclose(phis[1], phis[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("twin", ["reference", "fast"])
def test_n_trees_is_refused_as_predict_refuses_it(twin, small):
    bag = estimator(twin, "BLMART", "bagging", dict(n_trees=2, n_models=2, combine="mean")).fit(small)
    with pytest.raises(ParameterError, match="a bag is scored whole"):
        bag.predict_contributions(small.X, n_trees=1)
    lm = estimator(twin, "LambdaMART", "lambdamart", dict(n_trees=2)).fit(small)
    for bad in (3, -1, 1.5):
        with pytest.raises(ParameterError, match="n_trees"):
            lm.predict_contributions(small.X, n_trees=bad)

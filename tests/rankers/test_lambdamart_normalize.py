"""LambdaMART's ``normalize``: the estimator passes it to the objective, both twins, the CLI, the model file."""
import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.losses import objectives as fast_obj
from twinrank.fast.rankers import lambdamart as fast_lm
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.losses import objectives as ref_obj
from twinrank.reference.rankers import lambdamart as ref_lm
from twinrank.reference.trees.predict import apply_tree

ONE_TREE = dict(n_trees=1, learning_rate=1.0, max_leaves=2, min_samples_leaf=1, max_bins=255)


def test_default_is_the_normalised_form():
    assert ref_lm.LambdaMART().normalize is True
    assert fast_lm.LambdaMART().normalize is True


@pytest.mark.parametrize("lm, objectives", [(ref_lm, ref_obj), (fast_lm, fast_obj)],
                         ids=["reference", "fast"])
@pytest.mark.parametrize("normalize", [False, True])
def test_first_tree_is_the_newton_step_of_the_chosen_lambdas(lm, objectives, normalize):
    """One stump: its two leaves hold -sum(g)/sum(h) of exactly the objective's form."""
    train = ranking_data(seed=5, n_queries=12, max_docs=15)
    model = lm.LambdaMART(**ONE_TREE, normalize=normalize, target="ndcg").fit(train).model_
    g, h = objectives.lambdarank(train.y, np.zeros(train.n_rows), train.query_offsets, normalize=normalize)
    tree = model.trees[0]
    leaf = apply_tree(tree, train.X)  # (n_rows,) the leaf of every row
    assert len(np.unique(leaf)) == 2
    for node in np.unique(leaf):
        rows = leaf == node
        np.testing.assert_allclose(tree.value[node], -g[rows].sum() / h[rows].sum(), rtol=1e-9)


def test_the_two_forms_grow_different_models():
    train = ranking_data(seed=6, n_queries=30, max_docs=25)
    on = fast_lm.LambdaMART(n_trees=5, max_leaves=6, min_samples_leaf=3).fit(train).predict(train)
    off = fast_lm.LambdaMART(n_trees=5, max_leaves=6, min_samples_leaf=3, normalize=False).fit(train).predict(train)
    assert np.max(np.abs(on - off)) > 1e-3


@pytest.mark.parametrize("normalize", [False, True])
def test_twins_grow_the_same_trees_in_both_forms(normalize):
    train = ranking_data(seed=1, n_queries=40, max_docs=30, missing=0.1)
    params = dict(n_trees=8, learning_rate=0.3, max_leaves=6, min_samples_leaf=10, normalize=normalize)
    ref = ref_lm.LambdaMART(**params).fit(train)
    fast = fast_lm.LambdaMART(**params).fit(train)
    np.testing.assert_allclose(ref.predict(train), fast.predict(train), rtol=1e-9, atol=1e-12)


def test_cli_flag_reaches_the_model_file(tmp_path):
    data = tmp_path / "train.txt"
    write_letor(ranking_data(seed=7, n_queries=10, max_docs=12), data)
    for value, expected in (("false", False), ("true", True)):
        model = tmp_path / f"{value}.json"
        assert main(["train", "--train", str(data), "--model", str(model), "--trees", "2",
                     "--min-samples-leaf", "2", "--normalize", value, "--quiet"]) == 0
        assert Ensemble.load(model).params["normalize"] is expected

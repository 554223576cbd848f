"""The papers' settings, each one flag away: least-squares trees of the lambdas (Wu et al. Alg. 1,
jforests), the OC step that replaces Newton's leaves (Wu et al. Sec. 5.6), BL-MART's leaf size
as a percent of the rows (Table 2)."""
import numpy as np
import pytest

from twinrank.cli.training.train import _count_or_fraction
from twinrank.fast.trees import tree as fast_tree
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.model import LEAF
from twinrank.reference.params import BoostParams, TreeParams
from twinrank.reference.rankers.lambdamart import LambdaMART
from twinrank.reference.trees import binning, tree as ref_tree


@pytest.fixture(scope="module")
def mq2008():
    train, valid, _ = load_mq2008(1)
    return train.take_queries(np.arange(120)), valid.take_queries(np.arange(40))


@pytest.mark.parametrize("percent, n_rows, rows", [("0.12%", 2500, 3), ("0.25%", 2500, 7), ("0.5%", 2000, 10),
                                                   ("0.12%", 100, 1), ("100%", 7, 7)])
def test_a_percent_leaf_size_is_rows_times_p_over_100_rounded_up(percent, n_rows, rows):
    assert TreeParams(min_samples_leaf=percent).min_rows_in_leaf(n_rows) == rows
    assert TreeParams(min_samples_leaf=0.0025).min_rows_in_leaf(2500) == 7  # the fraction 0.0025 is 0.25%
    assert _count_or_fraction(percent) == percent


@pytest.mark.parametrize("bad", ["0%", "101%", "0.25", "abc%", "nan%"])
def test_a_leaf_size_string_must_be_a_percent(bad):
    with pytest.raises(ParameterError, match="min_samples_leaf"):
        TreeParams(min_samples_leaf=bad)


@pytest.mark.parametrize("grower", [ref_tree, fast_tree], ids=["reference", "fast"])
def test_least_squares_splits_are_the_newton_tree_of_unit_hessians_with_newton_leaves(mq2008, grower):
    """S^2/n chooses the splits (the Newton gain with every hessian 1); the leaves are -G/H."""
    train = mq2008[0]
    rng = np.random.default_rng(0)
    g, h = rng.normal(size=train.n_rows), rng.uniform(0.01, 2.0, train.n_rows)
    thresholds = binning.bin_thresholds(train.X)
    binned = binning.apply_bins(train.X, thresholds)
    params = TreeParams(max_leaves=8, min_samples_leaf=10, min_hessian_in_leaf=0.0)
    least_squares = grower.grow_tree(binned, g, h, thresholds,
                                     TreeParams(**{**params.to_dict(), "split_gain": "least_squares"}))
    on_units = grower.grow_tree(binned, g, np.ones_like(h), thresholds, params)
    newton = grower.grow_tree(binned, g, h, thresholds, params)
    for name in ("feature", "bin_threshold", "left", "right", "count"):
        np.testing.assert_array_equal(getattr(least_squares, name), getattr(on_units, name))
    assert not np.array_equal(least_squares.feature, newton.feature)  # the criterion matters here
    leaf = np.zeros(train.n_rows, dtype=np.int64)
    for i in range(train.n_rows):
        node = 0
        while least_squares.left[node] != LEAF:
            x = train.X[i, least_squares.feature[node]]
            node = least_squares.left[node] if x <= least_squares.threshold[node] else least_squares.right[node]
        leaf[i] = node
    for node in np.flatnonzero(least_squares.left == LEAF):
        rows = leaf == node
        assert least_squares.value[node] == pytest.approx(-g[rows].sum() / h[rows].sum(), rel=1e-12)


def test_oc_trees_are_least_squares_fits_unshrunk_and_weighted_by_the_line_search(mq2008):
    train, valid = mq2008
    est = LambdaMART(n_trees=3, max_leaves=6, step="oc", learning_rate=0.1, seed=0).fit(train, eval_set=[valid])
    model = est.model_
    assert est.history_["alpha"] == list(model.tree_weights) and len(model.trees) == 3
    params = est.validated_params()
    loss = est.lambdarank_loss(params, train)
    g, h = np.empty(train.n_rows), np.empty(train.n_rows)
    loss.gradients(np.zeros(train.n_rows), None, g, h)  # the first round's lambdas, at F_0 = 0
    first = model.trees[0]
    binned = binning.apply_bins(train.X, binning.bin_thresholds(train.X))
    leaf = np.zeros(train.n_rows, dtype=np.int32)
    again = ref_tree.grow_tree(binned, g, np.ones_like(h), binning.bin_thresholds(train.X), params.boost.tree,
                               leaf_of_row=leaf)
    np.testing.assert_array_equal(first.feature, again.feature)
    for node in np.flatnonzero(first.left == LEAF):  # the mean step -S/n, not -G/H, not times eta
        assert first.value[node] == pytest.approx(-g[leaf == node].sum() / (leaf == node).sum(), rel=1e-12)
    assert BoostParams(step="oc", learning_rate=0.1).tree_rate(5) == 1.0


def test_the_oc_step_needs_validation_data_or_step_on_train(mq2008):
    with pytest.raises(ParameterError, match="step='oc' with step_on='valid'"):
        LambdaMART(n_trees=2, step="oc").fit(mq2008[0])
    with pytest.raises(ParameterError, match="quantized_gradients"):
        BoostParams(quantized_gradients=True, tree=TreeParams(split_gain="least_squares"))


def test_a_dart_model_without_snapshots_refuses_a_prefix(mq2008, tmp_path):
    """Its first k trees were rescaled (and, X-DART, pruned) after they were grown: not Table 1's size-k model."""
    from twinrank.cli import main
    from twinrank.reference.analysis.staged import staged_scores
    from twinrank.reference.io.letor import write_letor
    from twinrank.reference.rankers.dart import DART

    train, valid = mq2008
    est = DART(n_trees=6, max_leaves=4, drop="fixed", drop_k=2, seed=0).fit(train)
    with pytest.raises(ParameterError, match=r"snapshot_sizes=\(3,\)"):
        est.predict(valid, n_trees=3)
    np.testing.assert_array_equal(est.predict(valid, n_trees=6), est.predict(valid))
    assert [size for size, _ in staged_scores(est.model_, valid.X)] == [6]  # its final size only
    with_snapshot = DART(n_trees=6, max_leaves=4, drop="fixed", drop_k=2, seed=0, snapshot_sizes=(3,)).fit(train)
    assert with_snapshot.predict(valid, n_trees=3).shape == (valid.n_rows,)
    path = tmp_path / "dart.json"
    est.save(path)
    valid_file = tmp_path / "valid.txt"
    write_letor(valid, valid_file)
    assert main(["predict", "--model", str(path), "--data", str(valid_file), "--trees", "3",
                 "--output", str(tmp_path / "s.txt")]) == 2


def test_a_large_cost_penalty_chooses_splits_but_does_not_stop_growth(mq2008):
    """Mohan 2010, Eq. 6.1: the penalty chooses among a node's splits; lambda = 10 still grows full trees."""
    from twinrank.fast.rankers.gbrt import GBRT as FastGBRT
    from twinrank.reference.rankers.gbrt import GBRT

    train = mq2008[0]
    costs = np.arange(1.0, 47.0)
    models = [cls(n_trees=3, max_leaves=6, cost_lambda=10.0, feature_costs=costs).fit(train).model_
              for cls in (GBRT, FastGBRT)]
    for model in models:
        assert len(model.trees) == 3 and all((t.left == LEAF).sum() == 6 for t in model.trees)
    for a, b in zip(*(m.trees for m in models)):
        np.testing.assert_array_equal(a.feature, b.feature)
    blind = GBRT(n_trees=3, max_leaves=6).fit(train).model_
    spent = [costs[np.unique(t.feature[t.feature >= 0])].sum() for t in (models[0].trees[0], blind.trees[0])]
    assert spent[0] < spent[1]

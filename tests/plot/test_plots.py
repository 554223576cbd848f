"""The plots draw what the fitted model holds, on every model kind they apply to.

Each test reads the drawing back from the matplotlib Axes (Agg backend): the bars' widths are the
importances counted here from the trees' arrays, the lines' data are the history, the tree's text
labels are its nodes.
"""
import dataclasses
import sys

import numpy as np
import pytest
from synthetic import ranking_data

import twinrank.fast.plot
import twinrank.reference.plot
from twinrank.fast.rankers.lambdamart import LambdaMART as FastLambdaMART
from twinrank.interop.lightgbm_text import from_lightgbm_text, to_lightgbm_text
from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import BagModel, McRankModel
from twinrank.reference.plot import create_tree_digraph, plot_importance, plot_metric, plot_tree
from twinrank.reference.rankers.bagging import BLMART
from twinrank.reference.rankers.classification import CumulativeRegression, McRank
from twinrank.reference.rankers.dart import DART, XDART
from twinrank.reference.rankers.forest import IGBRT, RandomForest
from twinrank.reference.rankers.gbrt import GBRT
from twinrank.reference.rankers.lambdamart import LambdaMART

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")

SMALL = {"max_leaves": 4, "min_samples_leaf": 3}
KINDS = {  # every estimator kind: a small one
    "lambdamart": lambda: LambdaMART(n_trees=4, eval_train=True, **SMALL),
    "fast lambdamart": lambda: FastLambdaMART(n_trees=4, **SMALL),
    "optimal step": lambda: LambdaMART(n_trees=3, step="optimal", **SMALL),
    "cost-aware": lambda: LambdaMART(n_trees=3, feature_costs=[1, 2, 3, 4, 5, 6], cost_lambda=1.0, **SMALL),
    "three-way splits": lambda: LambdaMART(n_trees=3, missing="separate", **SMALL),
    "gbrt": lambda: GBRT(n_trees=3, **SMALL),
    "random forest": lambda: RandomForest(n_trees=3, **SMALL),
    "igbrt": lambda: IGBRT(n_trees=2, rf_n_trees=2, rf_max_leaves=4, **SMALL),
    "mcrank": lambda: McRank(n_trees=2, **SMALL),
    "cumulative regression": lambda: CumulativeRegression(n_trees=2, rf_n_trees=2, rf_max_leaves=4, **SMALL),
    "dart": lambda: DART(n_trees=4, drop_rate=0.5, **SMALL),  # trees dropped: weights below 1
    "x-dart": lambda: XDART(n_trees=4, **SMALL),
    "bl-mart": lambda: BLMART(n_trees=2, n_models=2, **SMALL),
}


@pytest.fixture(scope="module")
def fitted():
    """``{kind: fitted estimator}``, and a model imported from LightGBM's text with feature names."""
    train = ranking_data(40, 10, 6, seed=1, missing=0.1)
    valid = ranking_data(15, 10, 6, seed=2, missing=0.1)
    found = {kind: make().fit(train, eval_set=[valid]) for kind, make in KINDS.items()}
    names = ["title", "body", "anchor", "url", "pagerank", "clicks"]
    found["lightgbm"] = from_lightgbm_text(to_lightgbm_text(found["lambdamart"].model_, feature_names=names))
    return found


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def ensembles(model) -> list:
    """The ensembles a model scores with, each with its prior model's."""
    model = getattr(model, "model_", model)
    parts = model.classifiers if isinstance(model, McRankModel) else (
        model.members if isinstance(model, BagModel) else [model])
    return [e for part in parts for e in [part, *([part.init_model] if part.init_model is not None else [])]]


def counted_importance(model, kind: str) -> np.ndarray:
    """Split counts or gains summed over every internal node of every tree, read off the arrays."""
    n = getattr(model, "model_", model).n_features
    total = np.zeros(n)
    for ensemble in ensembles(model):
        for tree in ensemble.trees:
            for k in np.flatnonzero(tree.left != LEAF):
                total[tree.feature[k]] += 1.0 if kind == "split" else tree.gain[k]
    return total


def bars(ax) -> dict:
    """``{tick label: bar width}`` from the top bar down."""
    widths = [p.get_width() for p in ax.patches]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    return dict(zip(labels[::-1], widths[::-1]))


@pytest.mark.parametrize("kind", [*KINDS, "lightgbm"])
@pytest.mark.parametrize("importance_type", ["split", "gain"])
def test_the_bars_are_the_importances_largest_first(fitted, kind, importance_type):
    ranker = fitted[kind]
    ax = plot_importance(ranker, importance_type)
    expected = counted_importance(ranker, importance_type)
    names = (["title", "body", "anchor", "url", "pagerank", "clicks"] if kind == "lightgbm"
             else [f"f{j + 1}" for j in range(len(expected))])
    drawn = bars(ax)
    assert set(drawn) == {names[j] for j in np.flatnonzero(expected)}
    for j in np.flatnonzero(expected):
        assert drawn[names[j]] == pytest.approx(expected[j], rel=1e-12)
    assert list(drawn.values()) == sorted(drawn.values(), reverse=True)
    assert isinstance(ax, matplotlib.axes.Axes)


def test_max_num_features_keeps_the_largest(fitted):
    expected = counted_importance(fitted["lambdamart"], "gain")
    drawn = bars(plot_importance(fitted["lambdamart"], "gain", max_num_features=2))
    assert sorted(drawn.values()) == pytest.approx(sorted(expected)[-2:])


def test_importance_reads_feature_names_in(fitted):
    ranker = fitted["fast lambdamart"]
    ranker.feature_names_in_ = np.array(["a", "b", "c", "d", "e", "f"], dtype=object)
    try:
        drawn = bars(plot_importance(ranker))
    finally:
        del ranker.feature_names_in_
    expected = counted_importance(ranker, "split")
    assert drawn == {"abcdef"[j]: expected[j] for j in np.flatnonzero(expected)}


def test_on_given_axes_and_refusals(fitted):
    _, ax = plt.subplots()
    assert plot_importance(fitted["mcrank"], ax=ax) is ax
    with pytest.raises(ParameterError, match="importance kind must be one of"):
        plot_importance(fitted["mcrank"], "weight")
    with pytest.raises(ParameterError, match="max_num_features must be at least 1"):
        plot_importance(fitted["mcrank"], max_num_features=0)
    with pytest.raises(ParameterError, match="this LambdaMART is not fitted yet"):
        plot_importance(LambdaMART())
    with pytest.raises(ParameterError, match="a plot reads a fitted twinrank estimator or a twinrank model"):
        plot_tree(np.zeros(3))


def lines(ax) -> dict:
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()}


def test_the_lines_are_the_history(fitted):
    ranker = fitted["lambdamart"]
    drawn = lines(plot_metric(ranker))
    assert set(drawn) == {"train", "valid"}
    for name in ("train", "valid"):
        values = ranker.history_[f"{name}:ndcg@10"]
        assert drawn[name] == (list(range(1, len(values) + 1)), values)


SEVERAL = ("mcrank", "cumulative regression", "bl-mart")  # models of several ensembles


@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_several_eval_sets_and_metrics_draw_a_line_per_set(engine):
    estimator = LambdaMART if engine == "reference" else FastLambdaMART
    train, sets = ranking_data(30, 10, 4, seed=7), [ranking_data(10, 10, 4, seed=s) for s in (8, 9)]
    ranker = estimator(n_trees=3, metric=["ndcg@5", "map"], **SMALL).fit(train, eval_set=sets)
    assert lines(plot_metric(ranker)).keys() == {"valid", "valid_1"}  # the first metric, ndcg@5
    drawn = lines(plot_metric(ranker, "map"))
    assert drawn == {name: ([1, 2, 3], ranker.evals_result_[name]["map"]) for name in ("valid", "valid_1")}
    named = estimator(n_trees=2, metric="map", **SMALL).fit(train, eval_set=sets, eval_names=["web", "news"])
    assert {k: v[1] for k, v in lines(plot_metric(named)).items()} == {
        "web": named.history_["web:map"], "news": named.history_["news:map"]}


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in SEVERAL])
def test_every_one_ensemble_kind_draws_its_validation_metric(fitted, kind):
    ranker = fitted[kind]
    drawn = lines(plot_metric(ranker, "ndcg@10"))
    assert drawn["valid"][1] == ranker.history_["valid:ndcg@10"]
    assert not {"dropped", "branch", "size", "valid_loss", "best_loss", "alpha"} & set(drawn)


@pytest.mark.parametrize("kind", ["mcrank", "cumulative regression"])
def test_mcrank_draws_one_line_per_classifier(fitted, kind):
    ranker = fitted[kind]
    drawn = lines(plot_metric(ranker, "ndcg@10"))
    assert set(drawn) == {f"y>{c:g}:valid" for c in ranker.model_.labels[:-1]}
    for line, (_, values) in drawn.items():
        assert values == ranker.history_[f"{line}:ndcg@10"]


def test_a_bag_draws_its_members_histories(fitted):
    bag = fitted["bl-mart"]
    drawn = lines(plot_metric(bag))
    assert set(drawn) == {"member0:valid", "member1:valid"}
    for m, member in enumerate(bag.model_.members):
        assert drawn[f"member{m}:valid"][1] == member.history["valid:ndcg@10"]


def test_a_model_draws_its_own_history(fitted):
    model = fitted["dart"].model_
    assert lines(plot_metric(model))["valid"][1] == model.history["valid:ndcg@10"]


def test_metric_refusals(fitted):
    with pytest.raises(ParameterError, match=r"no 'map' in the history; recorded: ndcg@10"):
        plot_metric(fitted["lambdamart"], "map")
    without = LambdaMART(n_trees=2, **SMALL).fit(ranking_data(10, 6, 3, seed=3))
    with pytest.raises(ParameterError, match="recorded no metric while training: fit it with eval_set"):
        plot_metric(without)


def texts(ax) -> list:
    return [t.get_text() for t in ax.texts]


def node_labels(tree, names, precision=4) -> tuple:
    """Every node's label and every arrow's, made here from the arrays."""
    boxes, arrows = [], []
    for k in range(tree.n_nodes):
        if tree.left[k] == LEAF:
            boxes.append(f"leaf {tree.value[k]:.{precision}g}")
        else:
            boxes.append(f"{names[tree.feature[k]]} <= {tree.threshold[k]:.{precision}g}")
            goes = tree.missing[k]
            arrows += ["yes, NaN" if goes == tree.left[k] else "yes",
                       "no, NaN" if goes == tree.right[k] else "no"]
            arrows += ["NaN"] if goes not in (tree.left[k], tree.right[k]) else []
    return boxes, arrows


def all_trees(model) -> list:
    model = getattr(model, "model_", model)
    parts = model.classifiers if isinstance(model, McRankModel) else (
        model.members if isinstance(model, BagModel) else [model])
    return [(tree, w) for part in parts for tree, w in zip(part.trees, part.tree_weights)]


@pytest.mark.parametrize("kind", [*KINDS, "lightgbm"])
def test_the_tree_labels_are_its_nodes(fitted, kind):
    ranker = fitted[kind]
    names = (["title", "body", "anchor", "url", "pagerank", "clicks"] if kind == "lightgbm"
             else [f"f{j + 1}" for j in range(6)])
    trees = all_trees(ranker)
    t = len(trees) - 1  # the last: McRank's last classifier's, a bag's last member's
    ax = plot_tree(ranker, tree=t)
    boxes, arrows = node_labels(trees[t][0], names)
    assert sorted(texts(ax)) == sorted(boxes + arrows)
    assert ax.get_title().startswith(f"tree {t}")
    if trees[t][1] != 1.0:  # DART, forests: the weight the leaves are scaled by
        assert f"weight {trees[t][1]:.6g}" in ax.get_title()
    else:
        assert "weight" not in ax.get_title()


def test_three_way_splits_draw_a_missing_arrow(fitted):
    trees = all_trees(fitted["three-way splits"])
    t = next(i for i, (tree, _) in enumerate(trees) for k in np.flatnonzero(tree.left != LEAF)
             if tree.missing[k] not in (tree.left[k], tree.right[k]))
    assert "NaN" in texts(plot_tree(fitted["three-way splits"], t))


def test_mcrank_trees_are_numbered_across_classifiers(fitted):
    model = fitted["mcrank"].model_
    first = len(model.classifiers[0].trees)
    title = plot_tree(fitted["mcrank"], first).get_title()
    assert title.startswith(f"tree {first} (y>{model.labels[1]:g}, its tree 0")


def test_tree_refusals(fitted):
    n = len(all_trees(fitted["gbrt"]))
    for bad in (n, -1, 1.5, True):
        with pytest.raises(ParameterError, match=f"tree must be a number from 0 to {n - 1}"):
            plot_tree(fitted["gbrt"], bad)
    empty = dataclasses.replace(fitted["gbrt"].model_, trees=[], tree_weights=np.zeros(0))
    with pytest.raises(ParameterError, match="the model has no tree to draw"):
        plot_tree(empty)


def test_the_digraph_has_the_same_labels(fitted):
    graphviz = pytest.importorskip("graphviz")
    graph = create_tree_digraph(fitted["lightgbm"], 1, graph_attr={"rankdir": "LR"})
    assert isinstance(graph, graphviz.Digraph)
    boxes, arrows = node_labels(all_trees(fitted["lightgbm"])[1][0],
                                ["title", "body", "anchor", "url", "pagerank", "clicks"])
    for label in boxes + arrows:
        assert f'label="{label}"' in graph.source or f"label={label}" in graph.source
    assert "rankdir=LR" in graph.source


def test_without_graphviz_or_matplotlib_the_error_names_what_to_install(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz raises ImportError
    with pytest.raises(ImportError, match="create_tree_digraph needs the graphviz package: pip install"):
        create_tree_digraph(fitted["gbrt"])
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    for plot in (plot_importance, plot_metric, plot_tree):
        with pytest.raises(ImportError, match=r"matplotlib, which the 'plot' extra brings: pip install "
                                              r"\"twinrank\[plot\]\""):
            plot(fitted["gbrt"])


def test_both_twins_have_the_plots():
    for name in ("plot_importance", "plot_metric", "plot_tree", "create_tree_digraph"):
        assert getattr(twinrank.fast.plot, name) is getattr(twinrank.reference.plot, name)

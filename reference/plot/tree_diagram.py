"""``plot_tree`` draws one tree with matplotlib; ``create_tree_digraph`` gives it as a graphviz ``Digraph``.

Both draw the same boxes and arrows (LightGBM's ``plot_tree`` and ``create_tree_digraph``): an
internal node says ``fK <= t``, the feature it splits on (``fK``: feature K of the LETOR file,
column K - 1 of ``X``, or the estimator's ``feature_names_in_``) and its threshold; its arrows say
``yes`` (``x <= t``) and ``no``, and which way a missing value goes (``NaN``: with
``missing="separate"`` a third arrow, to the child holding the missing rows). A leaf shows its
value, the tree's own: the model scores it times the tree's weight (1 for boosting, 1/T in a
forest; DART rescales), which the title gives when it is not 1.

Trees are numbered as ``dump_model`` numbers them: the model's own, in order (a prior model's
are not among them: draw ``model.init_model`` for those), McRank's classifiers and a bag's
members one after the other.
"""
from __future__ import annotations

from numbers import Integral

from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ParameterError
from twinrank.reference.plot._fitted import ensembles, feature_names, fitted_model, new_axes

__all__ = ["plot_tree", "create_tree_digraph", "tree_nodes"]


def numbered_trees(model) -> list:
    """``[(title, tree)]`` of every tree of ``model``, in ``dump_model``'s order."""
    found = []
    for name, ensemble in ensembles(model):
        for t, (tree, weight) in enumerate(zip(ensemble.trees, ensemble.tree_weights)):
            where = f"{name}, its tree {t}" if name else ""
            scaled = f"leaf values x weight {weight:.6g}" if weight != 1.0 else ""
            found.append((", ".join(filter(None, [where, scaled])), tree))
    return found


def _chosen(ranker, tree: int):
    """The tree numbered ``tree``, its title and the model's feature names."""
    model = fitted_model(ranker)
    trees = numbered_trees(model)
    if not trees:
        raise ParameterError("the model has no tree to draw: its fit grew none")
    if not isinstance(tree, Integral) or isinstance(tree, bool) or not 0 <= tree < len(trees):
        raise ParameterError(f"tree must be a number from 0 to {len(trees) - 1} (the model has {len(trees)} "
                             f"trees), got {tree!r}")
    title, chosen = trees[tree]
    return chosen, f"tree {tree}" + (f" ({title})" if title else ""), feature_names(ranker, model)


def tree_nodes(tree, names: list, precision: int = 4) -> tuple:
    """``(nodes, edges)``: ``[(node, label, is_leaf)]`` and ``[(parent, child, label)]``, root first."""
    nodes, edges = [], []
    for k in range(tree.n_nodes):
        if tree.left[k] == LEAF:
            nodes.append((k, f"leaf {tree.value[k]:.{precision}g}", True))
            continue
        nodes.append((k, f"{names[tree.feature[k]]} <= {tree.threshold[k]:.{precision}g}", False))
        arrows = {int(tree.left[k]): "yes", int(tree.right[k]): "no"}
        missing = int(tree.missing[k])
        arrows[missing] = f"{arrows[missing]}, NaN" if missing in arrows else "NaN"
        edges += [(k, child, label) for child, label in arrows.items()]
    return nodes, edges


def _positions(edges: list) -> dict:
    """``{node: (x, depth)}``: leaves at 0, 1, 2, ... left to right, a parent above its children's middle."""
    children = {}
    for parent, child, _ in edges:
        children.setdefault(parent, []).append(child)
    where, next_leaf = {}, [0]

    def place(k: int, depth: int) -> float:
        if k not in children:
            x, next_leaf[0] = next_leaf[0], next_leaf[0] + 1
        else:
            xs = [place(child, depth + 1) for child in children[k]]
            x = (xs[0] + xs[-1]) / 2
        where[k] = (x, depth)
        return x

    place(0, 0)
    return where


def plot_tree(ranker, tree: int = 0, ax=None, *, precision: int = 4):
    """Draw tree number ``tree`` of a fitted estimator (either twin) or a model on matplotlib Axes.

    ``ax``: the Axes to draw on (default: a new figure, wide enough for the leaves);
    ``precision``: significant digits of thresholds and leaf values. Returns the Axes; its
    texts are the boxes' and arrows' labels (module docstring).
    """
    chosen, title, names = _chosen(ranker, tree)
    nodes, edges = tree_nodes(chosen, names, precision)
    where = _positions(edges)
    width = max(x for x, _ in where.values()) + 1
    depth = max(d for _, d in where.values())
    ax = new_axes(ax, width=max(4.0, 1.4 * width), height=max(2.0, 1.1 * (depth + 1)))
    for parent, child, label in edges:
        (x0, y0), (x1, y1) = ((x, -d) for x, d in (where[parent], where[child]))
        ax.plot([x0, x1], [y0, y1], color="0.6", zorder=0)
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, ha="center", va="center", fontsize=8, color="0.3",
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    for k, label, is_leaf in nodes:
        x, d = where[k]
        ax.text(x, -d, label, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round", "fc": "#e8f0e0" if is_leaf else "#dde6f5", "ec": "0.5"})
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-depth - 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(title)
    return ax


def create_tree_digraph(ranker, tree: int = 0, *, precision: int = 4, **digraph):
    """Tree number ``tree`` as a ``graphviz.Digraph`` (render it with Graphviz's ``dot``).

    Needs the ``graphviz`` package, refused with an ImportError without it (``plot_tree`` draws
    the same with matplotlib alone). ``digraph``: keyword arguments of ``graphviz.Digraph``.
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError("create_tree_digraph needs the graphviz package: pip install graphviz (and "
                          "Graphviz's dot program to render it); plot_tree draws the tree with matplotlib "
                          "alone") from None
    chosen, title, names = _chosen(ranker, tree)
    nodes, edges = tree_nodes(chosen, names, precision)
    graph = graphviz.Digraph(**digraph)
    graph.attr(label=title, labelloc="t")
    for k, label, is_leaf in nodes:
        graph.node(str(k), label, shape="box" if is_leaf else "ellipse")
    for parent, child, label in edges:
        graph.edge(str(parent), str(child), label=label)
    return graph

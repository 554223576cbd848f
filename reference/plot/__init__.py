"""Plots of a fitted ranker: feature importance, the metric history, a tree.

``from twinrank.reference.plot import plot_importance, plot_metric, plot_tree`` (the same from
``twinrank.fast.plot``: a plot reads only the fitted model, so both twins draw with these
functions). Each draws on a matplotlib Axes and returns it; matplotlib is the ``plot`` extra
(``pip install "twinrank[plot]"``), imported when a plot is drawn.
"""
from twinrank.reference.plot.importance import plot_importance
from twinrank.reference.plot.metric_history import plot_metric
from twinrank.reference.plot.tree_diagram import create_tree_digraph, plot_tree

__all__ = ["plot_importance", "plot_metric", "plot_tree", "create_tree_digraph"]

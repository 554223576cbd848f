"""Plots of a fitted ranker: ``twinrank.reference.plot``'s functions, which draw models of both twins.

A plot reads only the fitted model (the shared data model), so its code lives once, in the
reference, and this package is its face in the fast twin: ``from twinrank.fast.plot import
plot_importance, plot_metric, plot_tree``.
"""
from twinrank.reference.plot import create_tree_digraph, plot_importance, plot_metric, plot_tree

__all__ = ["plot_importance", "plot_metric", "plot_tree", "create_tree_digraph"]

"""``plot_importance``: a bar per feature, its split count or total gain (LightGBM's ``plot_importance``).

The importances are :func:`~twinrank.reference.trees.explain.feature_importances` of every
ensemble the model scores with: its trees and a prior model's (IGBRT's forest, LambdaSMART's
prior), McRank's classifiers, a BL-MART bag's members; unnormalised, unweighted by tree
weights (as ``twinrank inspect`` counts them).
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.plot._fitted import ensembles, feature_names, fitted_model, new_axes
from twinrank.reference.trees.explain import feature_importances

__all__ = ["plot_importance", "importances"]

LABELS = {"split": "split count: internal nodes on the feature", "gain": "total gain of its splits"}


def importances(ranker, importance_type: str = "split"):
    """The importance of every feature (float64, shape (n_features,)) the plot draws."""
    model = fitted_model(ranker)
    return sum(feature_importances(e, importance_type, include_init_model=True) for _, e in ensembles(model))


def plot_importance(ranker, importance_type: str = "split", max_num_features: int | None = None, ax=None):
    """Horizontal bars of the features the trees split on, the most important on top.

    ``ranker``: a fitted estimator of either twin or a model; ``importance_type``: ``"split"``
    (how many internal nodes split on the feature) or ``"gain"`` (the sum of their gains);
    ``max_num_features``: draw only the largest ones; ``ax``: the matplotlib Axes to draw on
    (default: a new figure). Features the trees never split on are left out; equal importances
    are ordered by column. Bars are named by :func:`~twinrank.reference.plot._fitted.feature_names`
    (``f1``, ``f2``, ... 1-based, or the estimator's ``feature_names_in_``). Returns the Axes.
    """
    if max_num_features is not None and max_num_features < 1:
        raise ParameterError(f"max_num_features must be at least 1, got {max_num_features}")
    values = importances(ranker, importance_type)  # (n_features,); checks importance_type
    names = feature_names(ranker, fitted_model(ranker))
    used = np.flatnonzero(values)
    order = used[np.lexsort((used, -values[used]))][:max_num_features]  # largest first, then lowest column
    ax = new_axes(ax, height=max(2.5, 0.3 * len(order) + 1.2))
    ax.barh(np.arange(len(order)), values[order][::-1], align="center")  # the largest drawn on top
    ax.set_yticks(np.arange(len(order)), [names[j] for j in order[::-1]])
    for y, value in enumerate(values[order][::-1]):
        ax.text(value, y, f" {value:.6g}", va="center")
    ax.set_xlim(0, (values[order].max() if len(order) else 1.0) * 1.15)
    ax.set_title("Feature importance")
    ax.set_xlabel(f"importance ({LABELS[importance_type]})")
    ax.set_ylabel("feature")
    return ax

"""What a plot reads of a fitted ranker: its model, the ensembles it scores with, its feature names.

A plot takes a fitted estimator of either twin or a model (``Ensemble``, ``McRankModel``,
``BagModel``, as :func:`~twinrank.reference.io.model.load_model` returns it) and reads nothing
but the model: the trees, their importances and the metric history recorded while training.
matplotlib is imported when a plot is drawn, never when this package is imported.
"""
from __future__ import annotations

from twinrank.reference.errors import ParameterError
from twinrank.reference.io.model import BagModel, Ensemble, McRankModel

MODEL_KINDS = (Ensemble, McRankModel, BagModel)


def fitted_model(ranker):
    """The model of a fitted estimator (its ``model_``), or ``ranker`` itself if it is a model."""
    model = getattr(ranker, "model_", ranker)
    if isinstance(model, MODEL_KINDS):
        return model
    if hasattr(ranker, "get_params"):
        raise ParameterError(f"this {type(ranker).__name__} is not fitted yet: call fit first")
    raise ParameterError(f"a plot reads a fitted twinrank estimator or a twinrank model (Ensemble, "
                         f"McRankModel, BagModel), got {type(ranker).__name__}")


def ensembles(model) -> list:
    """``[(name, Ensemble)]``: the ensembles a model sums or combines, named as ``history_`` names them.

    An Ensemble is one, unnamed; McRank and cumulative regression have one classifier per
    threshold $c$ (``"y>c"``); a BL-MART bag has its members (``"member0"``, ...).
    """
    if isinstance(model, McRankModel):
        return [(f"y>{c:g}", e) for c, e in zip(model.labels, model.classifiers)]
    if isinstance(model, BagModel):
        return [(f"member{m}", e) for m, e in enumerate(model.members)]
    return [("", model)]


def feature_names(ranker, model) -> list:
    """One name per column of ``X``: the estimator's ``feature_names_in_`` (fitted on a DataFrame), the
    names an imported LightGBM model carries (``params["feature_names"]``), else ``f1 ... fN``.

    ``fK`` is feature K of the LETOR file, column K - 1 of ``X``: 1-based, as everywhere twinrank
    names a feature (``dump_tree``, ``twinrank inspect``, the LightGBM export).
    """
    names = getattr(ranker, "feature_names_in_", None)
    if names is None:
        names = (getattr(model, "params", None) or {}).get("feature_names")
    if names is None:
        return [f"f{j + 1}" for j in range(model.n_features)]
    if len(names) != model.n_features:
        raise ParameterError(f"{len(names)} feature names for a model of {model.n_features} features")
    return [str(name) for name in names]


def pyplot():
    """``matplotlib.pyplot``, or an ImportError that names the extra bringing it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("twinrank's plots need matplotlib, which the 'plot' extra brings: "
                          "pip install \"twinrank[plot]\" (pip install -e \".[plot]\" in a clone), "
                          "or pip install matplotlib") from None
    return plt


def new_axes(ax, width: float = 6.4, height: float = 4.8):
    """``ax``, or the axes of a new figure of ``width`` x ``height`` inches."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(width, height))
    return ax

"""``plot_metric``: a metric recorded while training, one line per data set (LightGBM's ``plot_metric``).

A fitted estimator's ``history_`` holds one list per key, one value per iteration:
``"<set>:<metric>"`` for every metric on every evaluation set (``"valid:ndcg@10"``, then
``"valid_1:ndcg@10"`` for a second ``eval_set``, or the ``eval_names`` given to ``fit``;
``"train:ndcg@10"`` with ``eval_train``), with a prefix for models made of several ensembles
(``"y>1:valid:ndcg@10"``, McRank's classifier of the threshold 1; ``"run0:valid:ndcg@10"``,
GBRT's averaged runs). As for ``evals_result_``, the text after the last colon names the metric
and the text before it the set: one line per set. Keys without a colon are not metrics
(``alpha``, DART's ``dropped``, ``branch``, ``size``, ``valid_loss``) and are not drawn.

A model (not an estimator) has the same keys in ``history``; a BL-MART bag, whose estimator's
``history_`` is empty, draws its members' histories (``"member0:valid:ndcg@10"``, ...).
"""
from __future__ import annotations

from numbers import Real

from twinrank.reference.errors import ParameterError
from twinrank.reference.plot._fitted import ensembles, fitted_model, new_axes

__all__ = ["plot_metric", "metric_curves"]


def metric_curves(ranker) -> dict:
    """``{metric: {line: values}}`` of every numeric history series whose key names a metric."""
    history = getattr(ranker, "history_", None) or _model_history(fitted_model(ranker))
    curves = {}
    for key, values in history.items():
        line, sep, metric = key.rpartition(":")
        if sep and values and all(isinstance(v, Real) for v in values):
            curves.setdefault(metric, {})[line] = [float(v) for v in values]
    return curves


def _model_history(model) -> dict:
    """The history of every ensemble of ``model``, prefixed by its name when it has several."""
    return {f"{name}:{key}" if name else key: values
            for name, ensemble in ensembles(model) for key, values in ensemble.history.items()}


def plot_metric(ranker, metric: str | None = None, ax=None):
    """The value of ``metric`` after each training iteration, one line per evaluation set.

    ``ranker``: a fitted estimator of either twin or a model; ``metric``: a metric recorded while
    training (``"ndcg@10"``; default: the first recorded); ``ax``: the matplotlib Axes to draw on
    (default: a new figure). A model trained without ``eval_set`` (and without ``eval_train``)
    recorded nothing, which is refused. Iteration $i$ is the model of the first $i$ trees, but for
    X-DART, whose iterations also prune trees. Returns the Axes.
    """
    curves = metric_curves(ranker)
    if not curves:
        raise ParameterError(f"this {type(ranker).__name__} recorded no metric while training: fit it with "
                             f"eval_set (or eval_train=True) to have a history to plot")
    if metric is None:
        metric = next(iter(curves))
    if metric not in curves:
        raise ParameterError(f"no {metric!r} in the history; recorded: {', '.join(curves)}")
    ax = new_axes(ax)
    for line, values in curves[metric].items():
        ax.plot(range(1, len(values) + 1), values, label=line or metric)
    ax.legend()
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{metric} during training")
    ax.set_xlabel("iteration")
    ax.set_ylabel(metric)
    return ax

r"""Tree weights by exact line search: coordinate refit of an ensemble, and interpolation of two models.

Both use :func:`~twinrank.reference.combination.combine.optimal_combination` (Wu, Burges, Svore &
Gao 2010, Sec. 4-5.6), the exact maximiser of NDCG or DCG along a line of scores:

* :func:`refit_weights`: coordinate ascent over the weights $w_t$ of
  $F(x) = F_0(x) + \sum_t w_t f_t(x)$. For each tree in turn, with the others fixed,
  $F - w_t f_t + \alpha f_t$ is a line in $\alpha$; its best $\alpha$ in
  ``weight_range`` replaces $w_t$ when it is better than $w_t$ (so the metric,
  with ``ties="expected"``, never decreases). ``sweeps`` passes over the trees.
* :func:`interpolate`: the best $(1-\alpha) F_A + \alpha F_B$ on validation data, as
  one model file: A's trees weighted $(1-\alpha)$, B's weighted $\alpha$.

Shared loops (floor 4): they take an :class:`~twinrank.reference.engine.Engine`; the
public functions here run on the reference, ``twinrank.fast.ensembles.reweight``'s on the fast twin.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from twinrank.reference.combination._combine_setup import check_range
from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.model import Ensemble

__all__ = ["refit_weights", "interpolate"]


def refit_weights(model: Ensemble, data: Dataset, *, sweeps=1, weight_range=(0.0, 5.0), metric="ndcg@10",
                  convention=DEFAULT_CONVENTION, ties="expected") -> Ensemble:
    """A copy of ``model`` whose tree weights were re-optimised on ``data``, tree by tree.

    ``history["refit:<metric>"]`` of the copy holds the metric (``ties``) before the
    first sweep and after each sweep; it never decreases. The prior model
    (``init_model``) and the base score stay fixed. Memory: every tree's scores of
    ``data``, twice, ``(n_trees, n_rows)`` float64: the scores of the other trees are
    summed in one fixed order, so documents that share their other leaves tie exactly
    and rounding cannot invent crossings near zero.
    """
    return run_refit(REFERENCE, model, data, sweeps=sweeps, weight_range=weight_range, metric=metric,
                     convention=convention, ties=ties)


def interpolate(model_a: Ensemble, model_b: Ensemble, valid: Dataset, *, alpha_range=(0.0, 1.0),
                metric="ndcg@10", convention=DEFAULT_CONVENTION, ties="expected") -> Ensemble:
    r"""One model scoring $(1-\alpha) F_A + \alpha F_B$, $\alpha$ the exact best on ``valid``.

    Both models' prior models are unrolled into their trees; their missing-value
    strategies must be equal (the combined model applies one). ``history["alpha"]``
    holds $\alpha$ and ``history["valid:<metric>"]`` its value.
    """
    return run_interpolate(REFERENCE, model_a, model_b, valid, alpha_range=alpha_range, metric=metric,
                           convention=convention, ties=ties)


def run_refit(engine: Engine, model, data, *, sweeps, weight_range, metric, convention, ties) -> Ensemble:
    """:func:`refit_weights` on the kernels of ``engine``."""
    if isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer)) or sweeps < 1:
        raise ParameterError(f"sweeps must be an integer >= 1, got {sweeps!r}")
    lo, hi = check_range(weight_range)
    weights = model.tree_weights.copy()  # (n_trees,)
    tree_scores = np.array([engine.predict_ensemble(_alone(model, tree), data.X) for tree in model.trees])
    fixed = engine.predict_ensemble(dataclasses.replace(model, trees=[], tree_weights=np.zeros(0)), data.X)
    search = dict(form="boosting", alpha_range=(lo, hi), metric=metric, convention=convention, ties=ties)
    value = _value(engine, fixed + weights @ tree_scores, data, search)
    trace = [value]
    for _ in range(sweeps):
        after = _later_trees(weights, tree_scores)  # (n_trees, n_rows) sum of w_u f_u over u > t
        before = fixed.copy()  # (n_rows,) F_0 plus the trees before t
        for t in range(len(model.trees)):
            rest = before + after[t]  # rows sharing all other leaves get bitwise equal scores
            best = engine.optimal_combination(rest, tree_scores[t], data.y, data.query_offsets, **search)
            if best.value > value:  # strictly better: ties keep the old weight
                weights[t], value = best.alpha, best.value
            before = before + weights[t] * tree_scores[t]
        trace.append(value)
    return dataclasses.replace(model, tree_weights=weights, history={**model.history, f"refit:{metric}": trace})


def _later_trees(weights, tree_scores) -> np.ndarray:
    """Row t: the weighted scores of the trees after t, summed in one fixed order (n_trees, n_rows)."""
    after = np.zeros_like(tree_scores)
    for t in range(len(weights) - 2, -1, -1):
        after[t] = after[t + 1] + weights[t + 1] * tree_scores[t + 1]
    return after


def run_interpolate(engine: Engine, model_a, model_b, valid, *, alpha_range, metric, convention,
                    ties) -> Ensemble:
    """:func:`interpolate` on the kernels of ``engine``."""
    if model_a.n_features != model_b.n_features:
        raise ParameterError(f"the models read {model_a.n_features} and {model_b.n_features} features")
    trees_a, weights_a, base_a = _unrolled(model_a, model_a.missing)
    trees_b, weights_b, base_b = _unrolled(model_b, model_a.missing)
    a, b = engine.predict_ensemble(model_a, valid.X), engine.predict_ensemble(model_b, valid.X)
    best = engine.optimal_combination(a, b, valid.y, valid.query_offsets, form="convex", alpha_range=alpha_range,
                                      metric=metric, convention=convention, ties=ties)
    alpha = best.alpha
    return Ensemble(trees=trees_a + trees_b,
                    tree_weights=np.r_[(1.0 - alpha) * weights_a, alpha * weights_b],
                    base_score=(1.0 - alpha) * base_a + alpha * base_b, n_features=model_a.n_features,
                    algorithm="interpolation", params={"metric": metric, "ties": ties, "form": "convex"},
                    history={"alpha": [alpha], f"valid:{metric}": [best.value]}, missing=model_a.missing)


def _value(engine, scores, data, search) -> float:
    """The metric of ``scores`` as the line search counts it (a one-point path at alpha = 0 of a zero line)."""
    lo = search["alpha_range"][0]
    flat = dict(search, alpha_range=(lo, lo + 1.0))
    return engine.optimal_combination(scores, np.zeros_like(scores), data.y, data.query_offsets, **flat).value


def _alone(model: Ensemble, tree) -> Ensemble:
    """One tree of ``model`` as a model of weight 1 (the model's missing-value strategy applies)."""
    return Ensemble(trees=[tree], tree_weights=np.ones(1), n_features=model.n_features, missing=model.missing)


def _unrolled(model: Ensemble, missing):
    """(trees, weights, base score) of ``model`` with its prior models unrolled."""
    if model.missing != missing:
        raise ParameterError("interpolate: the models fill missing values differently; one model file "
                             "applies one missing-value strategy")
    trees, weights, base = list(model.trees), model.tree_weights, float(model.base_score)
    if model.init_model is not None:
        prior_trees, prior_weights, prior_base = _unrolled(model.init_model, missing)
        trees, weights, base = prior_trees + trees, np.r_[prior_weights, weights], base + prior_base
    return trees, np.asarray(weights, dtype=np.float64), base

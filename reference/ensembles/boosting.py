r"""The one boosting loop: GBRT, stochastic GBRT and LambdaMART differ only in their gradients.

Gradient boosting (Friedman 2001, Alg. 1; Newton steps as in Burges 2010, Alg. 1 of
LambdaMART) builds $F_M(x) = F_0(x) + \eta \sum_{m=1}^{M} f_m(x)$ where each
tree $f_m$ is fit to the gradients $g_i = \partial L / \partial F(x_i)$
and hessians $h_i$ of the loss at the current scores, with leaf values
$v = -\sum g / \sum h$ (the :mod:`tree` grower's Newton step).

Each round draws, from the run's one generator and in this order:

1. the training units of the round (``sampling.subsample`` of queries or rows;
   nothing drawn when ``subsample == 1``);
2. the feature subsets of the tree's nodes (``sampling.feature_masks``, one per node the
   round's rows can fill: ``TreeParams.nodes_for``; nothing drawn when ``feature_fraction == 1``);
3. with ``quantized_gradients``, the key of the round's stochastic rounding
   (``_quantize.round_key``: one 64-bit draw; the rows' uniforms are computed from
   it, ``_quantize.uniforms``); nothing drawn when off.

So the same seed gives the same model in both twins, on any number of threads.

A ranking loss (LambdaRank) sees the scores on a grid of $2^{-24}$ (``objectives.on_grid``):
documents tied in real arithmetic stay tied although their scores' last bits differ,
and differ between twins (leaf values are sums taken in other orders). Without the
grid, such a tie is broken by the last bit, differently in each twin, and the lambdas
and every later tree diverge (found by hypothesis on a one-feature set whose leaves
all had the value -1 or 1). On the grid it is broken by input order, in both twins.
The loop itself is shared: :func:`run_boosting` takes an
:class:`~twinrank.reference.engine.Engine`, the kernels of one twin (binning, tree
grower, prediction, metrics), and a loss object (:class:`objectives.Loss`) that
writes the round's gradients into the loop's two arrays.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ParameterError, TwinrankWarning
from twinrank.reference.io.data import Dataset, named_sets, query_rows
from twinrank.reference.io.model import Ensemble
from twinrank.reference.losses.objectives import TIE_GRID, Loss, on_grid
from twinrank.reference.params import BoostParams
from twinrank.reference.sampling import feature_masks, make_rng, subsample

__all__ = ["boost", "run_boosting", "StoppingRule", "Objective", "grow_round", "on_grid", "TIE_GRID"]


class Objective(Loss):
    """A loss from a callable ``objective(scores, queries) -> (gradients, hessians)``."""

    def __init__(self, objective):
        self.objective = objective

    def gradients(self, scores, queries, g, h) -> None:
        g[:], h[:] = self.objective(scores, queries)


def boost(train: Dataset, objective, params: BoostParams, *, valid: Dataset | None = None,
          init_model: Ensemble | None = None, init_scores=None, valid_init_scores=None,
          algorithm: str = "gbrt", model_params: dict | None = None, base_score: float = 0.0,
          callback=None, costs=None) -> Ensemble:
    r"""Boost ``params.n_trees`` trees on ``train`` and return the :class:`Ensemble`.

    Parameters
    ----------
    train : Dataset
    objective : a loss object (:class:`~twinrank.reference.losses.objectives.Loss`), or a callable
        ``(scores, queries) -> (gradients, hessians)``, float64 arrays over all training
        rows; ``queries`` is the round's query sample or ``None``.
    params : BoostParams
    valid : Dataset, or a list of ``(name, Dataset)`` pairs, optional; every metric of
        ``params.metrics`` is recorded on each after every tree (history key
        ``"<name>:<metric>"``; a lone Dataset is named ``"valid"``), and the first metric on the
        first set drives early stopping / the overfitting tolerance / the optimal step.
    init_model : Ensemble, optional; the prior model $F_0$ (LambdaSMART), kept in the result.
    init_scores, valid_init_scores : array, optional; raw initial scores added to
        $F_0$ for this fit only (not part of the saved model, as in LightGBM).
    algorithm, model_params : stored on the model.
    base_score : float, the constant $F_0$ (0 for LambdaMART, the mean label for GBRT).
    callback : callable ``(iteration, record)`` called after every tree, ``record`` a
        dict of metric values: ``"train:ndcg@10"`` with ``params.eval_train``, then
        ``"valid:ndcg@10"`` for each set and metric; empty with neither. The model's
        ``history`` holds the same keys, one value per tree. When it returns True the loop
        stops and the model keeps the trees grown so far (with a stopping rule, as it says).
    costs : CostLedger, optional (:mod:`~twinrank.reference._feature_costs`); each tree is
        grown with the split penalty ``params.tree.cost_lambda * costs.current`` (Mohan 2010,
        Eq. 6.1) and then paid for: with free-after-use, the features it split on cost 0
        from the next tree on. None: no costs.
    """
    return run_boosting(REFERENCE, train, objective, params, valid=valid, init_model=init_model,
                        init_scores=init_scores, valid_init_scores=valid_init_scores,
                        algorithm=algorithm, model_params=model_params, base_score=base_score,
                        callback=callback, costs=costs)


def run_boosting(engine: Engine, train, loss, params, *, valid=None, init_model=None,
                 init_scores=None, valid_init_scores=None, algorithm="gbrt", model_params=None,
                 base_score=0.0, callback=None, costs=None) -> Ensemble:
    r"""The loop of :func:`boost`, on the kernels of ``engine``: gradient boosting of regression
    trees with Newton leaves, the loop of Friedman (2001, Alg. 1) and of LambdaMART (Burges 2010,
    Alg. 1; Wu, Burges, Svore & Gao 2010, Alg. 1), each variant a named step beside it::

        F_0 = base_score (+ a prior model: LambdaSMART)            _Run
        for m = 1 .. M:
            g, h = the loss's gradients at F_{m-1}                  grow_round (with the round's
            f_m = a regression tree fit to (g, h),                  sample, node feature subsets,
                  leaf values -sum g / sum h                        quantized gradients)
            pay for the features f_m splits on                      costs.pay (Mohan 2010, Ch. 6)
            f_m <- eta_m f_m                                        shrink (params.tree_rate)
            F_m = F_{m-1} + alpha_m f_m                             _Run.add (alpha_m = 1, or
                                                                    optimal_step)

    ``step="oc"`` (Wu et al. 2010, Sec. 5.6) fits f_m by least squares (``least_squares_fit``: every
    hessian 1, leaves the mean gradient step), does not shrink it, and weights it by ``optimal_step``.
            stop early?                                             _Run.record (StoppingRule)
    """
    run = _Run(engine, train, loss, params, named_sets(valid), init_model, init_scores, valid_init_scores,
               base_score)
    for m in range(1, params.n_trees + 1):
        f, rows = grow_round(engine, run.rng, train, run.binned, run.thresholds, run.loss, run.scores, params,
                             run.k, run.g, run.h, costs=costs, leaf_of_row=run.leaves)
        if f.n_nodes == 1:  # no split improves the loss: every further round would add a constant
            if not run.trees:
                warn_no_tree(train, run.thresholds, run.g, rows, params.tree, init_model)
            break
        if costs is not None:
            costs.pay([f])
        f = shrink(f, params.tree_rate(m))
        run.add(f, rows)
        if run.record(m, callback):
            break
    return run.ensemble(algorithm, model_params, base_score, init_model)


def shrink(tree, rate: float):
    r"""The tree with its leaf values times the round's learning rate $\eta_m$ (shrinkage, Friedman 2001)."""
    return dataclasses.replace(tree, value=tree.value * rate)


class Held:
    """One validation set of a run: its name, its data, its rows binned and their scores $F_{m-1}$."""

    def __init__(self, engine, name: str, data: Dataset, thresholds, scores):
        self.name, self.data, self.scores = name, data, scores
        self.binned = engine.apply_bins(data.X, thresholds)


class _Run:
    """The state of one boosting run: the binned training and validation data, the scores
    $F_{m-1}$ on each, the round's gradient arrays, the trees so far and their history.

    ``held`` lists the validation sets (:class:`Held`); the first is the one the stopping rule
    and the optimal step read (``self.valid``, None without validation data)."""

    def __init__(self, engine, train, loss, params, sets, init_model, init_scores, valid_init_scores,
                 base_score):
        self.engine, self.train, self.params = engine, train, params
        self.loss = loss if isinstance(loss, Loss) else Objective(loss)
        if train.weight is not None and self.loss.weight is None and not isinstance(self.loss, Objective):
            raise ParameterError("the training rows are weighted (Dataset.weight) but the loss is not: make it "
                                 "with weight=train.weight (a callable objective weighs its own gradients)")
        self.rng = make_rng(params.seed)
        self.thresholds = engine.bin_thresholds(train.X, params.max_bins, params.subsample_for_bin, params.seed)
        self.binned = engine.apply_bins(train.X, self.thresholds)
        self.scores = initial_scores(engine, train, init_model, init_scores, base_score)  # (n_rows,) F_0
        self.held = [Held(engine, name, data, self.thresholds,
                          initial_scores(engine, data, init_model, valid_init_scores if i == 0 else None, base_score))
                     for i, (name, data) in enumerate(sets)]
        self.valid = self.held[0] if self.held else None
        self.k = params.tree.n_features_per_node(train.n_features)
        self.rule = StoppingRule(params) if self.held else None
        if self.rule is not None:
            self.rule.start(metric_value(engine, params, self.valid.data, self.valid.scores))
        self.g, self.h = np.empty(train.n_rows), np.empty(train.n_rows)  # (n_rows,) float64, each round's
        self.leaves = np.empty(train.n_rows, dtype=np.int32)  # (n_rows,) each row's leaf in a round of all rows
        self.trees, self.weights, self.history = [], [], {}

    def add(self, f, rows) -> None:
        r"""$F_m = F_{m-1} + \alpha_m f_m$ on the training and validation rows; $\alpha_m = 1$, or with
        ``step`` "optimal" or "oc" the exact best step on the validation or training data (:func:`optimal_step`).

        A round of all rows adds ``value[leaf]`` of each row's leaf (the grower's partition); a
        round of sampled rows walks the tree on the bins of every row.
        """
        engine, params = self.engine, self.params
        train_step = None  # (n_rows,) the tree on the training rows, where a walk or the line search needs it
        if rows is not None:
            train_step = engine.predict_tree_binned(f, self.binned)
        elif params.searches_step and params.step_on == "train":
            train_step = f.value[self.leaves]
        held_steps = [engine.predict_tree_binned(f, held.binned) for held in self.held]  # (n_rows,) each
        weight = 1.0
        if params.searches_step:
            on = ((self.valid.data, self.valid.scores, held_steps[0]) if params.step_on == "valid"
                  else (self.train, self.scores, train_step))
            weight = optimal_step(engine, params, *on)
            self.history.setdefault("alpha", []).append(weight)
        self.trees.append(f)
        self.weights.append(weight)
        if train_step is None:  # the loop's own array, in place
            engine.add_leaf_values(self.scores, f.value, self.leaves, weight)
        else:
            self.scores += weight * train_step if weight != 1.0 else train_step
        for held, step in zip(self.held, held_steps):
            held.scores += weight * step if weight != 1.0 else step

    def record(self, m: int, callback) -> bool:
        """The metrics after tree ``m`` into the history and the ``callback``; True when the stopping
        rule (early stopping, or BL-MART's overfitting tolerance) or the callback says stop."""
        params, record = self.params, {}
        if params.eval_train:
            record.update(metric_record(self.engine, params, "train", self.train, self.scores))
        for held in self.held:
            record.update(metric_record(self.engine, params, held.name, held.data, held.scores))
        stop = self.rule is not None and self.rule.update(m, record[f"{self.valid.name}:{params.stopping_metric}"])
        for key, value in record.items():
            self.history.setdefault(key, []).append(value)
        return bool(callback is not None and callback(m, record)) or stop

    def ensemble(self, algorithm, model_params, base_score, init_model) -> Ensemble:
        """The model: the trees up to the best validation value (with a stopping rule), or all."""
        n_keep = len(self.trees) if self.rule is None else self.rule.n_trees_to_keep(len(self.trees))
        return Ensemble(
            trees=self.trees[:n_keep], tree_weights=np.array(self.weights[:n_keep], dtype=np.float64),
            base_score=base_score, n_features=self.train.n_features, init_model=init_model, algorithm=algorithm,
            params=dict(model_params or {}), history=self.history,
            best_iteration=None if self.rule is None else self.rule.best_n_trees,
        )


def grow_round(engine, rng, train: Dataset, binned, thresholds, loss: Loss, scores, params: BoostParams, k: int,
               g, h, *, costs=None, leaf_of_row=None):
    """One round's tree at ``scores``, Newton leaf values not yet shrunk, and the round's rows (None: all).

    Draws, in order: the round's sample, the node feature subsets, then (with
    ``quantized_gradients``) the stochastic rounding of gradients and hessians. Writes the
    round's gradients and hessians into ``g`` and ``h`` (``(n_rows,)`` float64), and, when
    the round has all rows, each row's leaf into ``leaf_of_row`` (int32 ``(n_rows,)``, if
    given): the tree's step on the training rows is then ``value[leaf_of_row]``, no walk.
    """
    queries, rows = _round_sample(rng, train, params)
    loss.gradients(scores, queries, g, h)  # LambdaRank ranks them on the tie grid (objectives.on_grid)
    if params.step == "oc":
        least_squares_fit(h)
    n_nodes = params.tree.nodes_for(train.n_rows if rows is None else len(rows))  # the nodes its rows can fill
    masks = feature_masks(rng, n_nodes, train.n_features, k)  # (n_nodes, n_features)
    quantized = ({"quantized": engine.quantize_gradients(rng, g, h, params.gradient_bits, rows)}
                 if params.quantized_gradients else {})
    f = engine.grow_tree(binned, g, h, thresholds, params.tree, rows=rows, feature_mask=masks,
                         feature_cost=None if costs is None else costs.current,
                         leaf_of_row=leaf_of_row if rows is None else None, **quantized)
    return f, rows


def least_squares_fit(h) -> None:
    r"""``step="oc"``'s tree: every hessian 1, so the tree is the least-squares regression tree of the
    gradients (splits $S_L^2/n_L + S_R^2/n_R - S^2/n$, leaves $-S/n$), the tree Wu et al. (2010,
    Sec. 5.6) weight by the optimal combination instead of Newton's per-leaf values."""
    h[:] = 1.0


def warn_no_tree(train: Dataset, thresholds, g, rows, tree, init_model) -> None:
    """The warning of a fit whose first round grew no split."""
    alone = "its prior model" if init_model is not None else "its constant starting score"
    warnings.warn(f"boosting grew no tree: {why_no_split(train, thresholds, g, rows, tree)}; "
                  f"the model is {alone} alone", TwinrankWarning, stacklevel=3)


def why_no_split(train: Dataset, thresholds: list, g: np.ndarray, rows, tree) -> str:
    """Why the first tree of a fit has no split, in the user's words."""
    if all(len(t) == 0 for t in thresholds):
        return "every feature is constant on the training rows, so no split can separate them"
    if not np.any(np.diff(g if rows is None else g[rows])):
        return ("every gradient is the same: the labels give the loss nothing to improve (every label equal, "
                "or, for LambdaRank, no query holding two documents of different labels)")
    n_rows = train.n_rows if rows is None else len(rows)
    return (f"no split of the {n_rows} training rows satisfies min_samples_leaf={tree.min_samples_leaf!r} "
            f"and min_gain_to_split={tree.min_gain_to_split!r}")


def optimal_step(engine, params: BoostParams, data: Dataset, scores, tree_scores) -> float:
    r"""The weight $\alpha$ in ``params.step_range`` of a new tree maximising ``params.metric`` exactly.

    The boosting form of the line search, $s + \alpha f(x)$, with expected-NDCG ties
    (a tree gives all rows of a leaf one score). Wu, Burges, Svore & Gao (2010), Sec. 5.6.
    """
    return float(engine.optimal_combination(scores, tree_scores, data.y, data.query_offsets, form="boosting",
                                            alpha_range=params.step_range, metric=params.stopping_metric,
                                            convention=params.convention, ties="expected").alpha)


def initial_scores(engine, data: Dataset, init_model, init_scores, base_score) -> np.ndarray:
    scores = np.full(data.n_rows, base_score, dtype=np.float64)
    if init_model is not None:
        scores += engine.predict_ensemble(init_model, data.X)
    if init_scores is not None:
        scores += _checked_init_scores(init_scores, data.n_rows)
    return scores


def _checked_init_scores(init_scores, n_rows: int) -> np.ndarray:
    s = np.asarray(init_scores, dtype=np.float64)
    if s.shape != (n_rows,) or not np.isfinite(s).all():
        raise ParameterError(f"initial scores must be {n_rows} finite numbers, got shape {s.shape}")
    return s


def _round_sample(rng, train: Dataset, params: BoostParams):
    """The round's query sample (or None) and training rows (or None = all rows)."""
    sample = params.round_sample()
    if sample is None:
        return None, None
    unit, fraction = sample
    if unit == "rows":
        return None, subsample(rng, train.n_rows, fraction)
    queries = subsample(rng, train.n_queries, fraction)
    return queries, query_rows(train.query_offsets, queries)


def metric_value(engine, params: BoostParams, data: Dataset, scores: np.ndarray) -> float:
    """The stopping metric (the first of ``params.metrics``) of ``scores`` on ``data``."""
    metric = params.stopping_metric
    return float(engine.evaluate([metric], data.y, scores, data.query_offsets, convention=params.convention)[metric])


def metric_record(engine, params, name: str, data: Dataset, scores: np.ndarray) -> dict:
    """``{"<name>:<metric>": value}`` of every metric of ``params.metrics`` (in their order) on ``data``."""
    values = engine.evaluate(list(params.metrics), data.y, scores, data.query_offsets, convention=params.convention)
    return {f"{name}:{metric}": float(values[metric]) for metric in params.metrics}


class StoppingRule:
    """Early stopping with patience, or BL-MART's overfitting tolerance, on a validation metric.

    Higher is better for every metric but ``rmse``. ``best_n_trees`` is the number of
    trees of the best validation value (0 = the initial model). It reads the first metric of
    ``params.metrics`` on the first validation set only (LightGBM's ``first_metric_only=True``
    on its first set; see docs/python_api.md).
    """

    def __init__(self, params: BoostParams):
        self.patience = params.early_stopping_rounds
        self.tolerance = params.overfit_tolerance
        self.extra_trees = params.overfit_extra_trees
        self.sign = -1.0 if params.stopping_metric.startswith("rmse") else 1.0

    def start(self, value: float) -> None:
        """Record the validation value of the initial model (0 trees)."""
        self.best, self.best_n_trees, self.last_within = self.sign * value, 0, 0

    def update(self, n_trees: int, value: float) -> bool:
        """Record the value after ``n_trees`` trees; True when training should stop."""
        value = self.sign * value
        if value > self.best:
            self.best, self.best_n_trees, self.last_within = value, n_trees, n_trees
            return False
        if self.tolerance is not None:
            if value < self.best - self.tolerance * abs(self.best):
                return True
            self.last_within = n_trees
            return n_trees - self.best_n_trees >= self.extra_trees
        return self.patience is not None and n_trees - self.best_n_trees >= self.patience

    def n_trees_to_keep(self, n_trees: int) -> int:
        """How many of the ``n_trees`` grown trees the final model keeps."""
        if self.tolerance is not None:
            return self.last_within
        if self.patience is not None:
            return self.best_n_trees
        return n_trees

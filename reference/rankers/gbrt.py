r"""Gradient boosted regression trees for pointwise ranking (Friedman 2001, 2002; Mohan 2010).

GBRT fits the relevance labels by least squares, $L = \tfrac12 \sum_i (F(x_i) - y_i)^2$
(:func:`objectives.squared_error`: $g_i = F(x_i) - y_i$, $h_i = 1$), and ranks
the documents of a query by $F$. Friedman's Algorithm 2 (LS_Boost):

$$F_0 = \arg\min_c \sum_i (y_i - c)^2 = \bar y, \qquad
F_m(x) = F_{m-1}(x) + \eta \sum_l \gamma_{lm} \mathbb 1[x \in R_{lm}],$$

where tree $m$ is grown on the residuals $r_i = y_i - F_{m-1}(x_i) = -g_i$
and each leaf value $\gamma_{lm} = -\sum g / \sum h$ is the mean residual of
its rows. The variants studied in Mohan's thesis (2010) are parameters:

* **stochastic GBRT** (Friedman 2002): each tree sees a fraction ``subsample`` of
  the rows, or of whole queries, drawn without replacement;
* **k-stochastic GBRT**: each node considers k random features
  (``feature_fraction``);
* **averaged k-stochastic GBRT**: the average of ``average_runs`` runs seeded
  ``seed, seed + 1, ...``, kept as one model whose trees are all the runs' trees,
  each weighted $1/b$:

  $$F(x) = \frac1b \sum_{i=0}^{b-1} F^{(i)}(x).$$

Random draws, from ``make_rng(seed + i)`` for run ``i``, per round: the round's rows
or queries, then the node feature subsets (:mod:`boosting`).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from twinrank.reference.ensembles.boosting import run_boosting
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import (
    AveragingParams,
    BoostParams,
    CostParams,
    FitParams,
    TreeParams,
    from_names,
)
from twinrank.reference.rankers._estimator import BoostedRanker

__all__ = ["GBRT", "averaged", "counting_from"]


class GBRT(BoostedRanker):
    r"""Gradient boosted regression trees on the squared error (stochastic, k-stochastic, averaged).

    Parameters
    ----------
    n_trees, learning_rate : boosting rounds $M$ and shrinkage $\eta$.
    max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2, min_gain_to_split,
    cost_lambda :
        tree shape (see :class:`~twinrank.reference.params.TreeParams`): leaf-limited
        trees by ``max_leaves``, depth-limited trees by ``max_depth`` (with ``max_leaves``
        at least $2^{\text{depth}}$).
    feature_costs, free_after_use : the cost of each feature (an array, or a file of
        ``feature cost`` lines) and whether a feature is free once some earlier tree split on
        it (:class:`~twinrank.reference.params.CostParams`); with ``cost_lambda > 0`` splits
        score $\mathrm{gain} - \lambda_c\,c(f)$ (Mohan 2010, Eq. 6.1). Stored in the model file.
        The runs of ``average_runs`` pay in turn: a feature run 0 used is free for run 1.
    subsample : fraction of the training units each tree sees, without replacement
        (stochastic GBRT, Friedman 2002); 1 uses every row.
    subsample_by : ``"rows"`` (Friedman) or ``"queries"`` (whole queries).
    feature_fraction : fraction of features drawn at each node (k-stochastic GBRT).
    average_runs : number $b$ of independently seeded runs averaged into the model
        (averaged k-stochastic GBRT); run ``i`` uses seed ``seed + i``.
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    subsample_for_bin : the most training rows the bin thresholds are read from (more rows: a sample
        drawn from ``seed``; None: every row). LightGBM's ``subsample_for_bin``, also 200,000.
    metric, convention : validation metric and its convention (history, early stopping).
    eval_train : record ``metric`` on the training set after every tree (``history_`` key
        ``"train:<metric>"``, also in the callback record); it costs one metric evaluation
        of the training set per tree, so it is off by default.
    quantized_gradients, gradient_bits : quantized training (Shi et al. 2022; LightGBM's
        ``use_quantized_grad``): each round's gradients and hessians rounded stochastically to
        ``gradient_bits`` bits (drawn from ``seed``), splits chosen on integer histograms, leaf
        values refit from the true gradients; both twins grow the same trees
        (:class:`~twinrank.reference.params.BoostParams`).
    early_stopping_rounds : patience on the first ``eval_set`` (each run stops on its own).
    overfit_tolerance, overfit_extra_trees : BL-MART's overfitting tolerance instead.
    init_model : prior model (path, Ensemble or fitted estimator); the boosting starts
        from its scores instead of the mean label, and it is kept in the model.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``) and stored in the model.
    seed : seed of run 0's random draws.
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    low_memory : the fast twin keeps its bins in one layout (no row-order copy: one byte a row and
        feature less), the same model at more time per tree; the reference ignores it.
    verbose : print one line per ``verbose`` trees to stderr (0: silent).

    Attributes
    ----------
    model_ : Ensemble, with ``base_score`` $F_0 = \bar y$ (0 with an ``init_model``).
        With ``average_runs > 1`` its history keys are prefixed ``"run{i}:"`` and
        ``best_iteration`` is None (each run has its own).
    """

    param_objects = (TreeParams, BoostParams, AveragingParams, CostParams, FitParams)
    model_algorithm = "gbrt"  # the ``algorithm`` of its model files (``load`` refuses others)

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
                 max_leaves=TreeParams.max_leaves, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, cost_lambda=TreeParams.cost_lambda,
                 feature_costs=CostParams.feature_costs, free_after_use=CostParams.free_after_use,
                 subsample=BoostParams.subsample, subsample_by="rows",
                 feature_fraction=TreeParams.feature_fraction,
                 average_runs=AveragingParams.average_runs, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 metric=BoostParams.metric, convention=BoostParams.convention,
                 eval_train=BoostParams.eval_train,
                 quantized_gradients=BoostParams.quantized_gradients,
                 gradient_bits=BoostParams.gradient_bits,
                 early_stopping_rounds=BoostParams.early_stopping_rounds,
                 overfit_tolerance=BoostParams.overfit_tolerance,
                 overfit_extra_trees=BoostParams.overfit_extra_trees, init_model=FitParams.init_model,
                 missing=FitParams.missing, seed=BoostParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory,
                 verbose=FitParams.verbose):
        self._set_init_params(locals())

    def boost_params(self) -> BoostParams:
        """The validated :class:`BoostParams` of run 0."""
        return from_names(BoostParams, self.get_params(), tree=self.tree_params())

    def validated_params(self) -> SimpleNamespace:
        values = self.get_params()
        return SimpleNamespace(fit=from_names(FitParams, values), boost=self.boost_params(),
                               averaging=from_names(AveragingParams, values))

    def planned_trees(self) -> int:
        """The most trees ``fit`` grows (the progress display's total)."""
        return self.n_trees * self.average_runs

    def fit_model(self, params, train, valid, *, init_score, callback):
        """``average_runs`` runs of least-squares boosting, from the mean label or ``init_model``."""
        return self._boost_runs(train, valid, params.boost, params.prior, "gbrt", callback,
                                params.averaging.average_runs, init_score)

    def _boost_runs(self, train, valid, params, init_model, algorithm, callback, n_runs,
                    init_score=None):
        """``n_runs`` boosting runs of the squared error, averaged into one Ensemble.

        A ``callback`` that returns True ends the run it stopped, and no later run starts: the
        model averages the runs so far."""
        loss, runs, done = self.engine.squared_error(train.y, weight=train.weight), [], 0
        costs = self.cost_ledger(params.tree.cost_lambda, init_model)  # shared by the runs
        base_score = loss.baseline() if init_model is None else 0.0
        for i in range(n_runs):
            run_params = dataclasses.replace(params, seed=params.seed + i)
            run = Watch(counting_from(done, callback))  # run i's iterations, early stopping's dropped trees too
            runs.append(run_boosting(
                self.engine, train, loss, run_params, valid=valid, init_model=init_model,
                init_scores=init_score, algorithm=algorithm, model_params=self._model_params(),
                base_score=base_score, callback=run, costs=costs))
            done += len(run.iterations)
            if run.stopped:
                break
        return averaged(runs)


def averaged(runs: list) -> Ensemble:
    r"""One Ensemble scoring the mean of ``runs`` (same base score and prior model).

    Its trees are every run's trees in run order, each weighted $w / b$. One
    run is returned as it is.
    """
    if len(runs) == 1:
        return runs[0]
    b, first = len(runs), runs[0]
    history = {f"run{i}:{key}": values for i, run in enumerate(runs)
               for key, values in run.history.items()}
    return Ensemble(trees=[t for run in runs for t in run.trees],
                    tree_weights=np.concatenate([run.tree_weights / b for run in runs]),
                    base_score=first.base_score, n_features=first.n_features,
                    init_model=first.init_model, algorithm=first.algorithm, params=first.params,
                    history=history, best_iteration=None)


def counting_from(offset: int, callback):
    """``callback`` with ``offset`` added to every iteration (trees grown by earlier phases)."""
    if callback is None:
        return None
    return lambda iteration, record: callback(offset + iteration, record)


class Watch:
    """A loop's callback that notes what the loop reports: every ``iterations`` it ran, and
    whether ``callback`` (None: none) returned True, asking to stop (``stopped``): how a fit
    of several loops (averaged runs, IGBRT's forest then boosting, McRank's classifiers)
    knows to start no further loop."""

    def __init__(self, callback):
        self.callback, self.iterations, self.stopped = callback, [], False

    def __call__(self, iteration, record) -> bool:
        self.iterations.append(iteration)
        if self.callback is not None and self.callback(iteration, record):
            self.stopped = True
        return self.stopped

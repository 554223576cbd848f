r"""Random forests for ranking (Breiman 2001; Ibrahim 2021) and IGBRT (Mohan et al. 2011).

**Random forest.** $T$ regression trees, each grown

1. on its own sample of the training set: a bootstrap sample of the rows
   ($n$ draws with replacement; a row drawn twice counts twice), or the
   rows of a random fraction ``query_subsample`` of the queries drawn without
   replacement (Ibrahim's sub-sample size $p$), or a bootstrap of those rows;
2. with k random features considered at each node (``feature_fraction``);
3. unpruned: a node is split until it is pure, holds fewer than
   ``2 * min_samples_leaf`` rows, or the tree has ``max_leaves`` leaves;

and the forest scores their mean, $F(x) = \frac1T \sum_t f_t(x)$ (tree weights
$1/T$, base score 0). A forest tree is the engine's Newton tree
(:func:`tree.grow_tree`) on $g_i = -y_i$, $h_i = 1$ (no L2 penalty): a
node of $n$ rows has $G = -\sum y_i = -n \bar y$, $H = n$, so

$$v = -\frac{G}{H} = \bar y, \qquad
\mathrm{gain} = \frac{G_L^2}{H_L} + \frac{G_R^2}{H_R} - \frac{G^2}{H}
= n_L \bar y_L^2 + n_R \bar y_R^2 - n \bar y^2,$$

the leaf value is the mean label of its rows and the gain is CART's decrease of
the squared error $\sum (y_i - \bar y)^2$ (Breiman et al. 1984): each tree is
a CART regression tree on binned features.

**IGBRT** (Mohan, Chen & Weinberger 2011): gradient boosting of the squared error
(:mod:`gbrt`) started from a random forest's scores instead of the mean label,

$$F(x) = \mathrm{RF}(x) + \eta \sum_{m=1}^{M} f_m(x),$$

the boosted trees fitting the residuals $y_i - \mathrm{RF}(x_i)$. The forest is
the model's ``init_model``, saved inside it.

**Random draws**, from ``make_rng(seed)``, per tree in tree order: the query
subsample (if ``query_subsample < 1``), then the bootstrap (if ``bootstrap``), then
the node feature subsets (if k < d). A batch of ``cost_batch_size`` trees (default
``TREES_PER_BATCH`` = 16) is drawn before it is grown (the fast twin may grow a batch's trees at once), so the same
seed gives the same forest in both twins, on any number of threads. IGBRT grows
its forest with ``seed`` and boosts with ``seed + 1``.

**Modules.** This module holds the estimators; the loop half (``grow_forest``,
``run_forest``, ``tree_sample``), a shared loop of the floor below, is written in
``_forest_loop`` and importable from here.
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from twinrank.reference.ensembles._forest_loop import TREES_PER_BATCH, grow_forest, run_forest, tree_sample
from twinrank.reference.errors import ParameterError
from twinrank.reference.params import (
    BoostParams,
    CostParams,
    FitParams,
    ForestParams,
    TreeParams,
    from_names,
    missing_split,
)
from twinrank.reference.rankers._estimator import BoostedRanker, estimator_on
from twinrank.reference.rankers.gbrt import GBRT, Watch, counting_from
from twinrank.reference.trees.tree import grow_trees

__all__ = ["RandomForest", "IGBRT", "grow_forest", "grow_trees", "run_forest", "tree_sample",
           "TREES_PER_BATCH"]

class RandomForest(BoostedRanker):
    r"""Random forest for ranking (RF-point): unpruned CART trees on bootstrap or query samples.

    Parameters
    ----------
    n_trees : trees $T$ averaged.
    max_leaves, max_depth, min_samples_leaf, min_gain_to_split : tree shape (see
        :class:`~twinrank.reference.params.TreeParams`); the defaults grow trees that
        are unpruned in practice (a node stops when it is pure or too small; about 700
        leaves on MQ2008). ``max_leaves`` also bounds memory: each tree draws a
        ``(2 L - 1, n_features)`` feature mask, and the fast grower reserves ``L``
        histograms of ``n_features * 256 * 3`` float64, for ``L`` the smaller of ``max_leaves``
        and the leaves the tree's rows can fill (``TreeParams.leaves_for``).
    feature_fraction : fraction of features drawn at each node, at least one (k random features).
    cost_lambda : weight $\lambda_c$ of the feature-cost penalty (0: cost-blind).
    feature_costs, free_after_use : the cost of each feature (an array, or a file of
        ``feature cost`` lines) and whether a feature is free once some earlier tree split on
        it (:class:`~twinrank.reference.params.CostParams`); with ``cost_lambda > 0`` splits
        score $\mathrm{gain} - \lambda_c\,c(f)$ (Mohan 2010, Eq. 6.1). Stored in the model file.
    cost_batch_size : trees grown on the same costs; with ``free_after_use`` the features a
        batch split on are free from the next batch on (the forest does not depend on the
        thread count).
    bootstrap : grow each tree on a bootstrap sample of its rows.
    query_subsample : fraction of the queries each tree sees, without replacement.
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    subsample_for_bin : the most training rows the bin thresholds are read from (more rows: a sample
        drawn from ``seed``; None: every row). LightGBM's ``subsample_for_bin``, also 200,000.
    metric, convention : metric recorded after every tree (history, progress).
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``) and stored in the model.
    seed : seed of every random draw.
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    low_memory : the fast twin keeps its bins in one layout (no row-order copy: one byte a row and
        feature less), the same model at more time per tree; the reference ignores it.
    verbose : print one line per ``verbose`` trees to stderr (0: silent).
    """

    param_objects = (TreeParams, ForestParams, CostParams, FitParams)
    model_algorithm = "random_forest"  # the ``algorithm`` of its model files (``load`` refuses others)
    tree_fixed = {"min_hessian_in_leaf": 0.0,  # h = 1 per row: the row count already bounds every leaf
                  "lambda_l2": 0.0}  # leaf values are plain means of the labels

    def __init__(self, *, n_trees=ForestParams.n_trees, max_leaves=1024,
                 max_depth=TreeParams.max_depth, min_samples_leaf=5, min_gain_to_split=0.0,
                 feature_fraction=0.1, cost_lambda=TreeParams.cost_lambda,
                 feature_costs=CostParams.feature_costs, free_after_use=CostParams.free_after_use,
                 cost_batch_size=ForestParams.cost_batch_size, bootstrap=ForestParams.bootstrap,
                 query_subsample=ForestParams.query_subsample, max_bins=ForestParams.max_bins,
                 subsample_for_bin=ForestParams.subsample_for_bin,
                 metric=ForestParams.metric, convention=ForestParams.convention,
                 missing=FitParams.missing, seed=ForestParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory,
                 verbose=FitParams.verbose):
        self._set_init_params(locals())

    def forest_params(self) -> ForestParams:
        """The validated :class:`ForestParams` of this estimator."""
        return from_names(ForestParams, self.get_params(), tree=self.tree_params())

    def validated_params(self) -> SimpleNamespace:
        return SimpleNamespace(fit=from_names(FitParams, self.get_params()),
                               forest=self.forest_params())

    def planned_trees(self) -> int:
        """The number of trees ``fit`` grows (the progress display's total)."""
        return self.n_trees

    def fit_model(self, params, train, valid, *, init_score, callback):
        """Grow the forest (the module docstring); the first ``eval_set``'s metric per tree."""
        return run_forest(self.engine, train, params.forest, valid=valid,
                          model_params=self._model_params(), callback=callback,
                          costs=self.cost_ledger(params.forest.tree.cost_lambda))


class IGBRT(GBRT):
    r"""Initialized GBRT (Mohan, Chen & Weinberger 2011): GBRT boosted from a random forest's scores.

    ``fit`` grows a :class:`RandomForest` with the ``rf_`` parameters and seed
    ``seed``, then boosts squared-error trees on its residuals with the other
    parameters and seed ``seed + 1``. The model is the boosted trees with the forest
    as ``init_model``: ``predict`` is forest + boosted trees. With early stopping the
    boosting may keep 0 trees: the model is then the forest. The boosting's defaults
    take small steps (learning rate 0.05, 8 leaves): the forest is already a good model.

    Parameters
    ----------
    n_trees, learning_rate, max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf,
    lambda_l2, min_gain_to_split, cost_lambda, subsample, subsample_by, feature_fraction :
        the boosting's, as in :class:`~twinrank.reference.rankers.gbrt.GBRT`.
    feature_costs, free_after_use : shared by the forest and the boosting (as in
        :class:`~twinrank.reference.rankers.gbrt.GBRT`): with ``free_after_use`` the features the
        forest split on are free for the boosting.
    max_bins, subsample_for_bin, metric, convention : shared by the forest and the boosting.
    eval_train : the boosting's, as in :class:`~twinrank.reference.rankers.gbrt.GBRT` (the forest
        always records its in-sample metric: its history is the mean of $t$ trees).
    early_stopping_rounds, overfit_tolerance, overfit_extra_trees : the boosting's
        stopping rule on the first ``eval_set`` (the forest's score is round 0).
    rf_n_trees, rf_max_leaves, rf_max_depth, rf_min_samples_leaf, rf_feature_fraction,
    rf_bootstrap, rf_query_subsample, rf_cost_lambda, rf_cost_batch_size : the forest's, as
        in :class:`RandomForest`.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``) and stored in the model;
        fitted once, before the forest (which sees the filled rows).
    seed, n_threads, low_memory, verbose : as in :class:`~twinrank.reference.rankers.gbrt.GBRT`.
    """

    param_objects = (TreeParams, BoostParams, CostParams, FitParams, ("rf_", ForestParams),
                     ("rf_", TreeParams))
    model_algorithm = "igbrt"

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=0.05, max_leaves=8,
                 max_depth=TreeParams.max_depth, min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, cost_lambda=TreeParams.cost_lambda,
                 feature_costs=CostParams.feature_costs, free_after_use=CostParams.free_after_use,
                 subsample=BoostParams.subsample, subsample_by="rows",
                 feature_fraction=TreeParams.feature_fraction, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 metric=BoostParams.metric, convention=BoostParams.convention,
                 eval_train=BoostParams.eval_train,
                 early_stopping_rounds=BoostParams.early_stopping_rounds,
                 overfit_tolerance=BoostParams.overfit_tolerance,
                 overfit_extra_trees=BoostParams.overfit_extra_trees, rf_n_trees=ForestParams.n_trees,
                 rf_max_leaves=1024, rf_max_depth=TreeParams.max_depth, rf_min_samples_leaf=5,
                 rf_feature_fraction=0.1, rf_bootstrap=ForestParams.bootstrap,
                 rf_query_subsample=ForestParams.query_subsample,
                 rf_cost_lambda=TreeParams.cost_lambda, rf_cost_batch_size=ForestParams.cost_batch_size,
                 missing=FitParams.missing,
                 seed=BoostParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory, verbose=FitParams.verbose):
        self._set_init_params(locals())

    def forest(self) -> RandomForest:
        """The (unfitted) random forest of this IGBRT: the ``rf_`` and shared parameters, ``seed``.

        It grows its trees with this IGBRT's ``missing_split``; a fill strategy is
        fitted once by the IGBRT, before the forest sees the rows.
        """
        values = self.get_params()
        shared = {name: values[name] for name in ("max_bins", "subsample_for_bin", "metric", "convention",
                                                  "seed", "n_threads", "low_memory", "feature_costs",
                                                  "free_after_use")}
        own = {name[3:]: value for name, value in values.items() if name.startswith("rf_")}
        # a fill strategy is the IGBRT's, fitted once; the forest splits as the IGBRT does
        return estimator_on(self.engine, RandomForest)(**own, **shared, missing=missing_split(self.missing))

    def boost_params(self) -> BoostParams:
        """The validated :class:`BoostParams` of the boosting (seed ``seed + 1``)."""
        return dataclasses.replace(super().boost_params(), seed=self.seed + 1)

    def validated_params(self) -> SimpleNamespace:
        params = SimpleNamespace(fit=from_names(FitParams, self.get_params()),
                                 boost=self.boost_params())
        try:
            params.forest = self.forest()
            params.forest_params = params.forest.validated_params()  # both parts validated before any work
        except ParameterError as e:
            raise ParameterError(f"the forest's parameters (rf_*): {e}") from None
        return params

    def planned_trees(self) -> int:
        """The most trees ``fit`` grows: the forest's and the boosting's."""
        return self.rf_n_trees + self.n_trees

    def fit_model(self, params, train, valid, *, init_score, callback):
        """Grow the forest, then boost from its scores.

        ``callback`` sees the forest's trees as iterations ``1 .. rf_n_trees`` and the
        boosted trees after them; stopped (True) during the forest, the model is the forest so
        far and no boosted tree.
        """
        forest = params.forest
        forest.feature_costs_ = self.feature_costs_  # read once, by this fit
        watch = Watch(callback)
        forest_model = forest.fit_model(params.forest_params, train, valid, init_score=None, callback=watch)
        boost = dataclasses.replace(params.boost, n_trees=0) if watch.stopped else params.boost
        return self._boost_runs(train, valid, boost, forest_model, "igbrt",
                                counting_from(forest.n_trees, callback), 1, init_score)


r"""LambdaMART and LambdaSMART (Burges 2010; Wu, Burges, Svore & Gao 2010).

LambdaMART is gradient boosting of regression trees on the LambdaRank gradients
(:func:`objectives.lambdarank`): round $m$ fits a tree to the lambdas of the
current scores and sets each leaf to the Newton step

$$\gamma_{lm} = \frac{\sum_{x_i \in R_{lm}} \lambda_i}{\sum_{x_i \in R_{lm}} w_i}$$

(Burges 2010, Alg. 1), shrunk by the learning rate. LambdaSMART (Wu et al. 2010)
is the same loop started from a prior model's scores: ``init_model``.

Where each line of the algorithm box is (Burges 2010, Alg. 1; Wu, Burges, Svore & Gao 2010,
Alg. 1)::

    set number of trees N, training samples m, leaves L, learning rate eta
                                                n_trees, max_leaves, learning_rate: BoostParams
    for i = 0 .. m: F_0(x_i) = BaseModel(x_i)   boosting._Run (0, or init_model's scores)
    for k = 1 .. N:
        for i = 0 .. m:
            y_i = lambda_i, w_i = d lambda_i / d F   objectives.lambdarank (LambdaMART.lambdarank_loss)
        {R_lk} = L-leaf regression tree on {x_i, y_i}        tree.grow_tree (boosting.grow_round)
        gamma_lk = sum lambda_i / sum w_i over R_lk          tree._leaf_value (the Newton step)
        F_k(x_i) = F_{k-1}(x_i) + eta sum_l gamma_lk 1(x_i in R_lk)
                                                boosting.shrink, boosting._Run.add
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference.combination._combine_setup import metric_cutoff
from twinrank.reference.ensembles.boosting import run_boosting
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import named_sets
from twinrank.reference.params import (
    TARGETS,
    BoostParams,
    CostParams,
    FitParams,
    LambdaRankParams,
    TreeParams,
    from_names,
    parse_target,
)
from twinrank.reference.rankers._estimator import BoostedRanker

__all__ = ["LambdaMART", "parse_target", "TARGETS"]


class LambdaMART(BoostedRanker):
    r"""LambdaMART ranker (LambdaSMART when ``init_model`` is given).

    Parameters
    ----------
    n_trees, learning_rate : boosting rounds and shrinkage.
    max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2, min_gain_to_split,
    cost_lambda, split_gain :
        tree shape (see :class:`~twinrank.reference.params.TreeParams`);
        ``min_samples_leaf`` is a count, a fraction or a percent ``"p%"`` of the round's rows;
        ``split_gain="least_squares"`` is the papers' tree, a least-squares fit to the lambdas.
    feature_costs, free_after_use : the cost of each feature (an array, or a file of
        ``feature cost`` lines) and whether a feature is free once some earlier tree split on
        it (:class:`~twinrank.reference.params.CostParams`); with ``cost_lambda > 0`` splits
        score $\mathrm{gain} - \lambda_c\,c(f)$ (Mohan 2010, Eq. 6.1). Stored in the model file.
    query_subsample : fraction of queries drawn without replacement for each tree.
    feature_fraction : fraction of features drawn at each node (k random features).
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    subsample_for_bin : the most training rows the bin thresholds are read from (more rows: a sample
        drawn from ``seed``; None: every row). LightGBM's ``subsample_for_bin``, also 200,000.
    sigma : the RankNet sigmoid's steepness $\sigma$.
    truncation : only pairs with a document in the current top ``truncation`` count
        (LightGBM's ``lambdarank_truncation_level``); None for all pairs.
    normalize : per-query LambdaRank normalisation, as LightGBM (``lambdarank_norm``) and
        XGBoost (``lambdarank_normalization`` with ``lambdarank_score_normalization``) do by
        default: each pair's $|\Delta Z_{ij}|$ divided by $0.01 + |s_i - s_j|$, then the
        query's lambdas and hessians scaled by $\log_2(1 + S) / S$
        (:func:`~twinrank.reference.losses.objectives.lambdarank`); False for the paper's
        un-normalised lambdas. The default and the evidence for it: ``docs/lambdas.md``.
    target : the metric the lambdas optimise, ``"ndcg"``, ``"ndcg@k"``, ``"map"``,
        ``"err"`` or ``"err@k"``; None takes ``metric``'s family with its cutoff deepened to
        at least 30 (``metric="ndcg@10"`` trains on NDCG@30: ``LambdaRankParams.target_of``).
    metric, convention : validation metric and its convention (history, early stopping).
    eval_train : record ``metric`` on the training set after every tree (``history_`` key
        ``"train:<metric>"``, also in the callback record); it costs one metric evaluation
        of the training set per tree, so it is off by default.
    step, step_range, step_on : ``step="optimal"`` weights each tree (its shrunk Newton leaves) by
        the exact best $\alpha$ in ``step_range`` of ``metric`` on the ``eval_set``
        (``step_on="valid"``) or the training set; ``step="oc"`` is the paper's form ("OC", Wu,
        Burges, Svore & Gao 2010, Sec. 5.6): a least-squares tree of the lambdas, unshrunk, whose
        one weight $\alpha$ replaces the Newton values. Each alpha is the tree's weight in the model
        and ``history_["alpha"]``. See :class:`~twinrank.reference.params.BoostParams`.
    learning_rate_schedule, schedule_rate : ``"adaptive"`` shrinks tree $i$ by
        $\eta / (\lfloor r i \rfloor + \eta)$ ($\eta$ while $\lfloor r i \rfloor = 0$), $r$ =
        ``schedule_rate``: DART's normalisation without its dropout ("LambdaMART A.L.R.",
        the ablation of Lucchese et al. 2017; :mod:`~twinrank.reference.rankers.dart`).
    quantized_gradients, gradient_bits : quantized training (Shi et al. 2022; LightGBM's
        ``use_quantized_grad``): each round's gradients and hessians rounded stochastically to
        ``gradient_bits`` bits (drawn from ``seed``), splits chosen on integer histograms, leaf
        values refit from the true gradients; both twins grow the same trees
        (:class:`~twinrank.reference.params.BoostParams`).
    early_stopping_rounds : patience on the first ``eval_set``; the best model is kept.
    overfit_tolerance, overfit_extra_trees : BL-MART's overfitting tolerance instead.
    init_model : prior model (path, Ensemble or fitted estimator): LambdaSMART.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``) and stored in the model.
    seed : seed of every random draw (query subsample, then node feature subsets, per round).
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    low_memory : the fast twin keeps its bins in one layout (no row-order copy: one byte a row and
        feature less), the same model at more time per tree; the reference ignores it.
    verbose : print one line per ``verbose`` rounds to stderr (0: silent).
    """

    param_objects = (TreeParams, BoostParams, LambdaRankParams, CostParams, FitParams)
    model_algorithm = "lambdamart"  # the ``algorithm`` of its model files (``load`` refuses others)

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
                 max_leaves=TreeParams.max_leaves, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, cost_lambda=TreeParams.cost_lambda,
                 split_gain=TreeParams.split_gain,
                 feature_costs=CostParams.feature_costs, free_after_use=CostParams.free_after_use,
                 query_subsample=BoostParams.query_subsample,
                 feature_fraction=TreeParams.feature_fraction, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 sigma=LambdaRankParams.sigma, truncation=LambdaRankParams.truncation,
                 normalize=LambdaRankParams.normalize, target=LambdaRankParams.target,
                 metric=BoostParams.metric, convention=BoostParams.convention,
                 eval_train=BoostParams.eval_train, step=BoostParams.step, step_range=BoostParams.step_range,
                 step_on=BoostParams.step_on, learning_rate_schedule=BoostParams.learning_rate_schedule,
                 schedule_rate=BoostParams.schedule_rate,
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
        """The validated :class:`BoostParams` of this estimator."""
        return from_names(BoostParams, self.get_params(), tree=self.tree_params())

    def validated_params(self) -> SimpleNamespace:
        values = self.get_params()
        return SimpleNamespace(fit=from_names(FitParams, values), boost=self.boost_params(),
                               lambdarank=from_names(LambdaRankParams, values))

    def check_data(self, params, train, valid, init_score) -> None:
        """Also: LambdaRank's pairs are pairs of one query, so data read without query ids is refused;
        the optimal step's metric must have a cutoff it can search."""
        super().check_data(params, train, valid, init_score)
        if params.boost.searches_step:
            metric_cutoff(params.boost.stopping_metric)
        for what, data in [("the training data", train)] + [(f"the eval_set {name!r}", data)
                                                           for name, data in named_sets(valid)]:
            if not data.has_queries:
                raise ParameterError(f"{what} was read from a file without query ids (no 'qid:', no group "
                                     "file), which makes one query of all rows; LambdaMART needs the queries")

    def needs_validation(self, params) -> list[str]:
        """Also: the optimal step chosen on validation data (``step_on="valid"``)."""
        needs = super().needs_validation(params)
        if params.boost.searches_step and params.boost.step_on == "valid":
            needs.append(f"step={params.boost.step!r} with step_on='valid' (each tree's weight chosen on "
                         "validation data; or step_on='train')")
        return needs

    def lambdarank_loss(self, params, train):
        """This twin's LambdaRank loss of ``train`` for the target metric (LambdaRankParams)."""
        family, k = params.lambdarank.target_of(params.boost.stopping_metric)
        return self.engine.lambdarank(train.y, train.query_offsets, weight=train.weight, metric=family, k=k,
                                      sigma=params.lambdarank.sigma, truncation=params.lambdarank.truncation,
                                      normalize=params.lambdarank.normalize, qids=train.qids)

    def fit_model(self, params, train, valid, *, init_score, callback):
        """Boost on LambdaRank's gradients of the target metric (Burges 2010, Alg. 1)."""
        loss = self.lambdarank_loss(params, train)
        return run_boosting(self.engine, train, loss, params.boost, valid=valid, init_model=params.prior,
                            init_scores=init_score, algorithm="lambdamart", model_params=self._model_params(),
                            callback=callback, costs=self.cost_ledger(params.boost.tree.cost_lambda, params.prior))

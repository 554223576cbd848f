r"""BL-MART: bagged LambdaMART (Ganjisaffar, Caruana & Lopes, SIGIR 2011).

Boosting lowers bias; bagging lowers variance. BL-MART trains $B$ LambdaMART models,
each on a sample of the training **queries** (a fraction ``query_fraction`` = 0.67,
drawn without replacement, as the paper's Sec. 3.5), each early-stopped on the whole
validation set (``early_stopping_rounds``, or the overfitting tolerance
``overfit_tolerance``: keep adding trees until validation has dropped that far below
its best), and scores a query by combining the members' scores per query
(:mod:`~twinrank.reference.combination.bag_rules`; by default each member's scores min-max
normalised to $[0, 1]$ within the query, then averaged):

$$S(q, i) = \frac{1}{B} \sum_{m=1}^{B} \frac{s_m(i) - \min_{j \in q} s_m(j)}
{\max_{j \in q} s_m(j) - \min_{j \in q} s_m(j)}.$$

Randomness. Member $m$ has the seed $\mathrm{seed}_m$ = ``runs.derive_seed(seed, m)``:
its query sample is ``default_rng(seed_m).choice(n_queries, k, replace=False)``
(sorted, $k = \max(1, \mathrm{round}(\texttt{query\_fraction} \cdot n_q))$), and its
LambdaMART takes ``seed_m`` for its own draws (query subsample per tree, features per
node). So the bag depends on the seed and the member's index only: the same bag in
process, in processes or on Dask (members are trained through
:func:`~twinrank.reference.ensembles.runs.execute`), and in both twins.

Every LambdaMART parameter is a member parameter; a member is the LambdaMART of the
bag's engine (:func:`~twinrank.reference.rankers._estimator.estimator_on`).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from twinrank.executors import make_executor
from twinrank.reference.engine import REFERENCE
from twinrank.reference.ensembles.runs import Fold, Run, derive_seed, execute
from twinrank.reference.errors import ParameterError
from twinrank.reference.io._bag_model import BAG_ALGORITHM as ALGORITHM, BagModel
from twinrank.reference.io.data import Dataset, dense_features, frame_names
from twinrank.reference.params import (
    BaggingParams,
    BoostParams,
    CostParams,
    FitParams,
    LambdaRankParams,
    TreeParams,
    from_names,
)
from twinrank.reference.rankers._estimator import (
    SCORE_CONVENTION,
    SCORE_METRIC,
    as_model,
    estimator_on,
    with_feature_names,
)
from twinrank.reference.rankers._fit_data import as_dataset, check_feature_names, eval_sets
from twinrank.reference.rankers.lambdamart import LambdaMART

__all__ = ["BLMART", "BagModel", "bag_scores", "member_seeds", "member_queries", "ALGORITHM"]


def member_seeds(seed: int, n_models: int) -> list[int]:
    """The seed of every member: ``derive_seed(seed, m)`` for m = 0..n_models-1."""
    return [derive_seed(seed, m) for m in range(n_models)]


def member_queries(member_seed: int, n_queries: int, query_fraction: float) -> np.ndarray:
    """The sorted query indices a member trains on, drawn from its own seed."""
    k = max(1, int(round(query_fraction * n_queries)))
    return np.sort(np.random.default_rng(member_seed).choice(n_queries, k, replace=False))


def bag_scores(model: BagModel, X, query_offsets) -> np.ndarray:
    """The bag's score of every row of ``X`` (queries by ``query_offsets``), on this twin."""
    return run_bag_scores(REFERENCE, model, X, query_offsets)


def run_bag_scores(engine, model: BagModel, X, query_offsets) -> np.ndarray:
    """The members' scores on ``engine``, combined per query by the bag's rule."""
    X = dense_features(X)
    members = np.stack([engine.predict_ensemble(member, X) for member in model.members])  # (B, n)
    return engine.combine_scores(members, query_offsets, model.combine)


class BLMART(LambdaMART):
    """Bagged LambdaMART: ``n_models`` LambdaMART members on samples of the queries, combined per query.

    ``predict`` needs the queries (a Dataset, or ``qid=``): min-max and Borda count work
    within each query. ``predict_members`` gives the members x documents score matrix.

    Parameters
    ----------
    n_models, query_fraction, combine : the bag (:class:`~twinrank.reference.params.BaggingParams`).
    n_jobs, workers, scheduler : where the members train (at most one): local processes, a local
        Dask cluster of ``workers`` workers, or the Dask cluster at ``scheduler``; none: in process.
    n_trees, learning_rate, max_leaves, min_samples_leaf, query_subsample, feature_fraction,
    early_stopping_rounds, overfit_tolerance, overfit_extra_trees, seed :
        as every other :class:`~twinrank.reference.rankers.lambdamart.LambdaMART` parameter, each
        member's; ``seed`` is the master seed of the members' seeds (the module docstring).
        The paper's Table 2 gives the leaf size as a percent of the rows: ``min_samples_leaf="0.25%"``;
        its trees (jforests) are least-squares fits to the lambdas: ``split_gain="least_squares"``.
    """

    param_objects = (BaggingParams,) + LambdaMART.param_objects
    model_algorithm = ALGORITHM

    def __init__(self, *, n_models=BaggingParams.n_models, query_fraction=BaggingParams.query_fraction,
                 combine=BaggingParams.combine, n_jobs=BaggingParams.n_jobs, workers=BaggingParams.workers,
                 scheduler=BaggingParams.scheduler,
                 n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
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
                 step_on=BoostParams.step_on,
                 early_stopping_rounds=BoostParams.early_stopping_rounds,
                 overfit_tolerance=BoostParams.overfit_tolerance,
                 overfit_extra_trees=BoostParams.overfit_extra_trees, init_model=FitParams.init_model,
                 missing=FitParams.missing, seed=BoostParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory,
                 verbose=FitParams.verbose):
        self._set_init_params(locals())

    def member_estimator(self) -> type:
        """The members' class: the LambdaMART of this bag's engine."""
        return estimator_on(self.engine, LambdaMART)

    def member_params(self) -> dict:
        """The parameters every member's LambdaMART takes (all but the bag's and the seed)."""
        bag = {f.name for f in dataclasses.fields(BaggingParams)}
        return {k: v for k, v in self.get_params().items() if k not in bag and k != "seed"}

    def validated_params(self) -> SimpleNamespace:
        """The bag's parameters, and every member parameter validated as LambdaMART validates it."""
        params = self.member_estimator()(**self.member_params()).validated_params()
        params.bag = from_names(BaggingParams, self.get_params())
        return params

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_names=None,
            init_score=None, callback=None):
        """Train the members (through the runs layer) and keep the bag.

        ``group``, ``sample_weight``: as in every estimator's ``fit``; a member trains on its
        queries' rows with their weights.

        ``eval_set``: one validation set, every member's (early stopping, overfitting
        tolerance); the bag keeps no history, so a second set is refused. ``callback(member,
        row)`` is called as each member finishes; when it returns True no further member is
        trained and the bag is the members finished so far.
        """
        params = self.validated_params()
        if init_score is not None:
            raise ParameterError("BLMART takes no init_score (init_model gives every member a prior model)")
        names = frame_names(X)
        train = as_dataset(X, y, qid, group=group, sample_weight=sample_weight)
        sets = eval_sets(eval_set, eval_names, names)
        if sets is not None and len(sets) > 1:
            raise ParameterError(f"BLMART takes one eval_set (every member's validation set; the bag records no "
                                 f"history), got {len(sets)}")
        valid = None if sets is None else sets[0][1]
        member = self.member_estimator()
        member(**self.member_params()).check_data(params, train, sets, None)
        costs = from_names(CostParams, self.get_params()).cost_array(train.n_features)
        self.feature_costs_ = costs
        # read once here, not once per member: the prior model and the feature costs
        fixed = {**self.member_params(), "init_model": as_model(params.fit.init_model), "feature_costs": costs}
        seeds = member_seeds(self.seed, params.bag.n_models)
        folds = [Fold(f"member{m}", train.take_queries(member_queries(s, train.n_queries,
                                                                        params.bag.query_fraction)), valid)
                 for m, s in enumerate(seeds)]
        runs = [Run(index=m, config=0, params={}, fold=m, repeat=m, seed=s) for m, s in enumerate(seeds)]
        executor = make_executor(n_jobs=params.bag.n_jobs, workers=params.bag.workers,
                                 scheduler=params.bag.scheduler)
        try:
            results = execute(runs, folds, member, fixed=fixed,
                              executor=executor, keep_models=True,
                              progress=None if callback is None else lambda done, total, row: callback(
                                  row["run"], row))
        finally:
            executor.close()
        if results.failed:
            row = results.failed[0]
            raise ParameterError(f"member {row['run']} failed: {row['error']}")
        members = [results.models[m] for m in sorted(results.models)]
        self._set_fitted(with_feature_names(BagModel(members, params.bag.combine, train.n_features,
                                                     self._model_params()), names))
        return self

    def _model_params(self) -> dict:
        params = super()._model_params()
        params["scheduler"] = None  # an address of today's cluster says nothing of the model
        return params

    def _set_fitted(self, model: BagModel) -> None:
        self.model_ = model
        self.n_features_in_ = model.n_features
        self.best_iteration_ = None
        self.history_ = {}
        self._read_feature_names(model)

    def predict_members(self, X) -> np.ndarray:
        """The members x documents score matrix (float64, shape (B, n_rows)) of ``X``."""
        model = self._fitted_model()
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        X = X.X if isinstance(X, Dataset) else dense_features(X)
        with self.engine.threads(self.n_threads):
            return np.stack([self.engine.predict_ensemble(member, X) for member in model.members])

    def predict(self, X, qid=None, n_trees=None, exits=None):
        """The bag's scores of the documents of ``X`` (a Dataset, or an array with ``qid=``)."""
        if n_trees is not None or exits is not None:
            raise ParameterError("a bag is scored whole: n_trees and exits are for one ensemble")
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        if isinstance(X, Dataset):
            offsets = X.query_offsets
        elif qid is not None:
            offsets = Dataset.from_qid(dense_features(X), np.zeros(len(qid)), qid).query_offsets
        else:
            raise ParameterError("BLMART combines its members' scores per query (min-max, Borda): pass a "
                                 "Dataset or qid=, the query of every row (rows of a query contiguous)")
        with self.engine.threads(self.n_threads):
            rows = X.X if isinstance(X, Dataset) else X
            return run_bag_scores(self.engine, self._fitted_model(), rows, offsets)

    def predict_contributions(self, X, n_trees=None) -> np.ndarray:
        """Each feature's share of each row's score (a bag combined by ``"mean"``: its members' mean);
        ``n_trees`` must be None, as for :meth:`predict`: a bag is explained whole."""
        if n_trees is not None:
            raise ParameterError("a bag is scored whole: n_trees is for one ensemble")
        return super().predict_contributions(X)

    def score(self, X, y=None, qid=None) -> float:
        """Mean NDCG@10 over the queries, as every estimator's ``score`` (the queries reach ``predict``)."""
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        data = as_dataset(X, y, qid, what="score")
        return float(self.engine.evaluate(SCORE_METRIC, data.y, self.predict(data), data.query_offsets,
                                          convention=SCORE_CONVENTION)[SCORE_METRIC])

    @property
    def feature_importances_(self) -> np.ndarray:
        """The members' normalised total split gains, averaged over members."""
        return np.mean([_as_member(self, m).feature_importances_ for m in self._fitted_model().members], axis=0)


def _as_member(bag: BLMART, member) -> LambdaMART:
    est = bag.member_estimator()()
    est._set_fitted(member)
    return est

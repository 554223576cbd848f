r"""LambdaMART and LambdaSMART (Burges 2010; Wu, Burges, Svore & Gao 2010).

LambdaMART is gradient boosting of regression trees on the LambdaRank gradients
(:func:`objectives.lambdarank`): round :math:`m` fits a tree to the lambdas of the
current scores and sets each leaf to the Newton step

.. math:: \gamma_{lm} = \frac{\sum_{x_i \in R_{lm}} \lambda_i}{\sum_{x_i \in R_{lm}} w_i}

(Burges 2010, Alg. 1), shrunk by the learning rate. LambdaSMART (Wu et al. 2010)
is the same loop started from a prior model's scores: ``init_model``.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import boosting, objectives, predict
from . import missing as missing_strategies
from ._estimator import (BoostedRanker, as_dataset, as_model, first_eval_set, with_missing,
                         with_progress)
from .errors import ParameterError
from .params import BoostParams

TARGETS = ("ndcg", "map", "err")


class LambdaMART(BoostedRanker):
    r"""LambdaMART ranker (LambdaSMART when ``init_model`` is given).

    Parameters
    ----------
    n_trees, learning_rate : boosting rounds and shrinkage.
    max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2 :
        tree shape (see :class:`~twinrank.reference.params.TreeParams`);
        ``min_samples_leaf`` is a count or a fraction of the round's rows.
    query_subsample : fraction of queries drawn without replacement for each tree.
    feature_fraction : fraction of features drawn at each node (k random features).
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    sigma : the RankNet sigmoid's steepness :math:`\sigma`.
    truncation : only pairs with a document in the current top ``truncation`` count
        (LightGBM's ``lambdarank_truncation_level``); None for all pairs.
    normalize : per-query LambdaRank normalisation, as LightGBM (``lambdarank_norm``) and
        XGBoost (``lambdarank_normalization`` with ``lambdarank_score_normalization``) do by
        default: each pair's $|\Delta Z_{ij}|$ divided by $0.01 + |s_i - s_j|$, then the
        query's lambdas and hessians scaled by $\log_2(1 + S) / S$
        (:func:`~twinrank.reference.objectives.lambdarank`); False for the paper's
        un-normalised lambdas. The default and the evidence for it: ``docs/lambdas.md``.
    target : the metric the lambdas optimise, ``"ndcg"``, ``"ndcg@k"``, ``"map"``,
        ``"err"`` or ``"err@k"``; None takes it from ``metric``.
    metric, convention : validation metric and its convention (history, early stopping).
    eval_train : record ``metric`` on the training set after every tree (``history_`` key
        ``"train:<metric>"``, also in the callback record); it costs one metric evaluation
        of the training set per tree, so it is off by default.
    early_stopping_rounds : patience on the first ``eval_set``; the best model is kept.
    overfit_tolerance, overfit_extra_trees : BL-MART's overfitting tolerance instead.
    init_model : prior model (path, Ensemble or fitted estimator): LambdaSMART.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``) and stored in the model.
    seed : seed of every random draw (query subsample, then node feature subsets, per round).
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    verbose : print one line per ``verbose`` rounds to stderr (0: silent).
    """

    _engine = SimpleNamespace(boosting=boosting, objectives=objectives, predict=predict,
                              missing=missing_strategies)

    def __init__(self, *, n_trees=100, learning_rate=0.1, max_leaves=31, max_depth=None,
                 min_samples_leaf=20, min_hessian_in_leaf=1e-3, lambda_l2=0.0,
                 query_subsample=1.0, feature_fraction=1.0, max_bins=255, sigma=1.0,
                 truncation=None, normalize=True, target=None, metric="ndcg@10",
                 convention="lightgbm", eval_train=False, early_stopping_rounds=None, overfit_tolerance=None,
                 overfit_extra_trees=250, init_model=None, missing="learn", seed=0,
                 n_threads=None, verbose=0):
        self._set_init_params(locals())

    def boost_params(self) -> BoostParams:
        """The validated :class:`BoostParams` of this estimator."""
        return BoostParams(n_trees=self.n_trees, learning_rate=self.learning_rate,
                           tree=self.tree_params(),
                           subsample=self.query_subsample, subsample_by="queries",
                           max_bins=self.max_bins, metric=self.metric, convention=self.convention,
                           early_stopping_rounds=self.early_stopping_rounds,
                           overfit_tolerance=self.overfit_tolerance,
                           overfit_extra_trees=self.overfit_extra_trees, seed=self.seed,
                           eval_train=self.eval_train)

    def fit(self, X, y=None, qid=None, *, eval_set=None, init_score=None, callback=None):
        """Fit on ``X, y, qid`` (or a Dataset); ``eval_set``: list of ``(X, y, qid)`` or Datasets.

        Only the first ``eval_set`` entry drives early stopping. ``init_score`` are raw
        initial scores of the training rows (not saved with the model). ``callback``
        ``(iteration, record)`` is called after every tree.
        """
        params = self.boost_params()
        train = as_dataset(X, y, qid)
        valid = first_eval_set(eval_set)
        if valid is None and (params.early_stopping_rounds or params.overfit_tolerance is not None):
            raise ParameterError("early stopping needs an eval_set")
        train, valid, fitted = self._missing_fitted(train, valid)
        family, k = parse_target(self.target or self.metric)
        objective = self._objective(train, family, k)
        with self._threads():
            model = self._engine.boosting.boost(
                train, objective, params, valid=valid, init_model=as_model(self.init_model),
                init_scores=init_score, algorithm="lambdamart",
                model_params=self._model_params(), callback=with_progress(callback, self.verbose))
        self._set_fitted(with_missing(model, fitted))
        return self

    def _objective(self, train, family: str, k):
        lambdarank = self._engine.objectives.lambdarank
        ranking = np.empty(train.n_rows, dtype=np.int64)  # each round's ranked order, the next's start

        def objective(scores, queries):
            return lambdarank(train.y, scores, train.query_offsets, metric=family, k=k,
                              sigma=self.sigma, truncation=self.truncation,
                              normalize=self.normalize, queries=queries, ranking=ranking)
        return objective


def parse_target(name: str):
    """``"ndcg@10"`` -> ``("ndcg", 10)``; ``"map"`` -> ``("map", None)``."""
    family, _, k = str(name).lower().partition("@")
    if family not in TARGETS:
        raise ParameterError(f"LambdaMART optimises one of {TARGETS} (with an optional @k), not {name!r}")
    if k and not k.isdigit():
        raise ParameterError(f"the cutoff of {name!r} must be a positive integer")
    return family, (int(k) if k else None)

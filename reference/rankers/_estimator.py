"""What every twinrank estimator shares: parameters, the one template ``fit``, save/load.

An estimator class is written once, in the reference; the fast class is a
declaration, ``class LambdaMART(reference.LambdaMART): engine = FAST``. The
template :meth:`RankerEstimator.fit` does what every algorithm does (parameters
validated before any data work, inputs and eval sets coerced and checked once,
missing values fitted once, the engine's threads, the fitted model stored); an
algorithm supplies only :meth:`~RankerEstimator.fit_model`, its own part.
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

from twinrank.reference._feature_costs import CostLedger
from twinrank.reference.costs.cumulative import cumulative_cost, model_trees
from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import Dataset, dense_features, frame_names
from twinrank.reference.io.model import SPLIT_STRATEGIES, Ensemble, load_model, with_missing
from twinrank.reference.params import CostParams, FitParams, TreeParams, from_names, missing_split
from twinrank.reference.rankers._fit_data import as_dataset, check_feature_names, eval_sets
from twinrank.reference.rankers.missing import run_fit
from twinrank.reference.trees.explain import feature_importances
from twinrank.sklearn.protocol import ScikitLearnProtocol

SCORE_METRIC, SCORE_CONVENTION = "ndcg@10", "lightgbm"  # what ``score`` reports
_ON_ENGINE: dict = {}  # (engine, class name) -> the estimator class bound to that engine


class RankerEstimator(ScikitLearnProtocol):
    """Base class: ``get_params`` / ``set_params`` from the keyword-only ``__init__`` signature.

    It speaks scikit-learn's estimator protocol (:mod:`._sklearn_protocol`) without
    importing scikit-learn: ``clone``, tags, ``score`` and the routing of ``qid``.

    ``engine`` is the twin whose kernels ``fit`` and ``predict`` run on; ``param_objects``
    are the parameter dataclasses whose fields are, by name, the estimator's parameters.

    Attributes
    ----------
    model_ : the fitted model (an ``Ensemble``, or the algorithm's own kind), what ``save`` writes.
    history_ : dict of lists, one value per tree (per iteration for DART), as the model file
        stores it: ``"<set>:<metric>"`` for every metric (``metric``, one name or several) on
        every eval set (``"valid"``, ``"valid_1"``, ... or ``eval_names``) and, with
        ``eval_train``, on the training set (``"train:<metric>"``); an algorithm adds its own
        keys (``"alpha"``, DART's ``"size"``, ``"branch"``; averaged runs and McRank prefix
        their members' keys, ``"run0:valid:ndcg@10"``, ``"y>1:valid:ndcg@10"``).
    evals_result_ : the metric series of ``history_`` by set, then metric (LightGBM's
        ``evals_result_``): ``{"valid": {"ndcg@10": [...], "map": [...]}, "train": {...}}``;
        a set's name is everything before a key's last ``:``.
    best_iteration_ : the number of trees of the best validation value (early stopping), or None.
    n_features_in_ : the number of columns of ``X``.
    feature_names_in_ : ndarray of str, the column names of a pandas DataFrame ``X`` (all strings);
        absent for arrays (scikit-learn's rule). Stored in the model file; ``predict`` and ``score``
        refuse a DataFrame with other columns or another order.
    """

    engine = REFERENCE
    param_objects: tuple = (FitParams,)
    model_algorithm: str = ""  # the ``algorithm`` field of its models; ``load`` refuses others

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _ON_ENGINE[cls.engine, cls.__name__] = cls

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY]

    def _set_init_params(self, values: dict) -> None:
        """Store every keyword-only ``__init__`` argument as is (scikit-learn's contract)."""
        for name in self._param_names():
            setattr(self, name, values[name])

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> "RankerEstimator":
        names = set(self._param_names())
        for name, value in params.items():
            if name not in names:
                raise ParameterError(f"{type(self).__name__} has no parameter {name!r}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not _same(v, defaults.get(k))]
        return f"{type(self).__name__}({', '.join(changed)})"

    def validated_params(self) -> SimpleNamespace:
        """Every parameter as its parameter object (``.fit``, ``.tree``, ...), validated.

        Raises ParameterError naming the parameter; ``fit`` calls it before any data work.
        """
        return SimpleNamespace(fit=from_names(FitParams, self.get_params()))

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_names=None,
            init_score=None, callback=None):
        """Fit on ``X, y, qid`` (or a Dataset); ``eval_set``: list of ``(X, y, qid)`` or Datasets (or one Dataset).

        ``group``: the query sizes instead of ``qid`` (LightGBM's ``LGBMRanker.fit``).
        ``sample_weight``: one weight per row (LightGBM's) or per query (XGBoost's), multiplying
        the rows' gradients and hessians (:mod:`~twinrank.reference.rankers._fit_data`); metrics,
        bins and missing-value fills stay unweighted.

        Every metric (``metric``) is recorded on every eval set after every tree, under its
        name (``eval_names``, default ``"valid"``, ``"valid_1"``, ...): ``history_`` and
        ``evals_result_``. Early stopping, the overfitting tolerance, the optimal step and
        X-DART's pruning read the first metric on the first set (LightGBM's
        ``first_metric_only=True``). ``init_score``: raw initial scores of the training rows
        (boosted rankers; not saved with the model). ``callback(iteration, record)`` is called
        after every tree with that tree's metric values (the ``history_`` keys); when it
        returns True, training stops and the model keeps the trees grown so far (a stopping
        rule still keeps its best iteration's).

        Everything is read and checked here, once, before any tree: the parameters, the data
        (:class:`~twinrank.reference.io.data.Dataset` checks X, y and the queries), the prior
        model (``params.prior``, loaded and verified once) and the feature costs
        (``feature_costs_``); :meth:`fit_model` receives them checked.
        """
        params = self.validated_params()
        params.costs = self.cost_params()
        params.prior = as_model(params.fit.init_model)
        names = frame_names(X)  # a DataFrame's column names, or None
        train = as_dataset(X, y, qid, group=group, sample_weight=sample_weight)
        valid = eval_sets(eval_set, eval_names, names)
        if train.n_features == 0:
            raise ParameterError(f"{type(self).__name__}.fit: the training data have no features "
                                 f"({train.n_rows} rows, 0 columns): a tree has nothing to split on")
        self.check_data(params, train, valid, init_score)
        self.feature_costs_ = None if params.costs is None else params.costs.cost_array(train.n_features)
        fitted = None
        if params.fit.missing not in SPLIT_STRATEGIES:
            fitted = run_fit(self.engine, train.X, params.fit.missing)
            scorer = self.engine.predict_ensemble  # scores the iterative strategy's imputers
            train, valid = _transformed(train, fitted, scorer), _transformed(valid, fitted, scorer)
        with self.engine.threads(params.fit.n_threads), self.engine.low_memory(params.fit.low_memory):
            model = self.fit_model(params, train, valid, init_score=init_score,
                                   callback=self.progress(callback, params.fit.verbose))
        self._set_fitted(with_feature_names(with_missing(model, fitted), names))
        return self

    def progress(self, callback, verbose: int):
        """``callback`` also printing every ``verbose``-th round (:func:`with_progress`)."""
        return with_progress(callback, verbose)

    def cost_params(self) -> CostParams | None:
        """The validated :class:`CostParams` of an estimator that has them, else None."""
        if CostParams not in self.param_objects:
            return None
        return from_names(CostParams, self.get_params())

    def check_data(self, params, train: Dataset, valid: list | None, init_score) -> None:
        """Raise ParameterError if the data do not suit the parameters (before any fitting);
        ``valid``: the eval sets, ``[(name, Dataset), ...]``, or None."""
        if init_score is not None:
            raise ParameterError(f"{type(self).__name__} takes no init_score")
        for name, data in valid or []:
            if data.weight is not None:
                raise ParameterError(f"eval_set {name!r} is weighted: validation metrics are unweighted (the "
                                     "weights are the training rows'); give it without weights")
        if valid is None and self.needs_validation(params):
            raise ParameterError(f"{self.needs_validation(params)[0]} needs validation data: "
                                 "fit(..., eval_set=[valid]); on the command line, --valid")

    def needs_validation(self, params) -> list[str]:
        """What in ``params`` reads validation data (each a phrase; empty: nothing does).

        The one rule: ``fit`` refuses to start without an ``eval_set`` when this is not empty,
        and the command line refuses a missing ``--valid`` by the same list.
        """
        return []

    def cost_ledger(self, cost_lambda: float, prior: Ensemble | None = None) -> CostLedger | None:
        r"""The feature costs the fit's first tree sees (None when cost-blind: no costs or
        $\lambda_c = 0$); with ``free_after_use``, the features ``prior`` splits on are paid."""
        costs = getattr(self, "feature_costs_", None)
        if costs is None or cost_lambda == 0:
            return None
        ledger = CostLedger(costs, self.free_after_use)
        if prior is not None:
            ledger.pay(all_trees(prior))
        return ledger

    def fit_model(self, params, train: Dataset, valid: list | None, *, init_score, callback):
        """The algorithm's own part of ``fit``: the model of ``train`` (missing values filled), with the
        eval sets ``valid`` (``[(name, Dataset), ...]`` or None) and the ``callback`` (it stops on True)."""
        raise NotImplementedError

    def predict(self, X, n_trees: int | None = None, exits=None):
        """Scores of the rows of ``X`` (an array of shape (n_rows, n_features) or a Dataset), its
        values rounded to float32 as in training (float64 rows as they are read: no float32 copy).

        ``n_trees``: score with the first ``n_trees`` trees only (None: every tree the
        model kept; early stopping already keeps only the best iteration's trees, and
        ``best_iteration_`` is that count). A prior model (``init_model``) always counts whole.

        ``exits``: an :class:`~twinrank.reference.costs.exits.EarlyExit`; then the result is an
        :class:`~twinrank.reference.costs.exits.ExitScores` (scores, each document's exit tree and
        its cost, :mod:`~twinrank.reference.analysis.cost`, with the model's feature costs, zero if
        it has none, and a tree cost of 1). A Dataset's queries are the exits' queries; an
        array is one query.
        """
        model = truncated(self._fitted_model(), n_trees)
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        offsets = X.query_offsets if isinstance(X, Dataset) else None
        if exits is None and isinstance(X, np.ndarray) and X.dtype == np.float64:
            with self.engine.threads(self.n_threads):  # rounded to float32 as they are read, not in a copy
                return self.engine.predict_ensemble(model, X, as_float32=True)
        X = X.X if isinstance(X, Dataset) else dense_features(X)
        with self.engine.threads(self.n_threads):
            if exits is None:
                return self.engine.predict_ensemble(model, X)
            result = self.engine.predict_exits(model, X, offsets, exits)
        stored = model.params.get("feature_costs")
        costs = np.zeros(model.n_features) if stored is None else np.asarray(stored, dtype=np.float64)
        result.cost = cumulative_cost(model_trees(model), costs)[0][result.exit_tree]  # (n_rows,)
        return result

    def predict_contributions(self, X, n_trees: int | None = None) -> np.ndarray:
        """Each feature's share of each row's score (exact path-dependent TreeSHAP, LightGBM's ``pred_contrib``):
        float64 (n_rows, n_features + 1), the last column the base value; a row sums to its
        ``predict(X, n_trees)`` score.

        ``X``: as for :meth:`predict`. ``n_trees``: explain the first ``n_trees`` trees only, as
        :meth:`predict` scores them (``twinrank predict --contributions --trees K``). A model whose score is
        not a sum of trees (McRank, cumulative regression, a BL-MART bag combined per query) is refused
        with the reason (:mod:`~twinrank.reference.attribution.contributions`).
        """
        model = self._fitted_model()
        if isinstance(model, Ensemble):
            model = truncated(model, n_trees)
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        X = X.X if isinstance(X, Dataset) else dense_features(X)
        with self.engine.threads(self.n_threads):
            return self.engine.predict_contributions(model, X)

    def score(self, X, y=None, qid=None) -> float:
        """Mean NDCG@10 over the queries of ``X, y, qid`` (or a Dataset), LightGBM's convention.

        Gains $2^l - 1$, ties in input order, a query without a relevant document counts 1
        (:mod:`~twinrank.reference.evaluation.conventions`). scikit-learn's ``GridSearchCV`` calls it when
        no ``scoring`` is given; other metrics: ``twinrank.sklearn.glue.make_ranking_scorer``.
        """
        if not isinstance(X, Dataset) and qid is None:
            raise ParameterError(
                f"{type(self).__name__}.score needs qid (or a Dataset): a ranking is scored per "
                "query. Through scikit-learn, enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=...")
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        data = as_dataset(X, y, qid, what="score")
        scores = self.predict(data)
        return float(self.engine.evaluate(SCORE_METRIC, data.y, scores, data.query_offsets,
                                          convention=SCORE_CONVENTION)[SCORE_METRIC])

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain of every feature, normalised to sum 1 (scikit-learn's convention;
        all zeros for a model without a split), over every tree ``predict`` uses (a prior
        model's too). Raw counts and gains, per tree too:
        :func:`~twinrank.reference.trees.explain.feature_importances`."""
        gain = feature_importances(self._fitted_model(), "gain", include_init_model=True)
        total = gain.sum()
        return gain / total if total > 0 else gain

    def save(self, path) -> None:
        """Write the fitted model as versioned JSON, atomically."""
        self._fitted_model().save(path)

    @classmethod
    def load(cls, path, *, verify_checksum: bool = True) -> "RankerEstimator":
        """An estimator holding the model of a twinrank model file (either twin wrote it).

        The file is read by the one validating loader (``model.load_model``); a model
        of another algorithm is refused with both algorithms named.
        """
        model = load_model(path, verify_checksum=verify_checksum)
        if model.algorithm != cls.model_algorithm:
            raise ModelFormatError(f"{path}: this is a {model.algorithm!r} model, not a {cls.model_algorithm!r} "
                                   f"model: load it with its own estimator, or with load_model()")
        defaults = {p.name: p.default for p in inspect.signature(cls.__init__).parameters.values()
                    if p.kind == p.KEYWORD_ONLY}
        # JSON has no tuples: a tuple parameter (step_range) comes back as a list
        est = cls(**{k: tuple(v) if isinstance(defaults[k], tuple) and isinstance(v, list) else v
                     for k, v in model.params.items() if k in defaults and k != "init_model"})
        est._set_fitted(model)
        return est

    def _set_fitted(self, model: Ensemble) -> None:
        self.model_ = model
        self.n_features_in_ = model.n_features
        self.best_iteration_ = model.best_iteration
        self.history_ = model.history
        self._read_feature_names(model)

    def _read_feature_names(self, model) -> None:
        """``feature_names_in_`` from the model's stored names (none: no such attribute)."""
        names = model.params.get("feature_names_in")
        if names is None:
            vars(self).pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = np.asarray(names, dtype=object)

    @property
    def evals_result_(self) -> dict:
        """``history_``'s metric series as ``{set: {metric: [values]}}`` (the class docstring)."""
        return evals_result(self.history_)

    def _fitted_model(self) -> Ensemble:
        if not hasattr(self, "model_"):
            raise ParameterError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self.model_


class BoostedRanker(RankerEstimator):
    """Base of the tree estimators: their tree parameters and the stopping rule's needs."""

    tree_fixed: dict = {}  # TreeParams fields the estimator does not expose

    def tree_params(self) -> TreeParams:
        """The validated :class:`TreeParams` of this estimator (``missing="separate"``: three-way splits)."""
        return from_names(TreeParams, self.get_params(), missing_split=missing_split(self.missing),
                          **self.tree_fixed)

    def check_data(self, params, train, valid, init_score) -> None:
        if init_score is not None and getattr(params, "boost", None) is None:
            raise ParameterError(f"{type(self).__name__} takes no init_score")
        boost = getattr(params, "boost", None)
        if train.weight is not None and boost is not None:
            weightless = unweighted_parts(boost)
            if weightless:
                raise ParameterError(f"{type(self).__name__} with {weightless[0]} cannot weigh its rows: drop "
                                     "the weights (sample_weight; the CLI's --sample-weight), or choose "
                                     "another setting")
        super().check_data(params, train, valid, None)

    def needs_validation(self, params) -> list[str]:
        """Also: early stopping and the overfitting tolerance read the validation metric."""
        boost = getattr(params, "boost", None)
        needs = super().needs_validation(params)
        if boost is not None and boost.early_stopping_rounds:
            needs.append("early stopping (early_stopping_rounds)")
        if boost is not None and boost.overfit_tolerance is not None:
            needs.append("the overfitting tolerance (overfit_tolerance)")
        return needs

    def _model_params(self) -> dict:
        """``get_params()`` as stored in the model file (a prior model is stored as a model)."""
        params = self.get_params()
        if params.get("init_model") is not None and not isinstance(params["init_model"], str):
            params["init_model"] = "<prior model, stored in the model file>"
        return with_resolved_costs(params, getattr(self, "feature_costs_", None))


def unweighted_parts(boost) -> list:
    """What of the boosting ``boost`` counts rows where a weighted fit would need weights (each a
    phrase; empty: every part honours ``sample_weight``)."""
    parts = []
    if boost.tree.split_gain == "least_squares":
        parts.append("split_gain='least_squares' (its splits count rows, every hessian 1)")
    if boost.step == "oc":
        parts.append("step='oc' (its trees are least-squares fits, every hessian 1)")
    if boost.searches_step and boost.step_on == "train":
        parts.append(f"step={boost.step!r} on the training set (its line search maximises an unweighted metric)")
    return parts


def estimator_on(engine: Engine, estimator: type) -> type:
    """The class of ``estimator`` (e.g. ``LambdaMART``) bound to ``engine``: how an estimator that
    holds an engine makes the estimators it needs (a bag's members, IGBRT's forest, the domain
    classifier of transfer).

    The twins declare their classes (``twinrank.fast.rankers`` binds every fast one); for an engine
    nobody declared a class for (a test's recording engine), the subclass is made on first use.
    """
    if (engine, estimator.__name__) not in _ON_ENGINE:
        type(estimator.__name__, (estimator,), {"engine": engine, "__module__": estimator.__module__,
                                                "__doc__": estimator.__doc__})  # registers itself
    return _ON_ENGINE[engine, estimator.__name__]


def with_feature_names(model, names):
    """``model`` with ``names`` (a DataFrame's column names, or None) stored among its params."""
    if names is not None:
        model.params["feature_names_in"] = [str(name) for name in names]
    return model


def with_resolved_costs(params: dict, costs) -> dict:
    """``params`` with ``feature_costs`` as the costs the fit used (a list; a costs file read)."""
    if "feature_costs" in params:
        params["feature_costs"] = None if costs is None else [float(c) for c in costs]
    return params


def all_trees(model: Ensemble) -> list:
    """Every tree ``model`` scores with: its prior model's (recursively), then its own."""
    return ([] if model.init_model is None else all_trees(model.init_model)) + list(model.trees)


def truncated(model: Ensemble, n_trees: int | None) -> Ensemble:
    """``model`` keeping its first ``n_trees`` trees (all of them for None)."""
    if n_trees is None:
        return model
    if isinstance(n_trees, bool) or not isinstance(n_trees, (int, np.integer)) or n_trees < 0:
        raise ParameterError(f"n_trees must be None or an integer >= 0, got {n_trees!r}")
    if model.snapshots and n_trees not in (0, model.n_trees, *model.snapshot_sizes):
        raise ParameterError(f"n_trees={n_trees}: this {model.algorithm} model scores at its snapshot sizes "
                             f"{model.snapshot_sizes} and its final size {model.n_trees} only")
    if n_trees > model.n_trees and not model.snapshots:
        raise ParameterError(f"n_trees={n_trees} but the model has {model.n_trees} trees")
    return model.truncated(int(n_trees))


def _transformed(data, fitted, predict_ensemble):
    """``data`` (a Dataset, a list of named Datasets, or None) with its missing values filled by ``fitted``."""
    if isinstance(data, list):
        return [(name, _transformed(d, fitted, predict_ensemble)) for name, d in data]
    return None if data is None else dataclasses.replace(data, X=fitted.transform(data.X, predict_ensemble))


def evals_result(history: dict) -> dict:
    """The metric series of a history, ``{"valid": {"ndcg@10": [...]}}``: every key ``"<set>:<metric>"``
    split at its last ``:`` (other keys, ``"alpha"``, ``"size"``, are not metrics)."""
    result = {}
    for key, values in history.items():
        if ":" in key:
            name, metric = key.rsplit(":", 1)
            result.setdefault(name, {})[metric] = values
    return result


def with_progress(callback, verbose: int, label: str = ""):
    """Wrap ``callback`` so that every ``verbose``-th round is also printed to stderr.

    A line shows ``[label iteration]``, the record's metric values (none without an
    ``eval_set`` or ``eval_train``) and the seconds since the wrapping.
    """
    if not verbose:
        return callback
    start = time.perf_counter()

    def report(iteration, record):
        if iteration % verbose == 0:
            values = "".join(f"{k}={v:.5f}  " for k, v in record.items())
            print(f"[{label}{iteration}] {values}{time.perf_counter() - start:.1f} s",
                  file=sys.stderr)
        return callback is not None and callback(iteration, record)
    return report


def as_model(init_model) -> Ensemble | None:
    """A prior model from ``None``, an Ensemble, a fitted estimator or a model file path."""
    if init_model is None or isinstance(init_model, Ensemble):
        return init_model
    if isinstance(init_model, RankerEstimator):
        init_model = init_model._fitted_model()
        if isinstance(init_model, Ensemble):
            return init_model
    if hasattr(init_model, "algorithm"):  # a loaded model that is not a sum of trees (McRank, a bag)
        raise ModelFormatError(f"an {init_model.algorithm} model cannot be a prior model (a sum of trees is "
                               "needed: LambdaMART, GBRT, a random forest, IGBRT or DART)")
    if not isinstance(init_model, (str, os.PathLike)):
        raise ParameterError(f"init_model must be a model file, an Ensemble or a fitted estimator, "
                             f"got {type(init_model).__name__}")
    model = load_model(init_model)
    if not isinstance(model, Ensemble):
        raise ModelFormatError(f"{init_model}: an {model.algorithm} model cannot be a prior model (a sum of "
                               "trees is needed)")
    return model


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):
        return a is b

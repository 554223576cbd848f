"""What every twinrank estimator shares: scikit-learn parameter handling, data coercion, save/load.

An estimator class is written once per twin; the fast class only swaps the twin's
kernels (``_engine``) and may run on several threads (``_threads``).
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
import sys
import time

import numpy as np

from .data import Dataset
from .errors import ParameterError
from .missing import SPLIT_STRATEGIES, MissingValues, check_strategy
from .model import Ensemble
from .params import TreeParams


class RankerEstimator:
    """Base class: ``get_params`` / ``set_params`` from the keyword-only ``__init__`` signature."""

    _engine = None  # a namespace of the twin's modules, set by each concrete class

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

    def _threads(self):
        """Context in which kernels run (the fast twin sets numba's thread count)."""
        return contextlib.nullcontext()

    def predict(self, X) -> np.ndarray:
        """Scores of the rows of ``X`` (an array of shape (n_rows, n_features) or a Dataset)."""
        model = self._fitted_model()
        X = X.X if isinstance(X, Dataset) else np.asarray(X, dtype=np.float32)
        with self._threads():
            return self._engine.predict.predict_ensemble(model, X)

    def save(self, path) -> None:
        """Write the fitted model as versioned JSON, atomically."""
        self._fitted_model().save(path)

    @classmethod
    def load(cls, path) -> "RankerEstimator":
        """An estimator holding the model of a twinrank model file (either twin wrote it)."""
        model = Ensemble.load(path)
        names = set(cls._param_names())
        est = cls(**{k: v for k, v in model.params.items() if k in names and k != "init_model"})
        est._set_fitted(model)
        return est

    def _set_fitted(self, model: Ensemble) -> None:
        self.model_ = model
        self.n_features_in_ = model.n_features
        self.best_iteration_ = model.best_iteration
        self.history_ = model.history

    def _fitted_model(self) -> Ensemble:
        if not hasattr(self, "model_"):
            raise ParameterError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self.model_


class BoostedRanker(RankerEstimator):
    """Base of the boosted estimators: their tree parameters and progress reporting."""

    def tree_params(self) -> TreeParams:
        """The validated :class:`TreeParams` of this estimator (``missing="separate"``: three-way splits)."""
        return TreeParams(max_leaves=self.max_leaves, max_depth=self.max_depth,
                          min_samples_leaf=self.min_samples_leaf,
                          min_hessian_in_leaf=self.min_hessian_in_leaf, lambda_l2=self.lambda_l2,
                          feature_fraction=self.feature_fraction,
                          missing_split="separate" if self.missing == "separate" else "learn")

    def _missing_fitted(self, train: Dataset, valid: Dataset | None):
        """Fit the ``missing`` strategy on ``train``: ``(train, valid)`` with it applied, and the fit.

        The fit is None for ``"learn"`` and ``"separate"`` (nothing to apply: the grower
        handles NaN, :meth:`tree_params`).
        """
        check_strategy(self.missing)
        if self.missing in SPLIT_STRATEGIES:
            return train, valid, None
        fitted = self._engine.missing.fit_missing(train.X, self.missing)
        return (_transformed(train, fitted), None if valid is None else _transformed(valid, fitted),
                fitted)

    def _model_params(self) -> dict:
        """``get_params()`` as stored in the model file (a prior model is stored as a model)."""
        params = self.get_params()
        if params.get("init_model") is not None and not isinstance(params["init_model"], str):
            params["init_model"] = "<prior model, stored in the model file>"
        return params


def with_missing(model: Ensemble, fitted: MissingValues | None) -> Ensemble:
    """``model`` storing the fitted missing-value strategy (scoring applies it to every ``X``)."""
    model.missing = None if fitted is None else fitted.to_dict()
    return model


def _transformed(data: Dataset, fitted: MissingValues) -> Dataset:
    return dataclasses.replace(data, X=fitted.transform(data.X))


def first_eval_set(eval_set):
    """The first entry of ``eval_set`` (``(X, y, qid)`` or a Dataset) as a Dataset, or None."""
    if not eval_set:
        return None
    first = eval_set[0]
    return as_dataset(*first, what="eval_set") if isinstance(first, tuple) else as_dataset(first)


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
        if callback is not None:
            callback(iteration, record)
    return report


def as_dataset(X, y=None, qid=None, *, what: str = "training data") -> Dataset:
    """A Dataset from a Dataset, or from ``X, y, qid`` arrays (rows of a query contiguous)."""
    if isinstance(X, Dataset):
        if y is not None or qid is not None:
            raise ParameterError(f"{what}: give a Dataset or X, y, qid arrays, not both")
        return X
    if y is None or qid is None:
        raise ParameterError(f"{what}: X, y and qid are all needed (or pass a Dataset)")
    return Dataset.from_qid(X, y, qid)


def as_model(init_model) -> Ensemble | None:
    """A prior model from ``None``, an Ensemble, a fitted estimator or a model file path."""
    if init_model is None or isinstance(init_model, Ensemble):
        return init_model
    if isinstance(init_model, RankerEstimator):
        return init_model._fitted_model()
    return Ensemble.load(init_model)


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):
        return a is b

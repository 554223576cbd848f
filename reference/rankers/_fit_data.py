"""What an estimator's ``fit``, ``predict`` and ``score`` accept, read into :class:`Dataset` s.

The training data are a Dataset, or arrays ``X, y`` with ``qid`` (scikit-learn's and XGBoost's:
the query of every row, rows of a query contiguous) or ``group`` (LightGBM's ``LGBMRanker``:
the size of every query, in row order). ``sample_weight`` weighs the training rows, one weight
per row (LightGBM's) or one per query (XGBoost's ``XGBRanker``), the query's weight then given
to each of its rows (:class:`~twinrank.reference.losses.objectives.Loss`).

``X`` may be a pandas DataFrame (:func:`~twinrank.reference.io.data.frame_features`): its
column names, when they are strings, are the estimator's ``feature_names_in_``, and ``predict``,
``score`` and the eval sets refuse a DataFrame whose columns are not those, in that order
(:func:`check_feature_names`). Validation data
(``eval_set``) are a list of ``(X, y, qid)`` tuples or Datasets, each scored after every
tree under its name (``eval_names``; by default ``"valid"``, ``"valid_1"``, ``"valid_2"``,
...): the history key ``"valid:ndcg@10"`` is the first set's NDCG@10.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from twinrank.reference.errors import ParameterError, TwinrankWarning
from twinrank.reference.io.data import Dataset, eval_set_name, frame_names, is_frame


def as_dataset(X, y=None, qid=None, *, group=None, sample_weight=None, what: str = "training data") -> Dataset:
    """A Dataset from a Dataset, or from ``X, y`` arrays with ``qid`` or ``group``; weighted by
    ``sample_weight`` (:func:`row_weights`) when given."""
    if isinstance(X, Dataset):
        if y is not None or qid is not None or group is not None:
            raise ParameterError(f"{what}: give a Dataset or X, y, qid (or group) arrays, not both")
        data = X
    elif qid is not None and group is not None:
        raise ParameterError(f"{what}: give qid (the query of every row) or group (the size of every query), "
                             "not both")
    elif y is None or (qid is None and group is None):
        raise ParameterError(f"{what}: X, y and qid (or group, the query sizes) are all needed (or pass a Dataset)")
    else:
        data = Dataset.from_qid(X, y, qid) if qid is not None else Dataset.from_group(X, y, group)
    if sample_weight is None:
        return data
    if data.weight is not None:
        raise ParameterError(f"{what}: the Dataset has weights already; give them there or as sample_weight, "
                             "not both")
    return dataclasses.replace(data, weight=row_weights(sample_weight, data.query_sizes))


def row_weights(sample_weight, query_sizes) -> np.ndarray:
    """Every row's weight from ``sample_weight``: one weight per row (LightGBM's convention), or one per
    query (XGBoost's for ranking), repeated over the query's rows. (With as many queries as rows every
    query is one row, and the two readings agree.)"""
    w = np.asarray(sample_weight, dtype=np.float64)
    n_rows, n_queries = int(query_sizes.sum()), len(query_sizes)
    if w.ndim == 1 and len(w) == n_rows:
        return w
    if w.ndim == 1 and len(w) == n_queries:
        return np.repeat(w, query_sizes)
    raise ParameterError(f"sample_weight has shape {w.shape}: give one weight per row ({n_rows}, LightGBM's "
                         f"convention) or one per query ({n_queries}, XGBoost's)")


def check_feature_names(X, fitted_names, what: str) -> None:
    """Refuse ``X`` if it is a DataFrame whose columns are not ``fitted_names`` (the fit's
    ``feature_names_in_``), in that order, naming the first column that differs and its position
    (XGBoost's ``feature_names mismatch``). A DataFrame given to a model fitted without names,
    or an array to a model fitted with them, is scored by position, with a warning (scikit-learn's rule)."""
    names = frame_names(X)
    if names is None and fitted_names is None:
        return
    if fitted_names is None:
        warnings.warn(f"{what} has feature names, but the model was fitted without them: its columns are "
                      "read by position", TwinrankWarning, stacklevel=3)
        return
    if names is None:
        if is_frame(X) or not isinstance(X, Dataset):
            warnings.warn(f"{what} has no feature names, but the model was fitted with them "
                          "(feature_names_in_): its columns are read by position", TwinrankWarning, stacklevel=3)
        return
    for j in range(max(len(names), len(fitted_names))):
        have = names[j] if j < len(names) else None
        want = fitted_names[j] if j < len(fitted_names) else None
        if have != want:
            found = "no column" if have is None else f"column {have!r}"
            expected = "no column" if want is None else repr(want)
            raise ParameterError(f"feature names mismatch: {what} has {found} at position {j}, the fit had {expected} "
                                 f"there (feature_names_in_, {len(fitted_names)} columns); give the fit's columns "
                                 "in the fit's order")


def eval_sets(eval_set, eval_names=None, feature_names=None) -> list | None:
    """``eval_set`` as ``[(name, Dataset), ...]`` (None for none), the loops' validation sets.

    ``eval_set`` is a list of ``(X, y, qid)`` tuples or Datasets (scikit-learn's and
    LightGBM's convention); a lone Dataset is taken as the list of it. ``eval_names``
    names them, one name each, as LightGBM's ``eval_names``; by default the first is
    ``"valid"`` and the ``i``-th ``"valid_i"``. A name is a non-empty string without ``:``
    (the history's keys are ``"<name>:<metric>"``), not ``"train"`` (``eval_train``'s), and
    not given twice. An eval set given as a DataFrame must have the training columns
    ``feature_names`` (:func:`check_feature_names`).
    """
    if isinstance(eval_set, Dataset):
        eval_set = [eval_set]
    if eval_set is None or (isinstance(eval_set, (list, tuple)) and len(eval_set) == 0):
        if eval_names is not None and len(eval_names) > 0:
            raise ParameterError(f"eval_names={list(eval_names)!r} names no eval_set")
        return None
    if not isinstance(eval_set, (list, tuple)) or not all(isinstance(e, (tuple, Dataset)) for e in eval_set):
        inner = next((e for e in eval_set if not isinstance(e, (tuple, Dataset))), None) \
            if isinstance(eval_set, (list, tuple)) else None
        raise ParameterError(f"eval_set must be a list of (X, y, qid) tuples or Datasets, e.g. "
                             f"eval_set=[valid]; got {type(eval_set).__name__}"
                             + (f" of {type(inner).__name__}" if inner is not None else ""))
    names = [eval_set_name(i) for i in range(len(eval_set))] if eval_names is None else list(eval_names)
    _check_names(names, len(eval_set))
    for name, entry in zip(names, eval_set):
        if isinstance(entry, tuple) and entry and is_frame(entry[0]):
            check_feature_names(entry[0], feature_names, f"eval_set {name!r}")
    return [(name, as_dataset(*entry, what=f"eval_set {name!r}") if isinstance(entry, tuple) else entry)
            for name, entry in zip(names, eval_set)]


def _check_names(names: list, n_sets: int) -> None:
    if len(names) != n_sets:
        raise ParameterError(f"eval_names has {len(names)} names for {n_sets} eval sets: give one name per set")
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name or ":" in name or name == "train":
            raise ParameterError(f"eval_names[{i}] = {name!r}: a name is a non-empty string without ':' and not "
                                 "'train' (the training set's metrics, eval_train=True)")
        if name in names[:i]:
            raise ParameterError(f"eval_names names {name!r} twice")

"""The arguments of :func:`~twinrank.reference.trees.tree.grow_tree`, checked once for both twins; defaults filled."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from twinrank.reference.constants import MISSING_BIN
from twinrank.reference.errors import ParameterError
from twinrank.reference.params import TreeParams


def _checked_inputs(binned, gradients, hessians, thresholds, params, rows, feature_mask,
                   feature_cost) -> SimpleNamespace:
    """Validate :func:`grow_tree`'s inputs (shared by both twins); fill the defaults."""
    if not isinstance(params, TreeParams):
        raise ParameterError(f"params must be a TreeParams, got {type(params).__name__}")
    if not isinstance(binned, np.ndarray) or binned.ndim != 2 or binned.dtype != np.uint8:
        raise ParameterError("binned must be a 2-D uint8 array from apply_bins")
    n_rows, n_features = binned.shape
    if len(thresholds) != n_features:
        raise ParameterError(f"binned has {n_features} features but thresholds has {len(thresholds)}")
    n_bins = np.array([len(t) + 1 for t in thresholds], dtype=np.int64)  # (n_features,)
    if np.any(n_bins > MISSING_BIN):
        raise ParameterError(f"a feature has more than {MISSING_BIN - 1} thresholds")
    gradients = _per_row("gradients", gradients, n_rows)
    hessians = _per_row("hessians", hessians, n_rows)
    rows = _checked_rows(rows, n_rows)
    max_leaves = params.leaves_for(len(rows))  # room for the leaves these rows can fill
    n_nodes = 2 * max_leaves - 1
    if feature_mask is None:
        feature_mask = np.ones((n_nodes, n_features), dtype=bool)
    feature_mask = np.asarray(feature_mask)
    if feature_mask.ndim != 2 or feature_mask.shape[0] < n_nodes or feature_mask.shape[1] != n_features or (
            feature_mask.dtype != bool):
        raise ParameterError(f"feature_mask must be a bool array of shape ({n_nodes}, {n_features}) (or more "
                             f"rows), got {feature_mask.dtype} {feature_mask.shape}")
    cost = np.zeros(n_features) if feature_cost is None else np.asarray(feature_cost, dtype=np.float64)
    if cost.shape != (n_features,) or not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise ParameterError(f"feature_cost must be {n_features} finite non-negative numbers")
    return SimpleNamespace(
        binned=binned, gradients=gradients, hessians=hessians, thresholds=thresholds,
        params=params, rows=rows, feature_mask=feature_mask[:n_nodes], n_bins=n_bins, max_leaves=max_leaves,
        penalty=params.cost_lambda * cost,  # (n_features,)
        min_rows=params.min_rows_in_leaf(len(rows)),
        max_depth=np.inf if params.max_depth is None else params.max_depth,
    )


def checked_leaf_of_row(leaf_of_row, n_rows: int):
    """``grow_tree``'s ``leaf_of_row`` output: None, or an int32 array of shape (n_rows,) (both twins)."""
    if leaf_of_row is None:
        return None
    if not isinstance(leaf_of_row, np.ndarray) or leaf_of_row.dtype != np.int32 or leaf_of_row.shape != (n_rows,):
        raise ParameterError(f"leaf_of_row must be an int32 array of shape ({n_rows},), got "
                             f"{getattr(leaf_of_row, 'dtype', type(leaf_of_row).__name__)} "
                             f"{getattr(leaf_of_row, 'shape', '')}")
    return leaf_of_row


def _per_row(name: str, values, n_rows: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n_rows,):
        raise ParameterError(f"{name} has shape {values.shape}, expected ({n_rows},)")
    if not np.isfinite(values.sum()) and not np.all(np.isfinite(values)):  # (a finite sum: every value finite)
        raise ParameterError(f"{name}[{np.flatnonzero(~np.isfinite(values))[0]}] is not finite")
    return values


def _checked_rows(rows, n_rows: int) -> np.ndarray:
    """The rows, int64; none given: every row, int32 while the ids fit (half the memory of a round's rows)."""
    if rows is None and n_rows > 0:
        return np.arange(n_rows, dtype=np.int32 if n_rows < 2**31 else np.int64)
    rows = np.asarray(np.arange(n_rows) if rows is None else rows)
    if rows.ndim != 1 or rows.dtype.kind not in "iu" or len(rows) == 0:
        raise ParameterError(f"rows must be a non-empty 1-D integer array, got {rows.dtype} {rows.shape}")
    if rows.min() < 0 or rows.max() >= n_rows:
        raise ParameterError(f"rows must be in [0, {n_rows}), got values in [{rows.min()}, {rows.max()}]")
    return rows.astype(np.int64, copy=False)

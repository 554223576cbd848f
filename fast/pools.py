"""Twin of `twinrank.reference.pools`: pools and the variance experiment compute on the twin of the
bag (or of the estimators) they are given, so the same functions serve both twins."""
from __future__ import annotations

from twinrank.reference.pools import KINDS, ModelPool, VarianceTable, bag_curve, variance_experiment

__all__ = ["KINDS", "ModelPool", "bag_curve", "variance_experiment", "VarianceTable"]

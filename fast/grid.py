"""Grid search of `twinrank.reference.grid`, shared by both twins.

The search trains the estimator it is given (``twinrank.fast.LambdaMART`` runs on the
fast kernels) through the runs layer; nothing in it is a kernel.
"""
from __future__ import annotations

from twinrank.reference.grid import GridResult, configurations, grid_search, overfitting_curve

__all__ = ["configurations", "grid_search", "GridResult", "overfitting_curve"]

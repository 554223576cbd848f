"""The runs layer of `twinrank.reference.runs`, shared by both twins.

The layer holds no kernel: each run trains the estimator it is given, so fast
runs are the same plan executed with a fast estimator (``twinrank.fast.LambdaMART``)
and the runs' models run on the engine that estimator names.
"""
from __future__ import annotations

from twinrank.reference.runs import (DASK_INSTALL, DaskExecutor, Fold, InProcess, ProcessPool, Results, Run,
                                     ScoreMatrix, derive_seed, execute, make_executor, plan, read_folds)

__all__ = ["Fold", "Run", "Results", "ScoreMatrix", "derive_seed", "plan", "execute",
           "read_folds", "InProcess", "ProcessPool", "DaskExecutor", "make_executor",
           "DASK_INSTALL"]

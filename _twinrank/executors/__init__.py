"""Executors: many independent trainings at once, in local processes or on a Dask cluster.

The runs layer (:func:`twinrank.reference.ensembles.runs.execute`) trains a plan of runs with an
*executor*, an object with ``parallel`` (whether several runs train at once, each then
single-threaded) and ``map(tasks, folds)`` (the finished runs, in any order). The reference's
:class:`~twinrank.reference.ensembles.runs.InProcess` trains one run after another; this folder
holds the executors that are infrastructure rather than algorithm: :class:`ProcessPool` and
:class:`DaskExecutor`. :func:`make_executor` picks one from the options of ``twinrank grid``,
``twinrank diagnose`` and ``BLMART``. Every executor gives the same table: a run's seed is a
function of the plan, never of the worker.
"""
from __future__ import annotations

from twinrank.executors.dask_cluster import DASK_INSTALL, DaskExecutor
from twinrank.executors.processes import ProcessPool
from twinrank.reference._param_checks import check_processes
from twinrank.reference.ensembles.runs import InProcess
from twinrank.reference.errors import ParameterError

__all__ = ["make_executor", "InProcess", "ProcessPool", "DaskExecutor", "DASK_INSTALL"]


def make_executor(*, n_jobs: int | None = None, workers: int | None = None,
                  scheduler: str | None = None, client=None):
    """The executor of these options (at most one): in process when none is given."""
    given = [name for name, v in (("n_jobs", n_jobs), ("workers", workers), ("scheduler", scheduler),
                                  ("client", client)) if v is not None]
    if len(given) > 1:
        raise ParameterError(f"give at most one of n_jobs, workers, scheduler, client; got {', '.join(given)}")
    check_processes("n_jobs", n_jobs)
    check_processes("workers", workers)
    if client is not None or workers is not None or scheduler is not None:
        return DaskExecutor(client, workers=workers, scheduler=scheduler)
    if n_jobs is not None and n_jobs > 1:
        return ProcessPool(n_jobs)
    return InProcess()

"""``n_jobs`` runs at once in local worker processes (started fresh: ``spawn``)."""
from __future__ import annotations

from twinrank.reference.ensembles.runs import Outcome, Task, train_run
from twinrank.reference.errors import ParameterError

__all__ = ["ProcessPool"]

_WORKER_FOLDS: list = []  # a pool worker's folds, set once by its initializer


def _set_worker_folds(folds: list) -> None:
    _WORKER_FOLDS[:] = folds


def _train_in_pool(task: Task) -> Outcome:
    return train_run(task, _WORKER_FOLDS[task.run.fold])


class ProcessPool:
    """``n_jobs`` local worker processes (started fresh, ``spawn``; each gets the folds once).

    Fresh processes import the main module, as Python's ``multiprocessing`` does: in a script,
    create the pool's runs under ``if __name__ == "__main__":``.
    """

    parallel = True

    def __init__(self, n_jobs: int):
        if not isinstance(n_jobs, int) or n_jobs < 1:
            raise ParameterError(f"n_jobs must be an integer >= 1, got {n_jobs!r}")
        self.n_jobs = n_jobs

    def map(self, tasks: list, folds: list):
        import concurrent.futures
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # no fork of a process running numba's threads
        with concurrent.futures.ProcessPoolExecutor(self.n_jobs, mp_context=context,
                                                    initializer=_set_worker_folds,
                                                    initargs=(folds,)) as pool:
            for future in concurrent.futures.as_completed([pool.submit(_train_in_pool, t) for t in tasks]):
                yield future.result()

    def close(self) -> None:
        pass

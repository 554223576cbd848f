"""``n_jobs`` runs at once in local worker processes (started fresh: ``spawn``)."""
from __future__ import annotations

import signal

from twinrank.executors._interrupts import sigint_ignored
from twinrank.reference.ensembles.runs import Outcome, Task, train_run
from twinrank.reference.errors import ParameterError

__all__ = ["ProcessPool"]

_WORKER_FOLDS: list = []  # a pool worker's folds, set once by its initializer


def _start_worker(folds: list) -> None:
    """A pool worker's start: its folds, and Ctrl-C left to the parent, which stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_FOLDS[:] = folds


def _train_in_pool(task: Task) -> Outcome:
    return train_run(task, _WORKER_FOLDS[task.run.fold])


class ProcessPool:
    """``n_jobs`` local worker processes (started fresh, ``spawn``; each gets the folds once).

    Fresh processes import the main module, as Python's ``multiprocessing`` does: in a script,
    create the pool's runs under ``if __name__ == "__main__":``.

    Ctrl-C reaches the parent alone (the workers start with SIGINT ignored, so a terminal's
    Ctrl-C, sent to every process of the job, prints nothing in them); the parent then cancels
    the runs not started and ends the workers, so no run goes on in the background and no
    worker outlives the parent. So does any other stop of :meth:`map` (an error, its consumer
    closing it).
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
        pool = concurrent.futures.ProcessPoolExecutor(self.n_jobs, mp_context=context, initializer=_start_worker,
                                                      initargs=(folds,))
        try:
            with sigint_ignored():  # the workers start (at submit) ignoring Ctrl-C, before their initializer
                futures = [pool.submit(_train_in_pool, t) for t in tasks]
            for future in concurrent.futures.as_completed(futures):
                yield future.result()
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown()

    def close(self) -> None:
        pass


def _stop(pool) -> None:
    """Cancel the pool's runs not started and end its workers now (their runs are lost)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    workers = list((pool._processes or {}).values())  # before shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join()

"""Runs on a ``dask.distributed`` cluster: a ``LocalCluster`` started here, or a scheduler's address."""
from __future__ import annotations

import contextlib

from twinrank.executors._interrupts import quiet, quiet_worker, sigint_ignored
from twinrank.reference.ensembles.runs import train_run
from twinrank.reference.errors import ParameterError

__all__ = ["DaskExecutor", "DASK_INSTALL"]

DASK_INSTALL = ("Dask is not installed; it runs experiments on several workers: "
                "pip install 'twinrank[distributed]' (or pip install 'dask[distributed]')")


class DaskExecutor:
    """Runs on a ``dask.distributed`` cluster: an existing ``client``, a ``scheduler`` address,
    or a ``LocalCluster`` of ``workers`` processes (one thread each) started here and closed
    by :meth:`close`. The folds are scattered to every worker once; Dask reruns the runs of
    a lost worker elsewhere (with the same seed).

    Ctrl-C: the runs not finished are cancelled; the workers of a cluster started here start
    ignoring SIGINT (a terminal's Ctrl-C reaches the parent alone) and are stopped by
    :meth:`close` without the teardown's warnings."""

    parallel = True

    def __init__(self, client=None, *, workers: int | None = None, scheduler: str | None = None):
        try:
            import distributed
        except ImportError:
            raise ParameterError(DASK_INSTALL) from None
        self._own = client is None
        if client is None and scheduler is not None:
            client = distributed.Client(scheduler)
        elif client is None:
            if not isinstance(workers, int) or workers < 1:
                raise ParameterError(f"workers must be an integer >= 1, got {workers!r}")
            with sigint_ignored():  # the workers' processes start ignoring Ctrl-C: the parent stops them
                cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                   dashboard_address=None)
            client = distributed.Client(cluster)
        self.client, self._stopped = client, False

    def map(self, tasks: list, folds: list):
        import distributed

        # fresh keys (hash=False): a second map of the same folds must not share keys that
        # the first map's futures are releasing; broadcast: a lost worker loses no fold
        scattered = self.client.scatter(list(folds), broadcast=True, hash=False)
        futures = [self.client.submit(train_run, t, scattered[t.run.fold], pure=False) for t in tasks]
        try:
            for future in distributed.as_completed(futures):
                yield future.result()
        except BaseException:  # Ctrl-C, an error, the consumer's stop: the runs not finished are cancelled
            self._stop(futures)
            raise

    def _stop(self, futures) -> None:
        """Cancel ``futures``; on a cluster started here, its workers then stop without warnings."""
        self.client.cancel(futures)
        if self._own:
            with contextlib.suppress(Exception):
                self.client.run(quiet_worker)
            self._stopped = True

    def close(self) -> None:
        if self._own:
            with contextlib.ExitStack() as stack:
                if self._stopped:  # after Ctrl-C: no warnings, and a second Ctrl-C cannot cut the teardown
                    stack.enter_context(quiet("distributed"))
                    stack.enter_context(sigint_ignored())
                cluster = getattr(self.client, "cluster", None)
                self.client.close()
                if cluster is not None:
                    cluster.close()

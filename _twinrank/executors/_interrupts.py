"""Ctrl-C and the executors' worker processes: started ignoring it, so that the parent alone stops them."""
from __future__ import annotations

import contextlib
import logging
import signal
import threading


@contextlib.contextmanager
def sigint_ignored():
    """SIGINT ignored in the block (in the main thread; elsewhere nothing changes): a process
    started in it inherits the ignored signal, so a terminal's Ctrl-C, sent to every process of
    the job, interrupts the parent alone. A Ctrl-C in the block is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def quiet(logger: str):
    """The logger ``logger`` prints errors only in the block: a teardown's expected warnings
    (runs cancelled, workers ended) say nothing the one interrupted line does not."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def quiet_worker() -> None:
    """Run on a Dask worker being stopped: its ``distributed`` logger prints errors only."""
    logging.getLogger("distributed").setLevel(logging.ERROR)

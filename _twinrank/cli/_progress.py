"""A one-line progress display for long training runs (stderr; a line per update when not a TTY)."""
from __future__ import annotations

import sys
import time

from twinrank.fast.runtime._compile_notice import NOTICE


class Progress:
    """Shows ``iteration/total``, the latest metrics, the best validation value so far and the time.

    ``unit`` names what is counted: trees, or X-DART's iterations (an iteration adds a tree or
    prunes the dropped ones, so there are more iterations than trees).

    A record may be empty (no validation set, no ``eval_train``): the line then shows
    the tree count and the time only. With metrics, the line names their evaluation
    ``convention`` (``lightgbm``, ``ranklib``, ...) when one is given: the same
    ranking scores differently under each.
    """

    def __init__(self, total: int, stream=None, every: int = 10, convention: str | None = None,
                 unit: str = "trees"):
        self.total, self.stream, self.convention, self.unit = total, stream or sys.stderr, convention, unit
        self.every = 1 if self.stream.isatty() else every
        self.best = None
        self.start = time.perf_counter()

    def __call__(self, iteration: int, record: dict) -> None:
        valid = [v for k, v in record.items() if k.startswith("valid:")]
        if valid and (self.best is None or valid[0] > self.best[1]):
            self.best = (iteration, valid[0])
        if iteration % self.every and iteration != self.total:
            return
        parts = [f"[{iteration:>5}/{self.total}]", *(f"{k} {v:.4f}" for k, v in record.items())]
        if self.best:
            parts.append(f"best {self.best[1]:.4f} @ {self.best[0]}")
        if record and self.convention:
            parts.append(f"({self.convention} convention)")
        seconds = max(time.perf_counter() - self.start, 1e-9)
        parts.append(f"{seconds:.1f} s ({iteration / seconds:.1f} {self.unit}/s)")
        line = "  ".join(parts)
        NOTICE.end_line()  # a "compiling kernels" line ends before the first progress line
        if self.stream.isatty():
            self.stream.write("\r" + line.ljust(100))
            self.stream.flush()
        else:
            print(line, file=self.stream)

    def close(self) -> None:
        if self.stream.isatty():
            self.stream.write("\n")

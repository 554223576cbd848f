"""A record of finished runs: a file a search of many runs adds each run to as it ends.

An interrupted search (Ctrl-C, a lost machine, ``kill -9``, a full disk) then loses only the
runs in progress, and resumed, trains only the runs the record does not hold. The record is
JSON lines: the first line names the search's settings, every later line is one finished
run's table row (NaN as ``null``)::

    {"format": "twinrank-runs", "version": 1, "runs": 40, "settings": {"estimator": "...", "n_seeds": 3, ...}}
    {"run": 0, "config": 0, "max_leaves": 7, "fold": "Fold1", ..., "valid:ndcg@3": 0.51, "error": ""}

A run's line is written by one ``write`` of the whole line to the file opened for appending,
and flushed to the disk (``fsync``) before the next run is recorded. A last line cut short
(the process killed during that write, a full disk) is dropped when the record is read
again; any other line that is not a run's row makes the record unreadable, naming the line.
A run recorded twice (a failed run tried again) counts by its last line.

A record is resumed only by the search it was written for: the settings (the estimator, the
grid, a fingerprint of the folds' data, the seeds, the metric, ...) must be equal, or the
resume is refused, naming each setting that differs.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.io._atomic import atomic_output

__all__ = ["RunRecord", "FORMAT", "fold_fingerprints"]

FORMAT = "twinrank-runs"


class RunRecord:
    """The record at ``path`` of a search of ``n_runs`` runs with ``settings`` (JSON values).

    ``resume=False`` starts a new record, refusing to replace the record of an unfinished
    search (its finished runs would be lost); ``resume=True`` reads the record there (a
    missing one is started), refusing one of other settings. ``rows`` holds the runs recorded,
    ``{run index: row}``; :meth:`append` records one more.
    """

    def __init__(self, path, settings: dict, n_runs: int, *, resume: bool):
        self.path, self.n_runs = os.fspath(path), n_runs
        self.settings = _plain(settings)
        self.rows = {}
        if resume and os.path.exists(self.path):
            self._read()
        else:
            if os.path.exists(self.path):
                self._refuse_unfinished()
            with atomic_output(self.path) as f:
                f.write(_line({"format": FORMAT, "version": 1, "runs": n_runs, "settings": self.settings}))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    @property
    def finished(self) -> dict:
        """``{run index: row}`` of the runs recorded without an error (a failed run is tried again)."""
        return {i: row for i, row in self.rows.items() if not row["error"]}

    def append(self, row: dict) -> None:
        """Record one finished run's ``row``: one write of one line, flushed to the disk."""
        line = _line({k: None if isinstance(v, float) and np.isnan(v) else v for k, v in row.items()})
        written = os.write(self._fd, line)
        if written != len(line):  # a full disk: the line is cut short, and dropped when read again
            raise OSError(errno.ENOSPC, f"run {row['run']} cut short: {os.strerror(errno.ENOSPC)}", self.path)
        os.fsync(self._fd)
        self.rows[row["run"]] = row

    def close(self) -> None:
        os.close(self._fd)

    def row_of(self, run) -> dict:
        """The recorded row of ``run`` (a :class:`~twinrank.reference.ensembles.runs.Run`) as
        :func:`~twinrank.reference.ensembles.runs.train_run` made it: NaN metrics, the plan's parameters."""
        row = self.rows[run.index]
        return {k: run.params[k] if k in run.params else float("nan") if v is None and ":" in k else v
                for k, v in row.items()}

    def _read(self) -> None:
        with open(self.path, "rb") as f:
            lines = f.read().split(b"\n")
        if lines[-1]:  # the last line cut short: dropped, and cut off the file before the next append
            os.truncate(self.path, sum(len(line) + 1 for line in lines[:-1]))
        lines = lines[:-1]
        head = _parsed(self.path, 1, lines[0]) if lines else None
        if not isinstance(head, dict) or head.get("format") != FORMAT or head.get("version") != 1:
            raise ParameterError(f"{self.path}:1: not a record of runs (its first line names the format "
                                 f"{FORMAT!r}, version 1)")
        differ = _differences({"runs": head.get("runs"), **(head.get("settings") or {})},
                              {"runs": self.n_runs, **self.settings})
        if differ:
            raise ParameterError(f"{self.path}: recorded for other settings, so it cannot be resumed: "
                                 f"{'; '.join(differ)} (give another output, or delete the record to start over)")
        for number, line in enumerate(lines[1:], start=2):
            row = _parsed(self.path, number, line)
            if not (isinstance(row, dict) and isinstance(row.get("run"), int) and 0 <= row["run"] < self.n_runs
                    and isinstance(row.get("error"), str)):
                raise ParameterError(f"{self.path}:{number}: not the row of a run of this search")
            self.rows[row["run"]] = row

    def _refuse_unfinished(self) -> None:
        """The search recorded at ``path`` stopped before its last run: refuse to lose its runs."""
        with open(self.path, "rb") as f:
            values = [_loaded(line) for line in f.read().split(b"\n")]
        if not (isinstance(values[0], dict) and values[0].get("format") == FORMAT):
            raise ParameterError(f"{self.path}: exists and is not a record of runs; move it away (it would be "
                                 "replaced by this search's record)")
        planned = values[0].get("runs")
        done = {v.get("run") for v in values[1:] if isinstance(v, dict)}
        if isinstance(planned, int) and len(done) < planned:
            raise ParameterError(f"{self.path} records {len(done)} of the {planned} runs of a search that stopped "
                                 "before its end: resume it (resume=True; twinrank grid --resume), or delete the "
                                 "record to start over")


def fold_fingerprints(folds: list) -> dict:
    """``{fold name: digest}``: the first 16 hex digits of the SHA-256 of each fold's data (features,
    labels and query boundaries of its training, validation and test sets, and the rows' weights of
    those that have them)."""
    out = {}
    for fold in folds:
        digest = hashlib.sha256()
        for data in (fold.train, fold.valid, fold.test):
            for array in ((None, None, None) if data is None else (data.X, data.y, data.query_offsets)):
                digest.update(b"-" if array is None else np.ascontiguousarray(array).tobytes())
            if data is not None and data.weight is not None:  # unweighted data keep their old digest
                digest.update(b"weight" + np.ascontiguousarray(data.weight).tobytes())
        out[fold.name] = digest.hexdigest()[:16]
    return out


def _differences(recorded, now, where: str = "") -> list:
    """``["n_seeds: 3 in the record, 5 now", ...]``: each setting whose value differs (dicts compared by key)."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        return [text for key in dict.fromkeys([*recorded, *now])
                for text in _differences(recorded.get(key), now.get(key), f"{where}.{key}" if where else key)]
    if recorded == now:
        return []
    return [f"{where or 'settings'}: {json.dumps(recorded)} in the record, {json.dumps(now)} now"]


def _plain(value):
    """``value`` as JSON reads it back (tuples become lists; what JSON has no type for, its repr)."""
    return json.loads(json.dumps(value, default=repr))


def _line(value) -> bytes:
    return (json.dumps(value, default=repr) + "\n").encode()


def _loaded(line: bytes):
    """The JSON value of ``line``, or None."""
    try:
        return json.loads(line)
    except ValueError:
        return None


def _parsed(path, number: int, line: bytes):
    try:
        return json.loads(line)
    except ValueError:
        raise ParameterError(f"{path}:{number}: not a line of JSON") from None

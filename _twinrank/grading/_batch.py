r"""Grading a class: every file read first, a few graded at a time, each verdict handed on as soon as it is known.

:func:`submissions` lists the files of a class (each folder's file of the exercise, or with
``all`` every exercise file a folder holds) and reads every one of them before any student's
code runs: each file is graded as it was when grading started, whatever a classmate's code
does to it meanwhile (:func:`changed` names the files that changed on disk, for a warning).
:func:`grade_class` grades ``jobs`` files at a time, each in a process of its own
(:func:`~twinrank.grading._grader.check`), and hands each :class:`~twinrank.grading._grader.Report`
to ``on_report`` in the order of the files, as soon as it and those before it are graded: the
same order, and the same records, on every machine and with any ``jobs``.
:class:`GradeBook` keeps the CSV of a class up to date, one row more after each file.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from twinrank.grading._grader import Report, check
from twinrank.grading._student import stop_all
from twinrank.grading.exercises import EXERCISES, Exercise
from twinrank.reference.io._atomic import atomic_output

JOBS = 2
"""Files graded at a time: each has a process of its own, the grader runs the fast twin and compares."""


@dataclass(frozen=True)
class Submission:
    """One file to grade (``exercise`` None: a folder without any exercise file), its text as read."""

    exercise: Exercise | None
    directory: str
    source: str | None = None  # None: missing or unreadable (check says why)
    digest: str = ""

    @property
    def path(self) -> Path:
        return Path(self.directory) / f"{self.exercise.name}.py"


def submissions(exercise: Exercise | None, directories) -> list:
    """The files to grade: ``exercise``'s file in each folder, or (None) every exercise file each holds."""
    work = []
    for directory in directories:
        present = [exercise] if exercise else [e for e in EXERCISES if (Path(directory) / f"{e.name}.py").exists()]
        work += [_read(Submission(e, str(directory))) for e in present] or [Submission(None, str(directory))]
    return work


def grade_class(work: list, *, jobs: int = JOBS, on_report=None, **limits) -> list:
    """The report of each submission, ``jobs`` graded at a time (``limits``: :func:`check`'s keywords)."""
    reports = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_grade, submission, limits) for submission in work]
        try:
            for future in futures:
                reports.append(future.result())
                if on_report:
                    on_report(reports[-1])
        except BaseException:  # interrupted: no new student starts, the running ones are killed
            for future in futures:
                future.cancel()
            stop_all()
            raise
    return reports


def changed(work: list) -> list:
    """The paths of the files whose bytes are no longer those graded."""
    return [s.path for s in work if s.exercise and s.source is not None and _digest(s.path) != s.digest]


class GradeBook:
    """A class's grades as CSV (``COLUMNS``), rewritten atomically after each file: a reader, or a
    run cut short, finds every grade so far and never a partial line."""

    COLUMNS = ("path", "exercise", "status", "passed", "examples", "message")

    def __init__(self, path):
        self.path, self.rows = os.path.abspath(path), []
        self._write()  # an unwritable path is refused before anyone is graded

    def add(self, report: Report) -> None:
        record = report.to_dict()
        self.rows.append([record[c] for c in self.COLUMNS])
        self._write()

    def _write(self) -> None:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(self.COLUMNS)
        writer.writerows(self.rows)
        with atomic_output(self.path) as out:
            out.write(text.getvalue().encode("utf-8"))


def _grade(submission: Submission, limits: dict) -> Report:
    if submission.exercise is None:
        return Report("all", submission.directory, "error", message=f"no exercise file in {submission.directory}")
    return check(submission.exercise, submission.directory, source=submission.source, **limits)


def _read(submission: Submission) -> Submission:
    try:
        data = submission.path.read_bytes()
        return Submission(submission.exercise, submission.directory, data.decode("utf-8"),
                          hashlib.sha256(data).hexdigest())
    except (OSError, UnicodeDecodeError):
        return submission


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""

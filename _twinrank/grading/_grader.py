r"""Grading a student's file: run it in a process of its own, compare with the fast twin here, report.

:func:`check` copies the text of ``DIR/NAME.py`` into a process of its own
(:class:`~twinrank.grading._student.StudentProcess`: a fresh interpreter in a temporary
folder, limits on time and memory, its whole process group killed at the end), and calls the
function ``NAME`` there on the exercise's hypothesis strategy. The student's process sends back
only the values the function returned (plain data, :mod:`~twinrank.grading._wire`); the fast
twin's answer and the comparison are computed here, in the grader, which the student's code
never runs in. Hypothesis is set for grading: the seed is the exercise's name (the same examples
on every machine, whatever the grader's code), no example database, ``max_examples`` bounded, no
deadline, every health check off (a slow student function is graded, not refused). On a
disagreement hypothesis shrinks the input;
the last failing call it replays is the smallest, and its input, expected and given values go
into the :class:`Report`. An exception raised by the student's function (``NotImplementedError``
of the stub, ``SystemExit``, ``KeyboardInterrupt``) is a failure like a wrong value, and so is a
call that runs longer than ``call_seconds``, ends the process or exhausts its memory (no
shrinking then: the process is gone). A file that cannot be imported (an error, a loop, or an
exit at import), or that lacks the function, is an ``error`` (exit status 2).
"""
from __future__ import annotations

import copy
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinrank.grading._student import ImportFailed, Stopped, StudentProcess
from twinrank.grading.exercises import Exercise
from twinrank.testing._compare import compare_twins

STATUS_CODES = {"pass": 0, "fail": 1, "error": 2}
CALL_SECONDS = 10.0
"""One call of a student's function may take this long; then the check fails."""
IMPORT_SECONDS = 30.0
"""Importing a student's file may take this long; then it is an error."""
FILE_SECONDS = 300.0
"""Grading one file (its import and every call) may take this long in all; then the check fails."""
MEMORY_MB = 2048
"""The address space of a student's process (Linux)."""
TURN = threading.Lock()
"""Held by the thread grading a file while the grader works (hypothesis, the fast twin, the comparison),
released while it waits for the student's process: files graded on threads overlap their students'
work and never the grader's (CPython 3.11's ``ast``, under numpy's ``.npy`` reader, is not thread-safe)."""


class _Disagreement(AssertionError):
    """The student's function disagreed with the fast twin (or raised) on one input."""


@dataclass
class Report:
    """The verdict on one file: ``status`` is ``pass``, ``fail`` or ``error``."""

    exercise: str
    path: str
    status: str
    examples: int = 0
    graded_by: str = ""
    tolerance: str = ""
    counterexample: dict | None = None  # the smallest failing input, by argument
    expected: dict | None = None  # the fast twin's answer on it, as named arrays
    given: dict | None = None  # the student's (None when it raised)
    message: str = ""  # what differs, what was raised, or why the file cannot be graded
    stdout: str = ""  # what the student's process printed (its first KEPT_BYTES)
    stderr: str = ""

    @property
    def exit_code(self) -> int:
        return STATUS_CODES[self.status]

    def to_dict(self) -> dict:
        """A JSON-ready record (arrays as lists, NaN and infinities as strings)."""
        return {"exercise": self.exercise, "path": self.path, "status": self.status,
                "passed": self.status == "pass", "examples": self.examples, "graded_by": self.graded_by,
                "tolerance": self.tolerance, "message": self.message,
                "counterexample": _jsonable(self.counterexample), "expected": _jsonable(self.expected),
                "given": _jsonable(self.given), "stdout": self.stdout, "stderr": self.stderr}

    def text(self) -> str:
        """The report a student reads."""
        head = f"{self.exercise} ({self.path}): "
        if self.status == "pass":
            return head + (f"pass: {self.examples} generated inputs agree with {self.graded_by} "
                           f"({self.tolerance})")
        if self.status == "error":
            return head + f"ERROR: {self.message}" + self._printed()
        lines = [head + f"FAIL ({self.examples} calls, shrinking included): {self.message}",
                 "smallest failing input:"]
        lines += [f"  {name} = {_show(value)}" for name, value in (self.counterexample or {}).items()]
        lines.append(f"expected ({self.graded_by}): {_show_parts(self.expected)}")
        lines.append("given: " + ("(raised, see above)" if self.given is None else _show_parts(self.given)))
        return "\n".join(lines) + self._printed()

    def _printed(self) -> str:
        """The end of what the file printed, for a report that is not a pass (a traceback it printed helps)."""
        parts = [(name, text.strip()) for name, text in (("stdout", self.stdout), ("stderr", self.stderr))]
        return "".join(f"\nit printed ({name}, the last lines):\n  " + "\n  ".join(text.splitlines()[-5:])
                       for name, text in parts if text)


def check(exercise: Exercise, directory, *, source: str | None = None, max_examples: int | None = None,
          shrink: bool = True, call_seconds: float = CALL_SECONDS, import_seconds: float = IMPORT_SECONDS,
          file_seconds: float = FILE_SECONDS, memory_mb: int = MEMORY_MB) -> Report:
    """Grade ``directory/<exercise.name>.py`` against the fast twin (see the module docstring).

    ``source``: the file's text read earlier (a class is read in full before any student runs),
    else the file is read now. ``shrink=False`` reports the first failing input found instead of
    the smallest (quicker, for grading many files when only the verdict matters); the verdict is
    the same. The limits: ``import_seconds`` for the import, ``call_seconds`` for each call,
    ``file_seconds`` for the file in all, ``memory_mb`` of address space (Linux).
    """
    path = Path(directory) / f"{exercise.name}.py"
    graded_by = f"twinrank.fast.{exercise.twin}" + (f", {exercise.wrapper}" if exercise.wrapper else "")
    report = Report(exercise.name, str(path), "pass", graded_by=graded_by, tolerance=exercise.tol.describe())
    try:
        source = read_source(path) if source is None else source
    except ImportError as e:
        report.status, report.message = "error", str(e)
        return report
    student = StudentProcess(source, path, exercise.name, memory_mb=memory_mb, import_seconds=import_seconds,
                             file_seconds=file_seconds, turn=TURN)
    with student:
        try:
            student.load()
        except ImportFailed as e:
            report.status, report.message = "error", str(e)
        else:
            with TURN:
                _run(exercise, student, report, max_examples, shrink, call_seconds, memory_mb)
        report.stdout, report.stderr = student.output()
    return report


def read_source(path: Path) -> str:
    """The text of a student's file; ImportError with the reason when there is none."""
    if not path.is_file():
        raise ImportError(f"no file {path} (`twinrank exercise start {path.stem} {path.parent}` writes one)")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ImportError(f"{path} cannot be read: {e}") from None


def _run(exercise, student, report, max_examples, shrink, call_seconds, memory_mb) -> None:
    """Hypothesis calls the student's function through ``student``; the verdict goes into ``report``."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis.errors import Flaky

    failure: dict = {}

    @seed(zlib.crc32(exercise.name.encode()))  # the examples depend on the exercise alone, not on this code
    @settings(max_examples=max_examples or exercise.max_examples, derandomize=True, database=None,
              deadline=None, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
              print_blob=False, report_multiple_bugs=False,
              phases=[p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)])
    @given(exercise.strategy())
    def run(args):
        report.examples += 1
        failure.update(args=args)
        problem, given_parts, expected = _grade(exercise, student.call(args, call_seconds), args, memory_mb)
        if problem:
            failure.update(args=args, expected=expected, given=given_parts, message=problem)
            raise _Disagreement(problem)

    try:
        run()
    except _Disagreement:
        report.status = "fail"
        report.counterexample, report.expected = failure["args"], failure["expected"]
        report.given, report.message = failure["given"], failure["message"]
        if report.expected is None:  # the function raised: the answer it owed, for the report
            report.expected = _expected(exercise, report.counterexample)
    except Stopped as e:  # too slow, or the process ended: no shrinking, the process is gone
        report.status, report.message = "fail", str(e)
        report.counterexample, report.expected = failure["args"], _expected(exercise, failure["args"])
    except Flaky:
        report.status = "fail"
        report.message = ("your function gives different answers on the same input (does it draw "
                          "random numbers, or keep something from one call to the next?)")
        report.counterexample, report.expected = failure.get("args"), failure.get("expected")
        report.given = failure.get("given")


def _expected(exercise: Exercise, args: dict) -> dict:
    """The fast twin's answer on ``args``, as named arrays."""
    return exercise.outputs(exercise.oracle(**copy.deepcopy(args)))


def _grade(exercise: Exercise, answer: tuple, args: dict, memory_mb: int):
    """(what is wrong or "", the given result as named arrays or None, the expected or None).

    ``answer`` is the student's process's ``(kind, value)``. When the function raised (the
    stub), the fast twin is not asked, which halves the cost of shrinking; the report asks it
    once at the end.
    """
    kind, result = answer
    if kind == "raised":
        memory = f" (the memory limit is {memory_mb} MiB)" if result.startswith("MemoryError") else ""
        return f"raised {result}{memory}", None, None
    expected = _expected(exercise, args)
    if kind == "unsendable":
        return f"returned {result}: not a number, an array, a tuple, a list or None", None, expected
    try:
        given = exercise.outputs(result)
    except (TypeError, ValueError) as e:
        return f"returned {_show(result)}: {e}", None, expected
    if list(given) != list(expected):
        return "returned " + _show_parts(given) + ", expected " + _show_parts(expected), given, expected
    comparison = compare_twins(expected, given, exercise.tol)
    if comparison.passed:
        return "", given, expected
    detail = comparison.detail.replace(": reference ", ": expected ").replace(", fast ", ", given ")
    return detail + f" (tolerance: {exercise.tol.describe()})", given, expected


def _show(value) -> str:
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        with np.printoptions(floatmode="unique", threshold=200, linewidth=1000):
            return repr(value).replace("\n", " ")
    return repr(value)


def _show_parts(parts: dict | None) -> str:
    if parts is None:
        return "-"
    if list(parts) == ["value"]:
        value = parts["value"]
        return _show(value[0] if value.shape == (1,) else value)
    return ", ".join(f"{name}={_show(v[0] if v.shape == (1,) else v)}" for name, v in parts.items())


def _jsonable(value):
    """Arrays as lists, numpy scalars as Python's, NaN and infinities as strings (JSON has none)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value

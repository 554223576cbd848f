r"""Grading a student's file: import it, compare it with the fast twin on generated inputs, report.

:func:`check` imports ``DIR/NAME.py`` (compiled from its text: no bytecode cache, so a file
rewritten a moment ago is read as it is now), takes its function ``NAME`` and runs it on
the exercise's hypothesis strategy next to the fast twin's answer. Hypothesis is set for
grading: ``derandomize=True`` (the same examples on every machine), no example database,
``max_examples`` bounded, no deadline, every health check off (a slow student function is
graded, not refused). On a disagreement hypothesis shrinks the input; the last failing call
it replays is the smallest, and its input, expected and given values go into the
:class:`Report`. An exception raised by the student's function (``NotImplementedError`` of
the stub) is a failure like a wrong value. A file that cannot be imported, or that lacks the
function, is an ``error`` (exit status 2).
"""
from __future__ import annotations

import contextlib
import copy
import signal
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinrank.grading.exercises import Exercise
from twinrank.testing._compare import compare_twins

STATUS_CODES = {"pass": 0, "fail": 1, "error": 2}
CALL_SECONDS = 10.0  # one call of a student's function may take this long; then the check fails


class _TooSlow(BaseException):
    """A student's call ran past its time (a BaseException: hypothesis does not shrink on it)."""


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

    @property
    def exit_code(self) -> int:
        return STATUS_CODES[self.status]

    def to_dict(self) -> dict:
        """A JSON-ready record (arrays as lists, NaN and infinities as strings)."""
        return {"exercise": self.exercise, "path": self.path, "status": self.status,
                "passed": self.status == "pass", "examples": self.examples, "graded_by": self.graded_by,
                "tolerance": self.tolerance, "message": self.message,
                "counterexample": _jsonable(self.counterexample), "expected": _jsonable(self.expected),
                "given": _jsonable(self.given)}

    def text(self) -> str:
        """The report a student reads."""
        head = f"{self.exercise} ({self.path}): "
        if self.status == "pass":
            return head + (f"pass: {self.examples} generated inputs agree with {self.graded_by} "
                           f"({self.tolerance})")
        if self.status == "error":
            return head + f"ERROR: {self.message}"
        lines = [head + f"FAIL ({self.examples} calls, shrinking included): {self.message}",
                 "smallest failing input:"]
        lines += [f"  {name} = {_show(value)}" for name, value in (self.counterexample or {}).items()]
        lines.append(f"expected ({self.graded_by}): {_show_parts(self.expected)}")
        lines.append("given: " + ("(raised, see above)" if self.given is None else _show_parts(self.given)))
        return "\n".join(lines)


def load_function(path: Path, name: str):
    """The function ``name`` of the file ``path``; raises ``ImportError`` with a readable reason."""
    if not path.is_file():
        raise ImportError(f"no file {path} (`twinrank exercise start {name} {path.parent}` writes one)")
    namespace = {"__name__": f"twinrank_exercise_{name}", "__file__": str(path)}
    try:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    except Exception as e:  # noqa: BLE001 (any error of the student's file is reported as such)
        raise ImportError(f"{path} cannot be imported: {_where(e, path)}") from e
    function = namespace.get(name)
    if not callable(function):
        raise ImportError(f"{path} defines no function {name!r}")
    return function


def check(exercise: Exercise, directory, *, max_examples: int | None = None, shrink: bool = True,
          call_seconds: float = CALL_SECONDS) -> Report:
    """Grade ``directory/<exercise.name>.py`` against the fast twin (see the module docstring).

    ``shrink=False`` reports the first failing input found instead of the smallest (quicker,
    for grading many files when only the verdict matters); the verdict is the same. A call of
    the student's function that runs longer than ``call_seconds`` (an endless loop) fails the
    check on that input, not shrunk (on systems with ``SIGALRM``, i.e. not on Windows).
    """
    path = Path(directory) / f"{exercise.name}.py"
    graded_by = f"twinrank.fast.{exercise.twin}" + (f", {exercise.wrapper}" if exercise.wrapper else "")
    report = Report(exercise.name, str(path), "pass", graded_by=graded_by, tolerance=exercise.tol.describe())
    try:
        function = load_function(path, exercise.name)
    except ImportError as e:
        report.status, report.message = "error", str(e)
        return report
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.errors import Flaky

    failure: dict = {}

    @settings(max_examples=max_examples or exercise.max_examples, derandomize=True, database=None,
              deadline=None, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
              print_blob=False, report_multiple_bugs=False,
              phases=[p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)])
    @given(exercise.strategy())
    def run(args):
        report.examples += 1
        failure.update(args=args)
        with _time_limit(call_seconds):
            problem, given_parts, expected = _grade(exercise, function, args, path)
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
    except _TooSlow:
        report.status = "fail"
        report.message = f"your function ran longer than {call_seconds:g} s on this input (an endless loop?)"
        report.counterexample, report.expected = failure["args"], _expected(exercise, failure["args"])
    except Flaky:
        report.status = "fail"
        report.message = ("your function gives different answers on the same input (does it draw "
                          "random numbers, or change its arguments?)")
        report.counterexample, report.expected = failure.get("args"), failure.get("expected")
        report.given = failure.get("given")
    return report


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise :class:`_TooSlow` in the calling (main) thread after ``seconds`` of wall time."""
    if not hasattr(signal, "setitimer") or seconds is None:
        yield
        return

    def too_slow(signum, frame):
        raise _TooSlow()

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _expected(exercise: Exercise, args: dict) -> dict:
    """The fast twin's answer on ``args``, as named arrays."""
    return exercise.outputs(exercise.oracle(**copy.deepcopy(args)))


def _grade(exercise: Exercise, function, args: dict, path: Path):
    """(what is wrong or "", the given result as named arrays or None, the expected or None).

    The student's function runs first: when it raises (the stub), the fast twin is not
    asked, which halves the cost of shrinking; the report asks it once at the end.
    """
    try:
        result = function(**copy.deepcopy(args))
    except Exception as e:  # noqa: BLE001
        return f"raised {_where(e, path)}", None, None
    expected = _expected(exercise, args)
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


def _where(e: BaseException, path: Path) -> str:
    """``Type: message`` and the line of the student's file it came from."""
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    if isinstance(e, SyntaxError):
        return f"SyntaxError: {e.msg} (line {e.lineno} of {path.name})"
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == str(path)]
    return text + (f" (line {lines[-1]} of {path.name})" if lines else "")


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

r"""A student's process: load one file, call its function on what the grader sends, answer with what it returns.

:class:`~twinrank.grading._student.StudentProcess` starts it in a fresh interpreter (``python -I``),
in a temporary folder holding a copy of the student's file and nothing else, as the leader of a
process group of its own::

    main([copy, shown, name, inbox, outbox, memory_bytes])

It sets the memory limit (``RLIMIT_AS``, where the platform has it) before the student's code
runs, starts a watchdog that ends the whole process group if the grader goes away, loads
``copy`` (compiled under the name ``shown``, the student's own path, so tracebacks name it), and
answers on the file descriptor ``outbox``, one message (:mod:`~twinrank.grading._wire`) for each
message read on ``inbox``:

* first ``{"ready": true}``, or ``{"import_error": why}`` when the file cannot be imported or
  defines no function ``name``;
* then, for each ``{"call": arguments}``: ``{"returned": value}``, ``{"raised": "Type: message
  (line N of NAME.py)"}`` (any exception, ``SystemExit`` and ``KeyboardInterrupt`` included), or
  ``{"unsendable": what}`` when the value is not plain data.

The comparison with the expected answer is not here: the grader makes it, in its own process.
The end of ``inbox`` ends this process.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
import types

from twinrank.grading import _wire as wire

WATCH_SECONDS = 1.0
"""How often the watchdog looks for the grader."""


def main(argv: list) -> None:
    copy, shown, name, inbox, outbox, memory_bytes = argv
    inbox, outbox = int(inbox), int(outbox)
    for fd in (inbox, outbox):
        os.set_inheritable(fd, False)  # a child the student starts does not hold the conversation open
    _limit_memory(int(memory_bytes))
    _watch_grader(os.getppid())
    sys.argv = [shown]
    try:
        function = load_function(copy, shown, name)
    except ImportError as e:
        wire.send(outbox, {"import_error": str(e)})
        return
    wire.send(outbox, {"ready": True})
    while (message := wire.receive(inbox)) is not None:
        wire.send(outbox, _answer(function, wire.decode(message["call"]), shown))


def load_function(copy: str, shown: str, name: str):
    """The function ``name`` of the file ``copy``; raises ``ImportError`` with a readable reason."""
    module = types.ModuleType(f"twinrank_exercise_{name}")
    module.__file__ = copy
    sys.modules[module.__name__] = module
    try:
        with open(copy, encoding="utf-8") as f:
            exec(compile(f.read(), shown, "exec"), module.__dict__)
    except BaseException as e:  # noqa: BLE001 (sys.exit() at import is the student's error too)
        raise ImportError(f"{shown} cannot be imported: {where(e, shown)}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ImportError(f"{shown} defines no function {name!r}")
    return function


def where(e: BaseException, shown: str) -> str:
    """``Type: message`` and the line of the student's file it came from."""
    name = os.path.basename(shown)
    if isinstance(e, SyntaxError):
        return f"SyntaxError: {e.msg} (line {e.lineno} of {name})"
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == shown]
    return text + (f" (line {lines[-1]} of {name})" if lines else "")


def _answer(function, arguments: dict, shown: str) -> dict:
    try:
        result = function(**arguments)
    except BaseException as e:  # noqa: BLE001
        return {"raised": where(e, shown)}
    try:
        return {"returned": wire.encode(result)}
    except BaseException as e:  # noqa: BLE001 (Unsendable, or the student's object failing to convert)
        return {"unsendable": f"{_short_repr(result)} ({e})"}


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 200 else text[:200] + "..."


def _limit_memory(limit: int) -> None:
    """At most ``limit`` bytes of address space for this process and its children (where RLIMIT_AS exists)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, AttributeError, ValueError, OSError):  # Windows; macOS does not enforce it
        pass


def _watch_grader(grader: int) -> None:
    """End this process group (the student's children too) once the grader is gone (POSIX)."""
    if os.name != "posix":
        return

    def watch():
        while os.getppid() == grader:
            time.sleep(WATCH_SECONDS)
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])

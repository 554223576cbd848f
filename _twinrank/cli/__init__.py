"""The ``twinrank`` command: ``twinrank COMMAND --help`` describes each command.

Every command takes ``--engine fast|reference`` (fast by default) and runs the
same code path on the chosen twin, except ``verify``, which runs both and compares
them. Each command lives in a module of its own (``twinrank.cli.training``: commands that train
and score; ``.evaluation``: commands that evaluate; ``.model_files``: commands on model files),
exposing ``add_parser(subparsers)``; the parser's ``run`` default does the work.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import os
import sys
import warnings
from functools import partial

from twinrank.cli._common import Parser, add_engine_option, engine_module, plain_help
from twinrank.reference.errors import TwinrankError, TwinrankWarning

MODULE_OF_COMMAND = {
    "train": "training.train", "predict": "training.predict", "evaluate": "evaluation.evaluate",
    "combine": "evaluation.combine", "cost": "evaluation.cost", "compare": "evaluation.compare",
    "grid": "training.grid", "inspect": "model_files.inspect", "export": "model_files.export",
    "import": "model_files.import_model", "data": "data", "verify": "verify", "demo": "demo",
    "diagnose": "evaluation.diagnose", "experiment": "training.experiment", "exercise": "exercise",
}
COMMANDS = list(MODULE_OF_COMMAND)
__all__ = ["main", "command", "build_parser", "version", "COMMANDS", "add_engine_option", "engine_module"]


def version() -> str:
    """The installed distribution's version; ``unknown`` when twinrank runs uninstalled."""
    try:
        return importlib.metadata.version("twinrank")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The ``twinrank`` parser with one sub-command per command module."""
    parser = Parser(
        prog="twinrank", description="Learning-to-rank tree ensembles, written twice.")
    parser.add_argument("--version", action="version", version=f"twinrank {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"twinrank.cli.{MODULE_OF_COMMAND[name]}").add_parser(sub)
    plain_help(parser)
    return parser


INTERRUPTED = 130  # the exit status of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it


def main(argv=None) -> int:
    """Run the command line ``argv``; a user error prints one line and returns 2, Ctrl-C one line and 130."""
    command = "twinrank"
    try:
        args = build_parser().parse_args(argv)
        command = f"twinrank {args.command}"
        return _run(args)
    except KeyboardInterrupt as e:  # a command may say what it kept: KeyboardInterrupt("3 of 8 runs written ...")
        print(f"{command}: interrupted (Ctrl-C){f'; {e}' if e.args else ''}", file=sys.stderr)
        return INTERRUPTED


def command() -> int:
    """The ``twinrank`` program (its console script, ``python -m twinrank.cli``): :func:`main`, then
    ``gc.freeze()`` before the interpreter exits. At exit Python's cyclic garbage collector walks
    every object it tracks once more; after a run that compiled or loaded numba kernels these are
    numba's many compiler objects: 0.3-0.5 s of a cold ``twinrank demo`` (about 11 s), 0.2 s of a
    warm one (about 1.7 s), for nothing, since the process ends. Frozen objects are still freed as
    the interpreter tears its modules down; what a command writes it has closed (or renamed into
    place) before it returns, and the standard streams are flushed at exit as always."""
    status = main()
    gc.freeze()
    return status


def _run(args) -> int:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", TwinrankWarning)
            warnings.showwarning = partial(_show_warning, args.command)
            return args.run(args) or 0
    except BrokenPipeError:  # stdout closed early (``twinrank predict ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # as the Python docs advise
        return 1
    except (TwinrankError, OSError) as e:
        print(f"twinrank {args.command}: error: {_message(e)}", file=sys.stderr)
        return 2
    except MemoryError as e:
        print(f"twinrank {args.command}: error: out of memory ({e or 'an allocation failed'}); the data are too "
              "large for this machine: fewer rows or features, or the fast engine", file=sys.stderr)
        return 2


def _show_warning(command, message, category, filename, lineno, file=None, line=None):
    """A TwinrankWarning as one line, ``twinrank train: warning: ...``; other warnings as Python shows them."""
    if issubclass(category, TwinrankWarning):
        print(f"twinrank {command}: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


def _message(e: Exception) -> str:
    """The error's text; an OSError's as ``file: reason`` rather than ``[Errno 2] ...``."""
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return str(e)


if __name__ == "__main__":
    sys.exit(main())

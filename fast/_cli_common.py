"""What every ``twinrank`` command shares: the ``--engine`` option, the chosen twin's modules,
and the checks of the user's files made before any work (so that a typo costs no training run).
"""
from __future__ import annotations

import argparse
import importlib
import os

from twinrank.reference.errors import DataFormatError, ParameterError

STDOUT = "-"  # an --output of "-" writes to standard output


def engine_module(engine: str, name: str):
    """``twinrank.<engine>.<name>``: the module of the chosen twin."""
    return importlib.import_module(f"twinrank.{engine}.{name}")


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine fast|reference`` to a command's parser."""
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast",
                        help="which twin runs the command (default: fast)")


def check_input(path, flag: str) -> None:
    """ParameterError naming ``flag`` and ``path`` unless ``path`` is a readable file."""
    if path is None:
        return
    if not os.path.exists(path):
        raise ParameterError(f"{flag} {path}: no such file")
    if os.path.isdir(path):
        raise ParameterError(f"{flag} {path}: is a folder, not a file")
    if not os.access(path, os.R_OK):
        raise ParameterError(f"{flag} {path}: cannot be read (permission denied)")


def check_output(path, flag: str) -> None:
    """ParameterError naming ``flag`` and ``path`` unless a file can be written at ``path``.

    The file is written later, atomically: a temporary file in the same folder, then a
    rename; so the folder must exist and be writable. ``-`` (standard output) passes.
    """
    if path is None or path == STDOUT:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ParameterError(f"{flag} {path}: is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ParameterError(f"{flag} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ParameterError(f"{flag} {path}: cannot write in folder {folder} (permission denied)")


def require_queries(data, path, flag: str, why: str) -> None:
    """DataFormatError naming ``path`` if its rows came with no query ids (no ``qid:``, no group file)."""
    if not data.has_queries:
        raise DataFormatError(path, None, f"no query ids: no row has a 'qid:' and there is no group "
                                          f"file ({path}.query); {why} (file given as {flag})")

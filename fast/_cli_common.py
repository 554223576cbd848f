"""What every ``twinrank`` command shares: the ``--engine`` option and the chosen twin's modules."""
from __future__ import annotations

import argparse
import importlib


def engine_module(engine: str, name: str):
    """``twinrank.<engine>.<name>``: the module of the chosen twin."""
    return importlib.import_module(f"twinrank.{engine}.{name}")


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine fast|reference`` to a command's parser."""
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast",
                        help="which twin runs the command (default: fast)")

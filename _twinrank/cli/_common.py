"""What every ``twinrank`` command shares: the ``--engine`` option, the chosen twin's modules,
and the checks of the user's files made before any work (so that a typo costs no training run).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import re
import stat

from twinrank._layout import twin_module
from twinrank.reference._param_checks import check_n_threads
from twinrank.reference.errors import DataFormatError, ParameterError
from twinrank.reference.io._letor_reader import MAX_FEATURES, MAX_LABEL

STDOUT = "-"  # an --output of "-" writes to standard output


_ROLE = re.compile(r":\w+:`(~?)([^`]+)`")  # :func:`~a.b.c` (a ~ shows the last name only)


def plain_text(text):
    """``text`` without reStructuredText markup, as a terminal shows help: ````x```` and
    ``:role:`x``` become x (``:role:`~a.b``` becomes b), and a formula loses its ``$``."""
    if not isinstance(text, str):
        return text
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    return text.replace("``", "").replace("\\,", " ").replace("\\", "").replace("$", "")


def plain_help(parser: argparse.ArgumentParser) -> None:
    """Every description, epilog and option help of ``parser`` and its sub-commands as :func:`plain_text`
    (module docstrings are written for the documentation, where the markup renders)."""
    parser.description, parser.epilog = plain_text(parser.description), plain_text(parser.epilog)
    for action in parser._actions:
        action.help = plain_text(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain_text(choice.help)
            for sub in action.choices.values():
                plain_help(sub)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line and a hint, not the whole usage.

    Sub-command parsers inherit the class, and each refuses the arguments it does not know
    itself, so ``twinrank train ... --bogus`` prints ``twinrank train: error: unrecognized
    arguments: --bogus`` and ``see twinrank train --help`` (argparse names ``twinrank``).
    """

    def parse_known_args(self, args=None, namespace=None):
        """argparse's parse, with an unknown argument an error of this parser rather than returned."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def error(self, message: str):
        """Print ``PROG: error: MESSAGE`` and where the help is on stderr; exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message}\nsee {self.prog} --help\n")


def engine_module(engine: str, name: str):
    """The chosen twin's module ``name`` (``"metrics"``: ``twinrank.<engine>.evaluation.metrics``)."""
    return importlib.import_module(twin_module(engine, name))


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine fast|reference`` to a command's parser."""
    parser.add_argument("--engine", choices=["fast", "reference"], default="fast",
                        help="which twin runs the command (default: fast)")


def add_accept_edited_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--accept-edited-model``: read a model file whose checksum no longer matches (docs: Reliability)."""
    parser.add_argument("--accept-edited-model", action="store_true",
                        help="read a model file edited on purpose, whose content no longer matches its "
                             "checksum; every structural check still applies (default: such a file is refused)")


def read_model(args, path=None):
    """The model file ``path`` (default ``--model``), through the one validating loader."""
    from twinrank.reference.io.model import load_model

    path = args.model if path is None else path
    return load_model(path, verify_checksum=not args.accept_edited_model)


def add_threads_option(parser: argparse.ArgumentParser, what: str = "the fast engine") -> None:
    """Add ``--threads N`` (N >= 1, or -1 for all cores; 0 and other negatives are refused)."""
    parser.add_argument("--threads", type=thread_count, metavar="N",
                        help=f"threads of {what}: N >= 1 (at most the cores), or -1 for all cores "
                             "(default: all cores)")


def thread_count(text: str) -> int:
    """``--threads``: an integer >= 1, or -1 for all cores."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of threads, got {text!r}") from None
    try:
        check_n_threads("--threads", value)
    except ParameterError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


def add_reading_options(parser: argparse.ArgumentParser, labels: bool = True) -> None:
    """Add the reader's options: ``--zero-based``, ``--max-features`` and (with ``labels``) ``--max-label``."""
    parser.add_argument("--zero-based", action="store_true",
                        help="feature ids start at 0, not 1 (default: 1-based, as in LETOR and SVMlight); "
                             "id j is then column j of X, which twinrank names f(j+1) as always (inspect, "
                             "dump_tree, export): id 0 is f1")
    parser.add_argument("--max-features", type=_limit(int), default=MAX_FEATURES, metavar="N|none",
                        help="refuse data whose largest feature id makes more than N features, naming the "
                             f"line, before memory is allocated; 'none': no limit (default: {MAX_FEATURES:,}; "
                             "the features take 4 bytes per row and feature)")
    if labels:
        parser.add_argument("--max-label", type=_limit(float), default=MAX_LABEL, metavar="L|none",
                            help="refuse labels above L, naming the line; 'none': any finite label, for "
                                 f"regression targets (default: {MAX_LABEL}, the largest grade whose gain "
                                 "2^l - 1 is exact)")


def reading_options(args) -> dict:
    """The keyword arguments of ``read_letor`` the reader's options give."""
    options = {"zero_based": args.zero_based, "max_features": args.max_features}
    if hasattr(args, "max_label"):
        options["max_label"] = args.max_label
    return options


def _limit(kind):
    def parse(text: str):
        if text.lower() == "none":
            return None
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number or 'none', got {text!r}") from None
        if not math.isfinite(value) or (kind is int and value < 1):
            raise argparse.ArgumentTypeError(f"expected a positive number or 'none', got {text!r}")
        return value
    parse.__name__ = kind.__name__
    return parse


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


def check_overwrites(outputs: dict, inputs: dict) -> None:
    """ParameterError naming both options if a file the command writes is a file it reads, or
    another file it writes: writing would destroy the input (or one output the other).

    ``outputs``, ``inputs``: ``{option: path}`` (None and ``-`` are left out). Two paths name the
    same file when they resolve to the same path, or are one regular file (same inode: a hard
    link, a path through a symbolic link).
    """
    written = [(option, path) for option, path in outputs.items() if path not in (None, STDOUT)]
    read = [(option, path) for option, path in inputs.items() if path is not None]
    for n, (option, path) in enumerate(written):
        for other, source in [*read, *written[:n]]:
            if same_file(path, source):
                what = "overwrite" if (other, source) in read else "be overwritten by"
                raise ParameterError(f"{option} {path} is the file of {other} {source}: writing it would "
                                     f"{what} {other}; give {option} another file")


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name one regular file (one inode), or, not existing yet,
    resolve to one path. A device or pipe (``/dev/stdout``) is never a file to protect."""
    try:
        first, second = os.stat(a), os.stat(b)
    except OSError:  # one does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)
    return stat.S_ISREG(first.st_mode) and (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def data_inputs(option: str, path) -> dict:
    """``{option: path}`` and, if the data file has one, its group file (read with it)."""
    from twinrank.reference.io._letor_queries import sibling_query_file

    if path is None:
        return {}
    group = sibling_query_file(os.fspath(path))
    return {option: path, **({f"{option}'s group file": group} if group else {})}


def require_queries(data, path, flag: str, why: str) -> None:
    """DataFormatError naming ``path`` if its rows came with no query ids (no ``qid:``, no group file)."""
    if not data.has_queries:
        raise DataFormatError(path, None, f"no query ids: no row has a 'qid:' and there is no group "
                                          f"file ({path}.query); {why} (file given as {flag})")

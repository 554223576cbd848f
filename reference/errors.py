"""The error types of twinrank, shared by both twins.

Every error a user can cause derives from :class:`TwinrankError` and from the
built-in type a Python programmer would expect (``ValueError``), so both
``except TwinrankError`` and ``except ValueError`` catch it.
"""
from __future__ import annotations


class TwinrankError(Exception):
    """Base class of every error twinrank raises on purpose."""


class ParameterError(TwinrankError, ValueError):
    """A parameter is out of its range or of the wrong kind."""


class DataFormatError(TwinrankError, ValueError):
    """A data file is malformed.

    The message names the file, the 1-based line and the offending token or
    field, e.g. ``train.txt:17: feature value 'abc' of token '3:abc' is not a number``.
    """

    def __init__(self, path, line: int | None, message: str, token: str | None = None):
        self.path = str(path)
        self.line = line
        self.token = token
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


class ModelFormatError(TwinrankError, ValueError):
    """A model file cannot be read: wrong format name, wrong version, missing field."""


class TwinrankWarning(UserWarning):
    """Something the user should know of that is not an error: e.g. a fit that grew no tree, and why."""


class QuadraticQueryWarning(TwinrankWarning):
    """A query so large that LambdaRank's pairs of its documents, quadratic in its size, will take
    long at every tree: named with its size and pair count before training starts. Filter it with
    ``warnings.filterwarnings("ignore", category=QuadraticQueryWarning)``."""

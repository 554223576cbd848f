r"""Feature costs: read, checked, and paid once (Mohan 2010, Ch. 6).

Each feature $f$ has a cost $c(f) \ge 0$, the price of computing its value for
one document. A cost-aware split minimises impurity plus $\lambda\,c(f)$
(Eq. 6.1; ``TreeParams.cost_lambda``), i.e. scores $\mathrm{gain} - \lambda\,c(f)$.
**Free after first use**: a feature's value, once computed for a document, is
kept, so a feature some earlier tree split on costs nothing more. A
:class:`CostLedger` holds the costs the next tree sees: boosting pays (zeroes)
the features of every tree after it is grown, a forest those of every batch of
``cost_batch_size`` trees (the trees of a batch are grown on the same costs, so
the forest does not depend on the number of threads growing it).

A **costs file** has one ``feature cost`` line per feature: the feature id as in
the LETOR file (1-based) and a non-negative number; blank lines and ``#`` comments
are skipped. Every feature of the data must have a cost.
"""
from __future__ import annotations

import gzip
import math
import os
import zlib

import numpy as np

from twinrank.reference._streams import bounded_lines, open_input
from twinrank.reference.constants import MAX_MODEL_FEATURES
from twinrank.reference.errors import DataFormatError, ParameterError

__all__ = ["read_feature_costs", "read_costs", "cost_array", "feature_cost_array", "features_used", "CostLedger"]


def read_feature_costs(path) -> dict:
    """``{feature id (1-based): (cost, line)}`` of a costs file; DataFormatError naming file and line.

    The file is read once, as a stream (a pipe or ``/dev/stdin`` will do; ``io._streams``), a
    line at most ``MAX_LINE_BYTES`` long, and a feature id at most ``MAX_MODEL_FEATURES``.
    """
    costs = {}
    try:
        with open_input(path) as stream:
            for number, raw in bounded_lines(path, stream):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataFormatError(path, number, f"not UTF-8 text ({e.reason})") from None
                tokens = line.split("#", 1)[0].split()
                if not tokens:
                    continue
                if len(tokens) != 2:
                    raise DataFormatError(path, number, f"expected 'feature cost', got {line.strip()[:60]!r}")
                feature, cost = _feature_id(tokens[0], path, number), _cost(tokens[1], path, number)
                if feature in costs:
                    raise DataFormatError(path, number, f"feature {feature} was given a cost already")
                costs[feature] = (cost, number)
    except OSError as e:
        raise DataFormatError(path, None, f"cannot read the feature costs ({e.strerror or e})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFormatError(path, None, f"corrupt gzip data ({e})") from None
    if not costs:
        raise DataFormatError(path, None, "no 'feature cost' line")
    return costs


def _feature_id(token: str, path, line: int) -> int:
    if not token.isdigit() or not token.strip("0") or len(token) > len(str(MAX_MODEL_FEATURES)):
        raise DataFormatError(path, line, f"feature {token[:60]!r} is not a feature id (an integer >= 1)", token)
    if int(token) > MAX_MODEL_FEATURES:
        raise DataFormatError(path, line, f"feature {token} is beyond {MAX_MODEL_FEATURES:,}, the widest "
                                          "model twinrank reads", token)
    return int(token)


def _cost(token: str, path, line: int) -> float:
    try:
        cost = float(token)
    except ValueError:
        raise DataFormatError(path, line, f"cost {token!r} is not a number", token) from None
    if not math.isfinite(cost) or cost < 0:
        raise DataFormatError(path, line, f"cost {token} must be a finite number >= 0", token)
    return cost


def read_costs(feature_costs):
    """``feature_costs`` read and checked once: None, a float64 array (1-D, finite, >= 0) or the
    ``{feature id: (cost, line)}`` table of a costs file (:func:`read_feature_costs`)."""
    if feature_costs is None:
        return None
    if isinstance(feature_costs, (str, os.PathLike)):
        return read_feature_costs(feature_costs)
    try:
        c = np.array(feature_costs, dtype=np.float64)  # a copy
    except (TypeError, ValueError):
        raise ParameterError(f"feature_costs must be numbers or a costs file, got {feature_costs!r}") from None
    if c.ndim != 1 or len(c) == 0 or not np.isfinite(c).all() or (c < 0).any():
        raise ParameterError("feature_costs must be a 1-D array of finite numbers >= 0 (one per feature)")
    return c


def cost_array(read, n_features: int, source) -> np.ndarray | None:
    """The costs (float64, (n_features,)) from :func:`read_costs`' result ``read`` of ``source``.

    A table must give a cost to every feature of the data and to no other (DataFormatError naming
    ``source`` and the line); an array must have one cost per feature.
    """
    if read is None:
        return None
    if isinstance(read, np.ndarray):
        if len(read) != n_features:
            raise ParameterError(f"feature_costs has {len(read)} costs but the data have {n_features} features")
        return read.copy()
    for feature, (_, line) in read.items():
        if feature > n_features:
            raise DataFormatError(source, line, f"feature {feature}, but the data have {n_features} features")
    missing = [f for f in range(1, n_features + 1) if f not in read]
    if missing:
        raise DataFormatError(source, None, f"no cost for feature {missing[0]} (the data have "
                              f"{n_features} features; {len(missing)} without a cost)")
    return np.array([read[f][0] for f in range(1, n_features + 1)])


def feature_cost_array(feature_costs, n_features: int) -> np.ndarray | None:
    """The costs (float64, (n_features,)) of an array or a costs file; None stays None."""
    return cost_array(read_costs(feature_costs), n_features, feature_costs)


def features_used(trees, n_features: int) -> np.ndarray:
    """Bool (n_features,): the features some tree of ``trees`` (``model.Tree``) splits on."""
    used = np.zeros(n_features, dtype=bool)
    for tree in trees:
        used[tree.feature[tree.feature >= 0]] = True
    return used


class CostLedger:
    r"""The effective costs $c(f)$ the next tree is grown with, paid once per feature.

    ``current`` is float64 (n_features,); :meth:`pay` zeroes the costs of the
    features the given trees split on when ``free_after_use`` (else costs stay).
    """

    def __init__(self, costs: np.ndarray, free_after_use: bool = True):
        self.current = np.array(costs, dtype=np.float64)  # (n_features,)
        self.free_after_use = free_after_use

    def pay(self, trees: list) -> None:
        """The features ``trees`` split on cost nothing from now on (``free_after_use``)."""
        if self.free_after_use:
            self.current[features_used(trees, len(self.current))] = 0.0

r"""The model format shared by both twins: :class:`Tree`, :class:`Ensemble`, JSON on disk.

A tree is a struct of flat arrays indexed by node id (pygbm's and LightGBM's
layout), so any code can walk it and both twins read the same object. Node 0 is
the root; children are appended in the order nodes are split, left before right
(before a third child holding the missing rows, see ``TreeParams.missing_split``).

Routing a row ``x`` at an internal node ``k``::

    v = x[feature[k]]
    if isnan(v):            go to missing[k]        (left[k], right[k] or a third child)
    elif v <= threshold[k]: go to left[k]
    else:                   go to right[k]

and on binned data (``uint8`` bins, ``MISSING_BIN`` for NaN) the same route reads
``bin <= bin_threshold[k]``; the binning guarantees both routes agree. A leaf has
``left == right == missing == -1`` and ``feature == -1``.

The score of an :class:`Ensemble` is

$$F(x) = F_0(x) + \sum_{t} w_t\, f_t(x),$$

with $F_0$ the ``base_score`` plus, if present, the ``init_model``'s score
(LambdaSMART / IGBRT start from a prior model).

Files are JSON (no pickle), versioned by ``FORMAT`` and ``VERSION``, and
written atomically: a temporary file in the target folder, then ``os.replace``.

The model kinds are written in private modules, one idea each, and this module is
their one public path: ``_ensemble`` (``Tree``, ``Ensemble``), ``_mcrank_model``,
``_missing_values`` (the fitted missing-value strategy) and ``_model_json`` (the file's
JSON); :func:`load_model`, the one loader of every kind, is written here.
"""
from __future__ import annotations

from ._ensemble import TREE_FIELDS, Ensemble, Tree
from ._mcrank_model import McRankModel
from ._missing_values import SPLIT_STRATEGIES, STRATEGIES, MissingValues, check_strategy, refilled, with_missing
from ._model_json import FORMAT, MCRANK, VERSION, _read_json, write_json_atomic
from .constants import LEAF
from .errors import ModelFormatError

__all__ = ["FORMAT", "VERSION", "MCRANK", "SPLIT_STRATEGIES", "TREE_FIELDS", "Tree", "Ensemble", "McRankModel",
           "load_model", "MissingValues", "check_strategy", "refilled", "with_missing", "write_json_atomic"]


def load_model(path) -> "Ensemble | McRankModel":
    """The model of a twinrank model file: an :class:`McRankModel` if its algorithm is
    ``"mcrank"``, else an :class:`Ensemble`."""
    d = _read_json(path)
    model_type = McRankModel if isinstance(d, dict) and d.get("algorithm") == MCRANK else Ensemble
    try:
        return model_type.from_dict(d)
    except ModelFormatError as e:
        raise ModelFormatError(f"{path}: {e}") from None

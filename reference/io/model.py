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
their one public path: ``_ensemble`` (``Tree``, ``Ensemble``), ``_mcrank_model`` (``McRankModel``
and Mohan's ``CumulativeRegressionModel``),
``_missing_values`` (the fitted missing-value strategy) and ``_model_json`` (the file's
JSON); :func:`load_model`, the one loader of every kind, is written here.
"""
from __future__ import annotations

from twinrank.reference.constants import LEAF  # noqa: F401  (re-exported: model.LEAF)
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._bag_model import BAG_ALGORITHM, BagModel
from twinrank.reference.io._ensemble import TREE_FIELDS, Ensemble, Tree
from twinrank.reference.io._mcrank_model import CUMULATIVE_REGRESSION, CumulativeRegressionModel, McRankModel
from twinrank.reference.io._missing_values import (
    SPLIT_STRATEGIES,
    STRATEGIES,
    MissingValues,
    check_strategy,
    refilled,
    with_missing,
)
from twinrank.reference.io._model_json import FORMAT, MCRANK, VERSION, read_model_document, write_json_atomic

__all__ = ["FORMAT", "VERSION", "MCRANK", "CUMULATIVE_REGRESSION", "BAG_ALGORITHM", "SPLIT_STRATEGIES",
           "TREE_FIELDS", "Tree", "Ensemble", "McRankModel", "CumulativeRegressionModel", "BagModel",
           "load_model", "MissingValues", "check_strategy", "refilled", "with_missing", "write_json_atomic"]


def load_model(path, *, verify_checksum: bool = True) -> "Ensemble | McRankModel | BagModel":
    """The model of a twinrank model file: an :class:`McRankModel` if its algorithm is
    ``"mcrank"``, a :class:`CumulativeRegressionModel` if it is ``"cumulative-regression"``, a
    :class:`BagModel` if it is ``"bl-mart"``, else an :class:`Ensemble`.

    The one validating loader: the file must be UTF-8 JSON of this format and a
    readable version; its checksum must match its content (``verify_checksum=False``
    accepts a file edited on purpose); every field must have its type and shape, and
    every tree must be a tree (``_tree_structure``) splitting on features below the
    model's ``n_features``; a fitted missing-value strategy must fit the model. Any
    fault raises :class:`ModelFormatError` naming the file and the field, e.g.
    ``model.json: trees[3].left[17] = 99: is not a node of this tree (1..30)``.
    """
    d = read_model_document(path, verify_checksum=verify_checksum)
    try:
        if d.get("algorithm") in (MCRANK, CUMULATIVE_REGRESSION):
            kind = McRankModel if d["algorithm"] == MCRANK else CumulativeRegressionModel
            model = kind.from_dict(d)
            ensembles = model.classifiers
        elif d.get("algorithm") == BAG_ALGORITHM:
            model = BagModel.from_dict(d)
            ensembles = model.members
        else:
            model = Ensemble.from_dict(d)
            ensembles = [model]
        for e in ensembles:
            _check_missing(e)
    except ModelFormatError as e:
        raise ModelFormatError(f"{path}: {e}") from None
    return model


def _check_missing(ensemble: Ensemble) -> None:
    """Refuse a stored missing-value strategy that does not fit the model's width."""
    while ensemble is not None:
        if ensemble.missing is not None:
            fitted = MissingValues.from_dict(ensemble.missing)
            if len(fitted.fill) not in (0, ensemble.n_features):
                raise ModelFormatError(f"missing.fill: {len(fitted.fill)} values for {ensemble.n_features} features")
        ensemble = ensemble.init_model

"""Numba-parallel twin of `twinrank.reference.rankers.transfer`: the same protocols on the engine ``FAST``.

The data handling is the reference's; the default domain classifier is the fast
McRank, and :func:`model_features` scores with the fast scorers.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.engine import Engine
from twinrank.reference.rankers import transfer as _reference
from twinrank.reference.rankers.transfer import (
    SOURCE_OUTPUTS,
    augment,
    run_domain_scores,
    run_model_features,
)

__all__ = ["domain_scores", "augment", "model_features", "default_classifier", "run_domain_scores",
           "run_model_features", "SOURCE_OUTPUTS"]


def default_classifier(engine: Engine = FAST):
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.default_classifier` (the fast McRank)."""
    return _reference.default_classifier(engine)


def domain_scores(source, target, make_classifier=None, n_folds: int = 5, seed: int = 0):
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.domain_scores` (default: the fast McRank)."""
    return run_domain_scores(FAST, source, target, make_classifier, n_folds, seed)


def model_features(model, X, kinds=SOURCE_OUTPUTS):
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.model_features` (fast scorers)."""
    return run_model_features(FAST, model, X, kinds)

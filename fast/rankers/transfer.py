"""Numba-parallel twin of `twinrank.reference.rankers.transfer`: the same protocols on the fast estimators.

The data handling is the reference's; the default domain classifier is the fast
McRank, and :func:`model_features` scores with the fast scorers.
"""
from __future__ import annotations

from twinrank.fast.rankers import classification
from twinrank.fast.trees import predict
from twinrank.reference.rankers import transfer as _reference
from twinrank.reference.rankers.transfer import SOURCE_OUTPUTS, augment, features_with

__all__ = ["domain_scores", "augment", "model_features", "default_classifier", "SOURCE_OUTPUTS"]


def default_classifier():
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.default_classifier` (the fast McRank)."""
    return classification.McRank(n_trees=50, max_leaves=8, learning_rate=0.1)


def domain_scores(source, target, make_classifier=None, n_folds: int = 5, seed: int = 0):
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.domain_scores` (default: the fast McRank)."""
    return _reference.domain_scores(source, target, make_classifier or default_classifier, n_folds, seed)


def model_features(model, X, kinds=SOURCE_OUTPUTS):
    """Numba-parallel twin of `twinrank.reference.rankers.transfer.model_features` (fast scorers)."""
    return features_with(predict.predict_ensemble, classification.expected_relevance,
                         classification.class_probabilities, model, X, kinds)

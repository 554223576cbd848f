"""Numba-parallel twin of `twinrank.reference.classification`: McRank on the fast kernels.

The classifiers are boosted by the fast :mod:`boosting` loop and scored by the fast
:func:`predict.predict_ensemble`; turning their scores into probabilities and
expected relevance is O(n_rows K), shared with the reference (the same objects:
``probabilities_from_scores``, ``relevance_weights``, ``fit_relevance_weights``,
``classifier_seed``, ``McRankModel``, ``load_model``). ``n_threads`` sets numba's
thread count during ``fit`` and ``predict``; the model does not depend on it.
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference import classification as _reference
from twinrank.reference.classification import (
    ALGORITHM, WEIGHTINGS, McRankModel, _classifier_scores, classifier_seed, fit_relevance_weights,
    load_model, probabilities_from_scores, relevance_weights,
)

from . import boosting, objectives, predict
from . import missing as missing_strategies
from ._threads import threads

__all__ = ["McRank", "McRankModel", "classifier_scores", "class_probabilities", "expected_relevance",
           "probabilities_from_scores", "relevance_weights", "fit_relevance_weights", "classifier_seed",
           "load_model", "ALGORITHM", "WEIGHTINGS"]


def classifier_scores(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.classification.classifier_scores` (parallel over rows)."""
    return _classifier_scores(model.classifiers, X, predict.predict_ensemble)


def class_probabilities(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.classification.class_probabilities`."""
    return probabilities_from_scores(classifier_scores(model, X))


def expected_relevance(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.classification.expected_relevance`."""
    return class_probabilities(model, X) @ model.relevance_weights


class McRank(_reference.McRank):
    __doc__ = "Numba-parallel twin of `twinrank.reference.classification.McRank`.\n" + (
        _reference.McRank.__doc__ or "")

    _engine = SimpleNamespace(boosting=boosting, objectives=objectives, predict=predict,
                              missing=missing_strategies)

    def _threads(self):
        return threads(self.n_threads)

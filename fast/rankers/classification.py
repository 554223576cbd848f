"""Numba-parallel twin of `twinrank.reference.rankers.classification`: McRank and Mohan's
CumulativeRegression on the engine ``FAST``.

The classifiers are boosted (the regressors grown as forests or IGBRT) by the shared loops on
the fast kernels and scored by the fast :func:`predict.predict_ensemble`; turning their outputs
into probabilities and expected relevance is O(n_rows K), shared with the reference (the same
objects: ``probabilities_from_scores``, ``probabilities_from_estimates``, ``relevance_weights``,
``fit_relevance_weights``, ``classifier_seed``). ``McRankModel``, ``CumulativeRegressionModel``
and ``load_model`` are the data model's (:mod:`twinrank.reference.io.model`). ``n_threads`` sets
numba's thread count during ``fit`` and ``predict``; the model does not depend on it.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.io.model import CumulativeRegressionModel, McRankModel, load_model
from twinrank.reference.rankers import classification as _reference
from twinrank.reference.rankers.classification import (
    ALGORITHM,
    BASES,
    CUMULATIVE_REGRESSION,
    WEIGHTINGS,
    WEIGHTS_ON,
    CumulativeRegressionParams,
    classifier_seed,
    fit_relevance_weights,
    probabilities_from_estimates,
    probabilities_from_scores,
    relevance_weights,
    run_class_probabilities,
    run_classifier_scores,
    run_expected_relevance,
)

__all__ = ["McRank", "McRankModel", "CumulativeRegression", "CumulativeRegressionModel",
           "CumulativeRegressionParams", "classifier_scores", "class_probabilities", "expected_relevance",
           "probabilities_from_scores", "probabilities_from_estimates", "relevance_weights",
           "fit_relevance_weights", "classifier_seed", "load_model", "run_classifier_scores",
           "run_class_probabilities", "run_expected_relevance", "ALGORITHM", "CUMULATIVE_REGRESSION",
           "WEIGHTINGS", "BASES", "WEIGHTS_ON"]


def classifier_scores(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.rankers.classification.classifier_scores` (parallel over rows)."""
    return run_classifier_scores(FAST, model.classifiers, X)


def class_probabilities(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.rankers.classification.class_probabilities`."""
    return run_class_probabilities(FAST, model, X)


def expected_relevance(model: McRankModel, X):
    """Numba-parallel twin of `twinrank.reference.rankers.classification.expected_relevance`."""
    return run_expected_relevance(FAST, model, X)


class McRank(_reference.McRank):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.classification.McRank`.\n" + (
        _reference.McRank.__doc__ or "")
    engine = FAST


class CumulativeRegression(_reference.CumulativeRegression):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.classification.CumulativeRegression`.\n" + (
        _reference.CumulativeRegression.__doc__ or "")
    engine = FAST

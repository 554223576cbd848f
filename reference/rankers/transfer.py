r"""Transfer learning across markets (Mohan 2010, Ch. 5): a large source, a small target.

Two protocols of the thesis, each returning a :class:`~twinrank.reference.io.data.Dataset`
the estimators train on:

**(a) Re-weighting by a domain classifier.** A classifier $D$ learns to tell target
documents (class 1) from source documents (class 0); every source document gets
$p(x) = P(D(x) = 1)$, out of fold: the source queries are cut into ``n_folds`` folds
and fold $k$ is scored by a classifier trained on the target and the other folds
(:func:`domain_scores`). The most target-like top fraction $P$ of the source is added
to the target's training set (:func:`augment`): by documents for pointwise learners,
by whole queries scored by their documents' mean $p$ for listwise ones. In the thesis
every addition hurt, larger ones more.

**(b) The source model as features.** A source model $H$ adds to each target
document (:func:`model_features`) $Q = H(x)$, its score (a McRank model's expected
relevance); $P_c = P(H(x) = c)$ and $C_c = P(H(x) \le c)$, the class probabilities of
a classification model (McRank, :mod:`~twinrank.reference.rankers.classification`), for each
label $c$ ($C$ for every label but the highest, where it is 1). In the thesis only
$Q$ helped, slightly. The adaptations that did work are LambdaSMART (``init_model``)
and model interpolation.

Rows' weights (``Dataset.weight``) go with their rows through both protocols: the domain
classifier trains on them, an augmented set keeps them (a part without weights weighs its
rows 1), and the source model's features keep the target's.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, query_folds, query_rows, stacked_weights
from twinrank.reference.rankers import classification
from twinrank.reference.rankers._estimator import estimator_on

__all__ = ["domain_scores", "augment", "model_features", "default_classifier", "run_domain_scores",
           "run_model_features", "SOURCE_OUTPUTS"]

SOURCE_OUTPUTS = ("Q", "P", "C")


def default_classifier(engine: Engine = REFERENCE):
    """The domain classifier when none is given: a small McRank of the labels {0, 1} on ``engine``."""
    return estimator_on(engine, classification.McRank)(n_trees=50, max_leaves=8, learning_rate=0.1)


def domain_scores(source: Dataset, target: Dataset, make_classifier=None, n_folds: int = 5,
                  seed: int = 0) -> np.ndarray:
    """Out-of-fold $P(\\text{target} \\mid x)$ of every source document (:func:`run_domain_scores`)."""
    return run_domain_scores(REFERENCE, source, target, make_classifier, n_folds, seed)


def run_domain_scores(engine: Engine, source: Dataset, target: Dataset, make_classifier=None,
                      n_folds: int = 5, seed: int = 0) -> np.ndarray:
    """Out-of-fold $P(\\text{target} \\mid x)$ of every source document, float64 (n_source_rows,).

    ``make_classifier()`` returns an unfitted estimator with ``fit(Dataset)`` and
    ``predict_proba`` (column 1: the target class) or ``predict``; default a McRank on ``engine``.
    The source's queries are cut by :func:`~twinrank.reference.io.data.query_folds` (``seed``).
    """
    make_classifier = make_classifier or (lambda: default_classifier(engine))
    _check_widths(source, target)
    scores = np.empty(source.n_rows)  # (n_source_rows,)
    for train_queries, held_out in query_folds(source.n_queries, n_folds, seed=seed):
        train = _stacked([_labelled(target, 1.0), _labelled(source.take_queries(train_queries), 0.0)])
        classifier = make_classifier().fit(train)
        rows = query_rows(source.query_offsets, held_out)  # (n_held_out_rows,)
        X = source.X[rows]
        scores[rows] = (classifier.predict_proba(X)[:, 1] if hasattr(classifier, "predict_proba")
                        else classifier.predict(X))
    return scores


def augment(target: Dataset, source: Dataset, top_fraction: float, *, scores,
            by: str = "documents") -> Dataset:
    """The target followed by the top ``top_fraction`` of the source by ``scores`` (:func:`domain_scores`).

    ``by="documents"``: the ``round(top_fraction * n_source_rows)`` highest-scoring source
    documents (ties by input order), kept in their queries and in source order;
    ``by="queries"``: the ``round(top_fraction * n_source_queries)`` queries of highest mean score.
    """
    if not 0.0 <= top_fraction <= 1.0:
        raise ParameterError(f"top_fraction must be in [0, 1], got {top_fraction!r}")
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (source.n_rows,):
        raise ParameterError(f"scores must have one value per source row ({source.n_rows}), got {scores.shape}")
    _check_widths(source, target)
    if by == "queries":
        means = np.add.reduceat(scores, source.query_offsets[:-1]) / source.query_sizes  # (n_queries,)
        top = np.argsort(-means, kind="stable")[:round(top_fraction * source.n_queries)]
        return _stacked([target, source.take_queries(np.sort(top))])
    if by != "documents":
        raise ParameterError(f"by must be 'documents' or 'queries', got {by!r}")
    keep = np.zeros(source.n_rows, dtype=bool)
    keep[np.argsort(-scores, kind="stable")[:round(top_fraction * source.n_rows)]] = True
    return _stacked([target, _rows_of(source, keep)])


def model_features(model, X, kinds=SOURCE_OUTPUTS):
    """``X`` (a Dataset or an array (n_rows, n_features)) with the source model's outputs appended.

    Columns, in this order: ``"Q"`` the score; ``"P"`` one probability per label; ``"C"`` one
    cumulative probability per label but the highest. ``"P"`` and ``"C"`` need a McRank model.
    """
    return run_model_features(REFERENCE, model, X, kinds)


def run_model_features(engine: Engine, model, X, kinds=SOURCE_OUTPUTS):
    """:func:`model_features` on ``engine``'s scorers."""
    kinds = tuple(kinds)
    if not kinds or any(k not in SOURCE_OUTPUTS for k in kinds):
        raise ParameterError(f"kinds must be some of {SOURCE_OUTPUTS}, got {kinds!r}")
    is_mcrank = hasattr(model, "classifiers")
    if not is_mcrank and set(kinds) - {"Q"}:
        raise ParameterError("'P' and 'C' are class probabilities: they need a McRank (classification) model")
    data = X if isinstance(X, Dataset) else None
    features = np.asarray(X.X if data is not None else X, dtype=np.float32)
    columns = []
    for kind in kinds:
        if kind == "Q":
            score = (classification.run_expected_relevance(engine, model, features) if is_mcrank
                     else engine.predict_ensemble(model, features))
            columns.append(score[:, None])
        else:
            p = classification.run_class_probabilities(engine, model, features)  # (n_rows, K)
            columns.append(p if kind == "P" else np.cumsum(p, axis=1)[:, :-1])
    wide = np.hstack([features, *columns]).astype(np.float32)  # (n_rows, d + extra)
    if data is None:
        return wide
    return Dataset(wide, data.y, data.query_offsets, qids=data.qids, comments=data.comments,
                   has_queries=data.has_queries, weight=data.weight)


def _check_widths(source: Dataset, target: Dataset) -> None:
    if source.n_features != target.n_features:
        raise ParameterError(f"the source has {source.n_features} features, the target {target.n_features}")


def _labelled(data: Dataset, label: float) -> Dataset:
    """``data`` with every label ``label`` (the domain classifier's class), its rows' weights kept."""
    return Dataset(data.X, np.full(data.n_rows, label), data.query_offsets, has_queries=data.has_queries,
                   weight=data.weight)


def _rows_of(data: Dataset, keep: np.ndarray) -> Dataset:
    """The rows ``keep`` (bool (n_rows,)) of ``data``, in order, in their queries (empty ones dropped)."""
    sizes = np.add.reduceat(keep.astype(np.int64), data.query_offsets[:-1]) if data.n_queries else np.zeros(0)
    kept = sizes > 0  # (n_queries,)
    return Dataset(data.X[keep], data.y[keep], np.r_[0, np.cumsum(sizes[kept])],
                   qids=None if data.qids is None else data.qids[kept],
                   comments=None if data.comments is None else data.comments[keep],
                   has_queries=data.has_queries, weight=None if data.weight is None else data.weight[keep])


def _stacked(parts: list) -> Dataset:
    """The data sets one after the other, queries in order (query ids and comments kept if all have them,
    weights if any has them: :func:`~twinrank.reference.io.data.stacked_weights`)."""
    sizes = np.concatenate([p.query_sizes for p in parts])  # (n_queries,)
    qids = None if any(p.qids is None for p in parts) else np.concatenate([p.qids for p in parts])
    comments = (None if any(p.comments is None for p in parts)
                else np.concatenate([p.comments for p in parts]))
    return Dataset(np.concatenate([p.X for p in parts]), np.concatenate([p.y for p in parts]),
                   np.r_[0, np.cumsum(sizes)], qids=qids, comments=comments,
                   has_queries=all(p.has_queries for p in parts), weight=stacked_weights(parts))

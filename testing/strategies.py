r"""Hypothesis strategies for ranking data: queries, labels, scores with ties, whole data sets.

Tiny shapes by default (a few queries of a few documents, few distinct feature
values), so that empty and one-document queries, queries whose labels are all
equal, tied scores, constant features and empty bins occur in every run, as in
the project's own agreement tests. Scores are small multiples of $2^{-8}$
(sums of a few are exact in floating point) unless ``exact=False``.

Use them in your own tests, with :func:`~twinrank.testing.agree.assert_twins_agree`::

    from hypothesis import given
    from twinrank.testing import assert_twins_agree, datasets, queries

    @given(queries())
    def test_lambdas_agree(problem):
        y, scores, query_offsets = problem
        assert_twins_agree(("objectives", "lambdarank"), y, scores, query_offsets, metric="map")

    @given(datasets())
    def test_trees_agree(data):
        assert_twins_agree("grow_tree", data)

This module imports hypothesis (``pip install "twinrank[testing]"``).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["query_offsets", "label_grades", "score_vectors", "queries", "datasets", "GRADE_SETS"]

GRADE_SETS = ((0.0, 1.0), (0.0, 1.0, 2.0), (0.0, 1.0, 2.0, 3.0, 4.0))
"""Label scales of real LETOR data: binary, MQ2008's 0-2, MSLR's and Yahoo's 0-4."""



@st.composite
def query_offsets(draw, *, min_queries: int = 1, max_queries: int = 5, min_docs: int = 0,
                  max_docs: int = 8):
    """Query boundaries ``[0, n_1, n_1 + n_2, ...]`` (int64) of ``min_queries..max_queries``
    queries of ``min_docs..max_docs`` documents each (empty queries when ``min_docs=0``)."""
    sizes = draw(st.lists(st.integers(min_docs, max_docs), min_size=min_queries, max_size=max_queries))
    return np.r_[0, np.cumsum(sizes)].astype(np.int64)


@st.composite
def label_grades(draw, n: int, *, grades=None):
    """``n`` relevance labels (float64) from one grade scale of :data:`GRADE_SETS` (or ``grades``);
    now and then all equal (a query, or a data set, with one label only)."""
    scale = draw(st.sampled_from(GRADE_SETS)) if grades is None else tuple(grades)
    if draw(st.integers(0, 9)) == 0:
        return np.full(n, draw(st.sampled_from(scale)), dtype=np.float64)
    return np.array(draw(st.lists(st.sampled_from(scale), min_size=n, max_size=n)), dtype=np.float64)


@st.composite
def score_vectors(draw, n: int, *, exact: bool = True, far: bool = False):
    """``n`` scores (float64) with ties: multiples of 1/4 in [-2, 2] (``exact``), or any finite
    floats of which some repeat (``exact=False``); ``far`` adds now and then +-512."""
    if exact:
        value = st.integers(-8, 8).map(lambda v: v / 4.0)
    else:
        value = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    if far:
        value = value | st.sampled_from([-512.0, 512.0])
    pool = draw(st.lists(value, min_size=1, max_size=max(1, n)))  # few distinct values: ties
    return np.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), dtype=np.float64)


@st.composite
def queries(draw, *, max_queries: int = 5, max_docs: int = 8, grades=None, exact: bool = True,
            far: bool = False):
    """``(y, scores, query_offsets)`` of tiny queries: the arguments of a metric or of an objective."""
    offsets = draw(query_offsets(max_queries=max_queries, max_docs=max_docs))
    n = int(offsets[-1])
    return draw(label_grades(n, grades=grades)), draw(score_vectors(n, exact=exact, far=far)), offsets


@st.composite
def datasets(draw, *, min_queries: int = 1, max_queries: int = 6, min_docs: int = 1, max_docs: int = 10,
             max_features: int = 4, distinct_values: int | None = 5, missing: bool = True, grades=None,
             continuous: bool = False):
    """A :class:`~twinrank.reference.io.data.Dataset` of tiny queries.

    Features take ``distinct_values`` values (ties, constant columns, few bins; None:
    any float32 in [-1e3, 1e3]) and are NaN now and then (``missing``); labels follow
    :func:`label_grades`, correlated with the first feature half of the time.

    ``continuous=True`` draws the features from a numpy generator seeded by hypothesis
    instead (distinct values, no exact ties between features; use it for whole models,
    whose split choice may otherwise hang on near-ties of float sums), labels from
    the first two features plus noise.
    """
    from twinrank.reference.io.data import Dataset

    offsets = draw(query_offsets(min_queries=min_queries, max_queries=max_queries, min_docs=min_docs,
                                 max_docs=max_docs))
    n, n_features = int(offsets[-1]), draw(st.integers(1, max_features))
    if continuous:
        return _continuous(draw(st.integers(0, 2**32 - 1)), offsets, n_features, missing,
                           draw(st.sampled_from(GRADE_SETS)) if grades is None else tuple(grades))
    if distinct_values is None:
        element = st.floats(-1e3, 1e3, width=32, allow_nan=False)
    else:
        element = st.integers(0, distinct_values - 1).map(float)
    X = np.array(draw(st.lists(element, min_size=n * n_features, max_size=n * n_features)),
                 dtype=np.float32).reshape(n, n_features)
    if missing and n and draw(st.booleans()):
        holes = draw(st.lists(st.integers(0, n * n_features - 1), max_size=max(1, n * n_features // 4)))
        X.ravel()[holes] = np.nan
    y = draw(label_grades(n, grades=grades))
    if n and draw(st.booleans()):  # labels that a tree can learn: the rank of the first feature
        scale = np.unique(y)
        ranks = np.argsort(np.argsort(np.nan_to_num(X[:, 0], nan=-1.0), kind="stable"), kind="stable")
        y = scale[ranks * len(scale) // n]
    return Dataset(X, y, offsets)


def _continuous(seed: int, offsets, n_features: int, missing: bool, grades: tuple):
    from twinrank.reference.io.data import Dataset

    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    X = rng.random((n, n_features))  # (n, n_features) distinct values
    utility = 2.0 * X[:, 0] + X[:, 1 % n_features] + 0.5 * rng.standard_normal(n)  # (n,)
    levels = np.clip(np.floor(utility / 3.5 * len(grades)), 0, len(grades) - 1).astype(int)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return Dataset(X.astype(np.float32), np.asarray(grades)[levels], offsets)

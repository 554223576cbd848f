"""Reference vs fast metrics: every metric under every convention, on tiny hypothesis queries.

Both twins add the same terms in the same (rank) order from the same gains and
discounts, so they must agree bit for bit, on copies of the inputs, whatever the
number of threads, on the fast twin's parallel path and on its one-thread path
(``PARALLEL_MIN_ROWS``, forced here both ways).
"""
import contextlib

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from twinrank.fast.evaluation import metrics as fast
from twinrank.fast.runtime._threads import threads
from twinrank.reference.evaluation import metrics as ref

NAMES = ["ndcg", "ndcg@1", "ndcg@3", "ndcg@8", "dcg", "dcg@2", "map", "map@2", "p@1", "p@3", "p@8",
         "err", "err@2", "rr", "rr@2", "auc", "pauc", "pauc@0.3", "pauc@1", "meanndcg", "rmse"]
POOLED = ["global_auc", "global_pauc_raw", "global_pauc_raw@0.3", "global_pauc_raw@1"]
PRESETS = sorted(ref.CONVENTIONS)


def graded(y, convention):
    """The labels on the convention's grades: a table gain (``letor``: 0-2) refuses any other label."""
    table = ref.GAIN_TABLES.get(ref.get_convention(convention).gain)
    return y if table is None else np.minimum(y, len(table) - 1)


@contextlib.contextmanager
def fast_path(parallel: bool):
    """Force the fast twin's prange loops (or its plain loops) whatever the input size."""
    old = fast.PARALLEL_MIN_ROWS
    fast.PARALLEL_MIN_ROWS = 0 if parallel else 10**12
    try:
        yield
    finally:
        fast.PARALLEL_MIN_ROWS = old


@st.composite
def ranked_queries(draw, max_queries=5, max_docs=7):
    """Queries of 0..max_docs documents, labels 0..4, scores from few multiples of 2**-8 (ties)."""
    sizes = draw(st.lists(st.integers(0, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.float64)
    if draw(st.booleans()):
        y[: sizes[0]] = 0.0  # a query without relevant documents
    scores = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.float64) / 256
    doc_ids = np.array(draw(st.permutations([f"d{i:02d}" for i in range(n)])), dtype=str)
    return y, scores, np.r_[0, np.cumsum(sizes)].astype(np.int64), doc_ids


@pytest.mark.parametrize("convention", PRESETS)
@given(data=ranked_queries())
def test_every_metric_agrees_bit_for_bit(convention, data):
    y, scores, offsets, doc_ids = data
    y[:] = graded(y, convention)
    originals = [a.copy() for a in data]
    expected = ref.evaluate(NAMES, y.copy(), scores.copy(), offsets.copy(), convention=convention,
                            doc_ids=doc_ids.copy(), per_query=True)
    got = fast.evaluate(NAMES, y.copy(), scores.copy(), offsets.copy(), convention=convention,
                        doc_ids=doc_ids.copy(), per_query=True)
    for name in NAMES:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{name} under {convention}")
        assert got[name].shape == (len(offsets) - 1,)
    means = NAMES if len(y) else [n for n in NAMES if n != "rmse"]  # rmse of no rows is an error
    assert fast.evaluate(means, y, scores, offsets, convention=convention, doc_ids=doc_ids) \
        == ref.evaluate(means, y, scores, offsets, convention=convention, doc_ids=doc_ids)
    for before, after in zip(originals, data):
        np.testing.assert_array_equal(before, after)


@settings(max_examples=20)  # each example starts threads 2 x 21 times
@given(data=ranked_queries(max_queries=40, max_docs=30), convention=st.sampled_from(PRESETS))
def test_prange_path_agrees_whatever_the_thread_count(data, convention):
    y, scores, offsets, doc_ids = data
    y = graded(y, convention)
    expected = ref.evaluate(NAMES, y, scores, offsets, convention=convention, doc_ids=doc_ids, per_query=True)
    for n_threads in (1, 2):
        with fast_path(parallel=True), threads(n_threads):
            got = fast.evaluate(NAMES, y, scores, offsets, convention=convention, doc_ids=doc_ids, per_query=True)
        for name in NAMES:
            np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{name}, {n_threads} threads")


def test_fast_reexports_the_shared_conventions():
    assert fast.Convention is ref.Convention and fast.CONVENTIONS is ref.CONVENTIONS
    public = {n for n in dir(ref) if not n.startswith("_") and callable(getattr(ref, n))
              and getattr(getattr(ref, n), "__module__", "") == ref.__name__}
    assert public <= set(dir(fast)), public - set(dir(fast))


def test_large_queries_agree_with_float_scores():
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 300, size=60)
    offsets = np.r_[0, np.cumsum(sizes)]
    y = rng.integers(0, 5, size=offsets[-1]).astype(np.float64)
    scores = rng.standard_normal(offsets[-1])
    scores[::7] = 0.5  # ties across long queries, where merge-sort stability matters
    assert offsets[-1] < fast.PARALLEL_MIN_ROWS  # so the forced prange path is not the default
    for convention in ("lightgbm", "letor", "ranklib", "mslr"):
        expected = ref.evaluate(NAMES, graded(y, convention), scores, offsets, convention=convention,
                                per_query=True)
        with fast_path(parallel=True):
            got = fast.evaluate(NAMES, graded(y, convention), scores, offsets, convention=convention,
                                per_query=True)
        for name in NAMES:
            np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{name} under {convention}")


@pytest.mark.parametrize("convention", PRESETS)
@given(data=ranked_queries(), all_one_label=st.sampled_from([None, 0.0, 2.0]))
def test_pooled_metrics_agree_bit_for_bit(convention, data, all_one_label):
    """Global AUC and raw pAUC: ties, empty and one-document queries, sets of one class only."""
    y, scores, offsets, doc_ids = data
    y = graded(y if all_one_label is None else np.full_like(y, all_one_label), convention)
    assume(len(y) > 0)
    expected = ref.evaluate(POOLED, y, scores, offsets, convention=convention, doc_ids=doc_ids)
    got = fast.evaluate(POOLED, y, scores, offsets, convention=convention, doc_ids=doc_ids)
    assert got == expected
    assert all(isinstance(v, float) for v in got.values())


def test_pooled_metrics_agree_on_large_tied_data():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, size=50_000).astype(np.float64)
    scores = np.round(rng.standard_normal(50_000) * 8) / 8  # some hundred groups of tied scores
    offsets = np.r_[0, np.cumsum(rng.integers(1, 200, size=600))]
    offsets = np.r_[offsets[offsets < len(y)], len(y)]
    for p in (0.01, 0.05, 0.5, 1.0):
        assert fast.global_pauc_raw(y, scores, offsets, p=p) == ref.global_pauc_raw(y, scores, offsets, p=p)
    assert fast.global_auc(y, scores, offsets) == ref.global_auc(y, scores, offsets)

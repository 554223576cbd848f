"""Properties every metric must have, under every convention (reference and fast alike)."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.fast.evaluation import metrics as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics as ref

TWINS = [ref, fast]
PRESETS = sorted(ref.CONVENTIONS)
RANKING = ["ndcg", "ndcg@1", "ndcg@3", "ndcg@9", "dcg@3", "map", "map@2", "p@3", "err", "err@2",
           "rr", "auc", "pauc", "meanndcg"]
BOUNDED = [n for n in RANKING if not n.startswith("dcg")]


@st.composite
def queries(draw, max_queries=4, max_docs=6, min_docs=0):
    sizes = draw(st.lists(st.integers(min_docs, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.float64)
    scores = np.array(draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)), dtype=np.float64)
    ids = np.array([f"doc{i:03d}" for i in draw(st.permutations(range(n)))], dtype=str)
    return y, scores, np.r_[0, np.cumsum(sizes)].astype(np.int64), ids


def graded(y, convention):
    """The labels on the convention's grades: a table gain (``letor``: 0-2) refuses any other label."""
    table = ref.GAIN_TABLES.get(ref.get_convention(convention).gain)
    return y if table is None else np.minimum(y, len(table) - 1)


def evaluate(twin, names, data, convention, **kw):
    y, scores, offsets, ids = data
    return twin.evaluate(names, graded(y, convention), scores, offsets, convention=convention, doc_ids=ids,
                         per_query=True, **kw)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
@pytest.mark.parametrize("convention", PRESETS)
@given(data=queries())
def test_bounded_metrics_lie_in_unit_interval(twin, convention, data):
    for name, values in evaluate(twin, BOUNDED, data, convention).items():
        assert np.all((values >= 0.0) & (values <= 1.0 + 1e-12)), name


@pytest.mark.parametrize("convention", PRESETS)
@given(data=queries(min_docs=1))
def test_ideal_order_scores_one(convention, data):
    """Ranking by the convention's own gain gives NDCG = 1 where a positive gain exists (and k <= n for letor)."""
    y, _, offsets, ids = data
    c = ref.get_convention(convention)
    y = graded(y, c)
    gains = ref.gain(y, c)
    has_gain = np.bincount(np.repeat(np.arange(len(offsets) - 1), np.diff(offsets)), weights=gains > 0,
                           minlength=len(offsets) - 1) > 0
    for twin in TWINS:
        for k in (None, 1, 3):
            values = twin.ndcg(y, gains, offsets, k=k, convention=c, doc_ids=ids)
            defined = has_gain & ((np.diff(offsets) >= k) if (k and c.ndcg_k_beyond_n == "zero") else True)
            np.testing.assert_allclose(values[defined], 1.0, rtol=1e-14)
        np.testing.assert_allclose(twin.mean_ndcg(y, gains, offsets, convention=c, doc_ids=ids)[has_gain], 1.0)


@pytest.mark.parametrize("convention", PRESETS)
@given(data=queries())
def test_invariant_to_strictly_increasing_transforms_of_the_scores(convention, data):
    """s -> s**3 + 2 s + 7 is exact on small integers, so ties stay ties and order stays order."""
    y, scores, offsets, ids = data
    moved = (y, scores ** 3 + 2 * scores + 7, offsets, ids)
    for twin in TWINS:
        before, after = evaluate(twin, RANKING, data, convention), evaluate(twin, RANKING, moved, convention)
        for name in RANKING:
            np.testing.assert_array_equal(before[name], after[name], err_msg=name)


@pytest.mark.parametrize("convention", ["lightgbm", "ranklib", "trec"])
@given(data=queries(min_docs=1), extra=st.integers(1, 3))
def test_appending_irrelevant_documents_at_the_bottom_changes_nothing(convention, data, extra):
    y, scores, offsets, ids = data
    names = ["ndcg", "ndcg@1", "ndcg@3", "ndcg@9", "dcg@3", "map", "map@2", "err", "err@2", "rr"]
    sizes = np.diff(offsets)
    new_sizes = sizes + extra
    new_offsets = np.r_[0, np.cumsum(new_sizes)]
    keep = np.concatenate([np.arange(a, a + s) for a, s in zip(new_offsets[:-1], sizes)])  # old rows' places
    y2, s2 = np.zeros(new_offsets[-1]), np.full(new_offsets[-1], scores.min() - 1.0)
    y2[keep], s2[keep] = y, scores
    ids2 = np.array([f"zz{i:04d}" for i in range(new_offsets[-1])], dtype=str)
    ids2[keep] = ids
    for twin in TWINS:
        before = evaluate(twin, names, data, convention)
        after = evaluate(twin, names, (y2, s2, new_offsets, ids2), convention)
        for name in names:
            np.testing.assert_allclose(after[name], before[name], rtol=1e-13, atol=0, err_msg=name)


@given(data=queries(min_docs=1))
def test_letor_ndcg_at_k_is_zero_below_k_documents(data):
    y, scores, offsets, ids = data
    for twin in TWINS:
        for convention in ("letor", "mslr"):
            values = twin.ndcg(graded(y, convention), scores, offsets, k=4, convention=convention)
            assert np.all(values[np.diff(offsets) < 4] == 0.0)


@given(data=queries(min_docs=1))
def test_cut_convention_ndcg_at_k_beyond_n_is_the_whole_list(data):
    y, scores, offsets, _ = data
    for twin in TWINS:
        np.testing.assert_array_equal(twin.ndcg(y, scores, offsets, k=50), twin.ndcg(y, scores, offsets))


@given(data=queries())
def test_pauc_over_the_whole_range_is_the_auc(data):
    y, scores, offsets, ids = data
    for twin in TWINS:
        np.testing.assert_allclose(twin.pauc(y, scores, offsets, p=1.0), twin.auc(y, scores, offsets),
                                   rtol=1e-14, atol=1e-15)


@given(data=queries(min_docs=2))
def test_reversing_a_tie_free_ranking_mirrors_the_auc(data):
    y, _, offsets, ids = data
    scores = np.arange(len(y), dtype=np.float64)  # no ties
    for twin in TWINS:
        up = twin.auc(y, scores, offsets, convention="ranklib")
        down = twin.auc(y, -scores, offsets, convention="ranklib")
        both = (up > 0) | (down > 0)  # queries with relevant and irrelevant documents
        np.testing.assert_allclose(up[both] + down[both], 1.0, rtol=1e-14)


@given(data=queries())
def test_stable_ties_follow_input_order_and_trec_ties_follow_doc_ids(data):
    """All scores tied: 'stable' ranks rows in file order, 'trec' by descending doc id."""
    y, _, offsets, ids = data
    tied = np.zeros(len(y))
    by_position = dataclasses.replace(ref.CONVENTIONS["trec"], ties="stable")
    order_ids = np.array([f"{len(y) - i:05d}" for i in range(len(y))], dtype=str)  # descending = file order
    for twin in TWINS:
        np.testing.assert_array_equal(twin.dcg(y, tied, offsets, k=3, convention="trec", doc_ids=order_ids),
                                      twin.dcg(y, tied, offsets, k=3, convention=by_position))
        np.testing.assert_array_equal(twin.dcg(y, tied, offsets, k=3, convention="trec", doc_ids=ids),
                                      twin.dcg(y, _scores_ranking_by_descending_id(ids), offsets, k=3,
                                               convention=by_position))


def _scores_ranking_by_descending_id(ids):
    """Tie-free scores that rank documents by descending doc id."""
    return np.argsort(np.argsort(ids)).astype(np.float64)


@given(data=queries(), permutation=st.randoms())
def test_queries_are_evaluated_independently(data, permutation):
    y, scores, offsets, ids = data
    n_queries = len(offsets) - 1
    order = list(range(n_queries))
    permutation.shuffle(order)
    rows = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in order] + [np.zeros(0, int)])
    sizes = np.diff(offsets)[order]
    shuffled = (y[rows], scores[rows], np.r_[0, np.cumsum(sizes)], ids[rows])
    for twin in TWINS:
        before, after = evaluate(twin, RANKING, data, "trec"), evaluate(twin, RANKING, shuffled, "trec")
        for name in RANKING:
            np.testing.assert_array_equal(after[name], before[name][order], err_msg=name)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_bad_input_is_a_clear_error(twin):
    y, s, off = np.array([1.0, 0.0]), np.array([0.5, 0.1]), np.array([0, 2])
    with pytest.raises(ParameterError, match="NaN score"):
        twin.ndcg(y, np.array([np.nan, 1.0]), off)
    with pytest.raises(ParameterError, match="same length"):
        twin.ndcg(y, s[:1], off)
    with pytest.raises(ParameterError, match="query_offsets"):
        twin.ndcg(y, s, np.array([0, 1]))
    with pytest.raises(ParameterError, match="k must be"):
        twin.ndcg(y, s, off, k=0)
    with pytest.raises(ParameterError, match="doc_ids"):
        twin.ndcg(y, s, off, convention="trec")
    with pytest.raises(ParameterError, match="unknown convention"):
        twin.ndcg(y, s, off, convention="nope")
    with pytest.raises(ParameterError, match="unknown metric"):
        twin.evaluate(["ndgc@10"], y, s, off)
    with pytest.raises(ParameterError, match="needs a cutoff"):
        twin.evaluate(["p"], y, s, off)
    with pytest.raises(ParameterError, match="err_max_label"):
        twin.err(np.array([5.0, 0.0]), s, off, convention="ranklib")
    with pytest.raises(ParameterError, match="p must be"):
        twin.pauc(y, s, off, p=0.0)
    with pytest.raises(ParameterError, match="must be one of"):
        ref.Convention(gain="cubic")


def test_doc_ids_come_from_letor_comments():
    ids = ref.doc_ids_from_comments(["docid = GX01-2 inc = 1", "docid=B7"])
    assert ids.tolist() == ["GX01-2", "B7"]
    with pytest.raises(ParameterError, match="row 1 has no 'docid"):
        ref.doc_ids_from_comments(["docid = A", "no id here"])


def test_metric_names_parse_to_their_functions():
    assert ref.parse_metric("NDCG@10") == ("ndcg", {"k": 10})
    assert ref.parse_metric("map") == ("average_precision", {})
    assert ref.parse_metric("pauc@0.1") == ("pauc", {"p": 0.1})
    assert ref.parse_metric("mrr") == ref.parse_metric("rr") == ("reciprocal_rank", {})
    assert ref.parse_metric("meanndcg") == ("mean_ndcg", {})
    assert fast.metric_by_name("err@5").function is fast.err
    assert ref.metric_by_name("err@5").function is ref.err

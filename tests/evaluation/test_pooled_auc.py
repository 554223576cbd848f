"""Mohan's (2010) Table 6.1 metrics: global AUC, raw partial AUC, and NDCG scoring 1/2 without relevant documents.

``global_auc`` and ``global_pauc_raw`` rank the documents of all queries together (one number for
the whole set, not a mean over queries); a tie counts 1/2, as in the Mann-Whitney statistic.
Oracles: scikit-learn's ``roc_auc_score`` on the pooled documents, and the ROC curve integrated
by hand (``np.interp`` along its points).
"""
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from twinrank.cli import main
from twinrank.fast.evaluation import metrics as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics as ref

TWINS = [ref, fast]

# Two queries; pooled, the ranking is  rel 0.9 | irr 0.8 | rel 0.7 = irr 0.7 (tied) | irr 0.3 | irr 0.1.
# Its ROC curve: (0, 0) -> (0, 1/2) -> (1/4, 1/2) -> the tie, a diagonal -> (1/2, 1) -> (3/4, 1) -> (1, 1).
Y = np.array([1.0, 0.0, 0.0, 2.0, 0.0, 0.0])
SCORES = np.array([0.9, 0.3, 0.8, 0.7, 0.7, 0.1])
OFFSETS = np.array([0, 2, 6])


def roc_area_by_hand(y, scores, p):
    """The ROC points at every distinct threshold, highest first, integrated piecewise linearly over [0, p]."""
    rel = y > 0
    thresholds = np.unique(scores)[::-1]
    fpr = np.r_[0.0, [(~rel & (scores >= t)).sum() / (~rel).sum() for t in thresholds]]
    tpr = np.r_[0.0, [(rel & (scores >= t)).sum() / rel.sum() for t in thresholds]]
    x = np.unique(np.r_[fpr[fpr < p], p])  # the points inside [0, p] and p itself
    top = np.array([tpr[fpr == v].max() if (fpr == v).any() else np.interp(v, fpr, tpr) for v in x])
    bottom = np.array([tpr[fpr == v].min() if (fpr == v).any() else np.interp(v, fpr, tpr) for v in x])
    return float(np.sum((x[1:] - x[:-1]) * (bottom[1:] + top[:-1]) / 2))


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_the_hand_example(twin):
    # 6.5 of the 8 (relevant, irrelevant) pairs are ordered: 4 + 2, and the tie counts 1/2
    assert twin.global_auc(Y, SCORES, OFFSETS) == 6.5 / 8
    # [0, 1/4] at height 1/2, then the tie's diagonal from 1/2 to 1 over [1/4, 1/2]
    assert twin.global_pauc_raw(Y, SCORES, OFFSETS, p=0.5) == 1 / 8 + 1 / 4 * (1 / 2 + 1) / 2
    # cut inside the diagonal, at 3/8 (height 3/4)
    assert twin.global_pauc_raw(Y, SCORES, OFFSETS, p=0.375) == 1 / 8 + 1 / 8 * (1 / 2 + 3 / 4) / 2
    assert twin.global_pauc_raw(Y, SCORES, OFFSETS, p=0.2) == 0.2 * 1 / 2
    for p in (0.05, 0.2, 0.375, 0.5, 0.9, 1.0):
        assert twin.global_pauc_raw(Y, SCORES, OFFSETS, p=p) == pytest.approx(roc_area_by_hand(Y, SCORES, p),
                                                                              rel=1e-14)
    # not the mean of the per-query AUCs (1 and 2/3: the second query's tie is ranked by input order)
    assert twin.auc(Y, SCORES, OFFSETS).mean() == pytest.approx((1 + 2 / 3) / 2)


def tied_data(seed, n_queries=40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, size=n_queries)
    n = int(sizes.sum())
    y = rng.integers(0, 5, size=n).astype(float) * (rng.random(n) < 0.5)
    scores = np.round(rng.standard_normal(n) * 3) / 2  # many ties, across and inside queries
    return y, scores, np.r_[0, np.cumsum(sizes)]


@pytest.mark.parametrize("seed", range(5))
def test_global_auc_is_scikit_learns_auc_of_the_pooled_documents(seed):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    y, scores, offsets = tied_data(seed)
    for twin in TWINS:
        for convention in ("lightgbm", "ranklib", "mohan"):  # relevant: label > 0 in all three
            assert twin.global_auc(y, scores, offsets, convention=convention) \
                == pytest.approx(sklearn_metrics.roc_auc_score(y > 0, scores), rel=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_the_raw_area_is_scikit_learns_before_mcclish_standardises_it(seed):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    y, scores, offsets = tied_data(seed)
    for twin in TWINS:
        for p in (0.05, 0.3):
            raw = twin.global_pauc_raw(y, scores, offsets, p=p)
            mcclish = 0.5 * (1 + (raw - p * p / 2) / (p - p * p / 2))
            assert mcclish == pytest.approx(sklearn_metrics.roc_auc_score(y > 0, scores, max_fpr=p), rel=1e-12)
            assert raw == pytest.approx(roc_area_by_hand(y, scores, p), rel=1e-12)


@st.composite
def pooled_data(draw):
    sizes = draw(st.lists(st.integers(0, 6), min_size=1, max_size=4))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.float64)
    scores = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.float64)
    return y, scores, np.r_[0, np.cumsum(sizes)].astype(np.int64)


@given(data=pooled_data(), p=st.sampled_from([0.01, 0.05, 0.25, 1.0]))
def test_the_raw_area_lies_in_0_p_and_reaches_the_auc_at_p_1(data, p):
    y, scores, offsets = data
    for twin in TWINS:
        raw = twin.global_pauc_raw(y, scores, offsets, p=p)
        assert 0.0 <= raw <= p * (1 + 1e-15)
        np.testing.assert_allclose(twin.global_pauc_raw(y, scores, offsets, p=1.0),
                                   twin.global_auc(y, scores, offsets), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_without_both_classes_the_convention_s_no_relevant_value(twin):
    zeros, scores, offsets = np.zeros(4), np.array([1.0, 2.0, 2.0, 0.0]), np.array([0, 1, 4])
    for convention, value in (("lightgbm", 1.0), ("ranklib", 0.0), ("mohan", 0.5)):
        assert twin.global_auc(zeros, scores, offsets, convention=convention) == value
        assert twin.global_pauc_raw(zeros, scores, offsets, convention=convention) == value * 0.05
        assert twin.global_auc(zeros + 1, scores, offsets, convention=convention) == value  # all relevant


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_names_means_and_no_per_query_values(twin):
    got = twin.evaluate(["global_auc", "global_pauc_raw", "GLOBAL_PAUC_RAW@0.375", "auc"], Y, SCORES, OFFSETS)
    assert got == {"global_auc": 6.5 / 8, "global_pauc_raw": 0.05 / 2, "GLOBAL_PAUC_RAW@0.375": 13 / 64,
                   "auc": (1 + 2 / 3) / 2}
    with pytest.raises(ParameterError, match="'global_auc' is one value over the documents of all queries"):
        twin.evaluate(["ndcg", "global_auc"], Y, SCORES, OFFSETS, per_query=True)
    assert twin.metric_by_name("global_pauc_raw@0.5")(Y, SCORES, OFFSETS) == 5 / 16


def test_the_parser_knows_the_pooled_names():
    assert ref.parse_metric("global_auc") == ("global_auc", {})
    assert ref.parse_metric("global_pauc_raw") == ("global_pauc_raw", {})
    assert ref.parse_metric("Global_PAUC_raw@0.05") == ("global_pauc_raw", {"p": 0.05})
    with pytest.raises(ParameterError, match="takes no @ argument"):
        ref.parse_metric("global_auc@10")
    with pytest.raises(ParameterError, match=r"p must be in \(0, 1\]"):
        ref.parse_metric("global_pauc_raw@0")
    for twin in TWINS:
        with pytest.raises(ParameterError, match=r"global_pauc_raw's p must be in \(0, 1\], got 1.5"):
            twin.global_pauc_raw(Y, SCORES, OFFSETS, p=1.5)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_mohan_s_ndcg_scores_a_query_without_relevant_documents_one_half(twin):
    y = np.array([0.0, 0.0, 0.0, 2.0, 0.0, 1.0])  # a query of zeros, then one with relevant documents
    scores, offsets = np.array([0.3, 0.1, 0.2, 0.5, 0.7, 0.2]), np.array([0, 3, 6])
    for name in ("ndcg", "ndcg@10", "ndcg@2"):
        mohan = twin.evaluate([name], y, scores, offsets, convention="mohan", per_query=True)[name]
        lightgbm = twin.evaluate([name], y, scores, offsets, convention="lightgbm", per_query=True)[name]
        assert mohan[0] == 0.5 and lightgbm[0] == 1.0
        assert mohan[1] == lightgbm[1]  # the same gains and discounts otherwise
    assert ref.CONVENTIONS["mohan"].no_relevant_value == 0.5


def test_the_evaluate_command_accepts_the_pooled_names_and_the_new_presets(tmp_path, capsys):
    data, scores = tmp_path / "test.txt", tmp_path / "scores.txt"
    qids = np.repeat([1, 2], np.diff(OFFSETS))
    data.write_text("".join(f"{int(label)} qid:{q} 1:0.5\n" for label, q in zip(Y, qids)))
    scores.write_text("".join(f"{s}\n" for s in SCORES))
    for convention in ("mohan", "mslr"):
        assert main(["evaluate", "--data", str(data), "--scores", str(scores), "--metric",
                     "global_auc,global_pauc_raw@0.5,ndcg", "--convention", convention, "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        expected = ref.evaluate(["global_auc", "global_pauc_raw@0.5", "ndcg"], Y, SCORES, OFFSETS,
                                convention=convention)
        assert printed == {"convention": convention, **expected}

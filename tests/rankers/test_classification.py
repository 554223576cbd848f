"""McRank in both twins: same classifiers, cross-feeding, probability properties, weights, files, CLI."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.fast.rankers import classification as fast_mc
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.errors import ModelFormatError, ParameterError
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import read_scores, write_letor
from twinrank.reference.rankers import classification as ref_mc

SMALL = dict(n_trees=6, learning_rate=0.3, max_leaves=6, min_samples_leaf=3)


def sigmoid(s):
    return 1.0 / (1.0 + np.exp(-s))


def same_structure(a, b):
    assert a.n_trees == b.n_trees and a.base_score == b.base_score
    for s, t in zip(a.trees, b.trees):
        for name in ("feature", "bin_threshold", "left", "right", "missing", "count"):
            np.testing.assert_array_equal(getattr(s, name), getattr(t, name), err_msg=name)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("options", [{}, {"subsample": 0.6, "feature_fraction": 0.5, "seed": 3}])
def test_both_twins_grow_the_same_classifiers(options):
    # Random data; split ties on real data: test_agreement_real.py.
    train = ranking_data(seed=1, n_queries=40, max_docs=30, missing=0.1)
    params = dict(SMALL, min_samples_leaf=10, **options)
    ref = ref_mc.McRank(**params).fit(train)
    fast = fast_mc.McRank(**params).fit(train)
    assert len(ref.model_.classifiers) == 4  # labels 0..4
    for a, b in zip(ref.model_.classifiers, fast.model_.classifiers):
        same_structure(a, b)
    np.testing.assert_allclose(ref.predict_proba(train), fast.predict_proba(train), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref.predict(train), fast.predict(train), rtol=1e-9, atol=1e-12)


def test_cross_feeding_each_twin_scores_the_others_model():
    train, test = ranking_data(seed=2), ranking_data(seed=3)
    ref = ref_mc.McRank(**SMALL).fit(train)
    fast = fast_mc.McRank(**SMALL).fit(train)
    np.testing.assert_allclose(fast_mc.McRank.predict(ref, test), ref.predict(test), rtol=1e-12)
    np.testing.assert_allclose(ref_mc.McRank.predict(fast, test), fast.predict(test), rtol=1e-12)
    np.testing.assert_allclose(fast_mc.expected_relevance(ref.model_, test.X),
                               ref_mc.expected_relevance(ref.model_, test.X), rtol=1e-12)


def test_same_seed_same_model_on_any_thread_count_and_a_seed_per_classifier():
    train = ranking_data(seed=4)
    options = dict(SMALL, subsample=0.5, feature_fraction=0.5, seed=7)
    one = fast_mc.McRank(**options, n_threads=1).fit(train).model_
    two = fast_mc.McRank(**options, n_threads=2).fit(train).model_
    for a, b in zip(one.classifiers, two.classifiers):
        assert a.n_trees == b.n_trees and all(s.equals(t) for s, t in zip(a.trees, b.trees))
    seeds = [c.params["seed"] for c in one.classifiers]
    assert seeds == [ref_mc.classifier_seed(7, j) for j in range(len(seeds))]
    assert seeds[0] == np.random.SeedSequence(7).spawn(1)[0].generate_state(1)[0]
    assert len(set(seeds)) == len(seeds)
    other = fast_mc.McRank(**dict(options, seed=8)).fit(train).model_
    assert not all(s.equals(t) for s, t in zip(one.classifiers[0].trees, other.classifiers[0].trees))


scores_matrices = st.integers(1, 5).flatmap(lambda k: arrays(
    np.float64, st.tuples(st.integers(1, 6), st.just(k)),
    elements=st.sampled_from([-40.0, -3.5, -1.0, -0.25, 0.0, 0.25, 1.0, 3.5, 40.0])))


@given(scores_matrices)
def test_probabilities_are_non_negative_and_sum_to_one(scores):
    p = ref_mc.probabilities_from_scores(scores)
    assert p.shape == (scores.shape[0], scores.shape[1] + 1)
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=4e-16)


@given(scores_matrices)
def test_monotone_scores_give_the_plain_differences(scores):
    """Already non-increasing P(y > c_j) are used as they are: p_k = P(y > c_{k-1}) - P(y > c_k)."""
    scores = -np.sort(-scores, axis=1)  # each row non-increasing in j
    above = np.c_[np.ones(len(scores)), sigmoid(scores), np.zeros(len(scores))]  # P(y > c_{k-1})
    np.testing.assert_allclose(ref_mc.probabilities_from_scores(scores), above[:, :-1] - above[:, 1:],
                               rtol=0, atol=1e-15)


def test_crossing_classifiers_are_made_monotone_by_a_running_minimum():
    s = np.array([[0.0, 1.0]])  # P(y > c_0) = 1/2 < P(y > c_1) = sigmoid(1): crossing
    np.testing.assert_allclose(ref_mc.probabilities_from_scores(s), [[0.5, 0.0, 0.5]])
    with pytest.raises(ParameterError, match="shape"):
        ref_mc.probabilities_from_scores(np.zeros(3))


def test_with_no_trees_the_probabilities_are_the_class_frequencies():
    train = ranking_data(seed=5)
    est = fast_mc.McRank(n_trees=0).fit(train)
    labels, counts = np.unique(train.y, return_counts=True)
    np.testing.assert_allclose(est.predict_proba(train.X[:3]), np.tile(counts / train.n_rows, (3, 1)),
                               rtol=1e-12)
    assert est.predict(train.X[:1])[0] == pytest.approx(np.mean(train.y), rel=1e-12)


def two_label_data(seed=6):
    data = ranking_data(seed=seed)
    return Dataset(data.X, np.where(data.y >= 2, 3.0, 1.0), data.query_offsets)  # labels 1, 3


def test_with_two_labels_expected_relevance_is_a_monotone_function_of_the_classifier():
    train = two_label_data()
    est = ref_mc.McRank(**SMALL).fit(train)
    assert len(est.model_.classifiers) == 1
    s = ref_mc.classifier_scores(est.model_, train.X)[:, 0]
    expected = est.predict(train)
    np.testing.assert_allclose(expected, 1.0 + 2.0 * sigmoid(s), rtol=1e-14)  # F(1) = 1, F(3) = 3
    order = np.argsort(s, kind="stable")
    assert (np.diff(expected[order]) >= 0).all()


def test_linear_weighting_is_the_array_of_the_labels():
    train = ranking_data(seed=7)  # labels 0..4
    linear = fast_mc.McRank(**SMALL).fit(train)
    array = fast_mc.McRank(**SMALL, weighting=[0, 1, 2, 3, 4]).fit(train)
    np.testing.assert_array_equal(linear.predict(train), array.predict(train))


def test_named_weightings():
    labels = np.array([0.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(ref_mc.relevance_weights(labels, "square"), [0, 1, 4, 16])
    np.testing.assert_array_equal(ref_mc.relevance_weights(labels, "exp2"), [0, 1, 3, 15])
    with pytest.raises(ParameterError, match="weighting"):
        ref_mc.relevance_weights(labels, "cubic")
    with pytest.raises(ParameterError, match="4 finite numbers"):
        ref_mc.relevance_weights(labels, [0, 1, 2])


def test_least_squares_weights_recover_a_linear_relation():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=50)  # (50, 4) rows on the simplex
    w = np.array([0.0, 0.5, 2.0, 7.0])
    np.testing.assert_allclose(ref_mc.fit_relevance_weights(p, p @ w), w, rtol=1e-10, atol=1e-12)


def test_fit_weights_finds_the_grades_of_separable_classes():
    """Labels 0, 2, 5 decided by one feature: near one-hot probabilities, weights near the labels."""
    rng = np.random.default_rng(1)
    x = rng.random(300)
    y = np.select([x < 0.3, x < 0.6], [0.0, 2.0], 5.0)
    train = Dataset(np.c_[x, rng.random(300)].astype(np.float32), y, np.arange(0, 301, 10))
    est = fast_mc.McRank(n_trees=30, learning_rate=0.5, max_leaves=4, min_samples_leaf=5,
                         fit_weights=True).fit(train)
    np.testing.assert_allclose(est.relevance_weights_, [0.0, 2.0, 5.0], atol=0.05)
    np.testing.assert_allclose(est.relevance_weights_,
                               np.linalg.lstsq(est.predict_proba(train), y, rcond=None)[0], rtol=1e-12)


def test_save_load_round_trip_in_both_directions(tmp_path):
    train = ranking_data(seed=9, missing=0.2)
    fast = fast_mc.McRank(**SMALL, weighting=[0, 1, 3, 7, 15]).fit(train)
    path = tmp_path / "model.json"
    fast.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temporary file left
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["algorithm"], len(doc["classifiers"])) == ("twinrank-model", "mcrank", 4)
    back = ref_mc.McRank.load(path)
    assert back.get_params() == dict(fast.get_params(), weighting=[0.0, 1.0, 3.0, 7.0, 15.0])
    np.testing.assert_array_equal(back.predict_proba(train), ref_mc.McRank.predict_proba(fast, train))
    np.testing.assert_array_equal(back.predict(train), ref_mc.McRank.predict(fast, train))
    assert isinstance(ref_mc.load_model(path), ref_mc.McRankModel)


def test_model_files_are_checked(tmp_path):
    train = ranking_data(seed=10)
    path = tmp_path / "model.json"
    fast_mc.McRank(**SMALL).fit(train).save(path)
    doc = json.loads(path.read_text())
    doc["classifiers"][0]["version"] = 99
    (tmp_path / "v99.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="version 99"):
        fast_mc.McRank.load(tmp_path / "v99.json", verify_checksum=False)
    doc = json.loads(path.read_text())
    doc["relevance_weights"] = doc["relevance_weights"][:-1]
    (tmp_path / "short.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="short.json: 5 labels need 4 classifiers and 5 weights"):
        ref_mc.load_model(tmp_path / "short.json", verify_checksum=False)
    LambdaMART(n_trees=2, max_leaves=3, min_samples_leaf=2).fit(train).save(tmp_path / "lm.json")
    with pytest.raises(ModelFormatError, match="'lambdamart' model is not an McRank model"):
        fast_mc.McRank.load(tmp_path / "lm.json")


def test_bad_parameters_are_clear_errors():
    train = ranking_data(seed=11)
    one_label = Dataset(train.X, np.ones(train.n_rows), train.query_offsets)
    with pytest.raises(ParameterError, match="two distinct labels"):
        ref_mc.McRank(**SMALL).fit(one_label)
    with pytest.raises(ParameterError, match="5 finite numbers"):
        fast_mc.McRank(**SMALL, weighting=[0, 1]).fit(train)
    with pytest.raises(ParameterError, match="not both"):
        fast_mc.McRank(**SMALL, weighting=[0, 1, 2, 3, 4], fit_weights=True).fit(train)
    with pytest.raises(ParameterError, match="subsample"):
        fast_mc.McRank(subsample=0.0).fit(train)
    with pytest.raises(ParameterError, match="not fitted"):
        fast_mc.McRank().predict_proba(train)


def test_history_and_callback_name_the_threshold():
    train, valid = ranking_data(seed=12), ranking_data(seed=13)
    seen = []
    est = fast_mc.McRank(**SMALL, eval_train=True).fit(train, eval_set=[valid],
                                                       callback=lambda i, r: seen.append((i, *r)))
    assert seen[0] == (1, "y>0:train:ndcg@10", "y>0:valid:ndcg@10") and seen[-1][0] == SMALL["n_trees"]
    assert len(est.history_["y>3:valid:ndcg@10"]) == est.model_.classifiers[3].n_trees


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_train_mcrank_then_predict(tmp_path, engine):
    train, test = ranking_data(seed=14, n_queries=20), ranking_data(seed=15, n_queries=8)
    write_letor(train, tmp_path / "train.txt")
    write_letor(test, tmp_path / "test.txt")
    model = tmp_path / "model.json"
    assert main(["train", "--algorithm", "mcrank", "--train", str(tmp_path / "train.txt"),
                 "--model", str(model), "--trees", "4", "--leaves", "4", "--min-samples-leaf", "2",
                 "--subsample", "0.8", "--weighting", "0,1,3,7,15", "--quiet", "--engine", engine]) == 0
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "test.txt"),
                 "--output", str(tmp_path / "scores.txt"), "--engine", engine]) == 0
    est = fast_mc.McRank.load(model)
    assert est.subsample == 0.8 and est.weighting == [0.0, 1.0, 3.0, 7.0, 15.0]
    np.testing.assert_allclose(read_scores(tmp_path / "scores.txt"), est.predict(test), rtol=1e-12)


def test_cli_fit_weights_flag_and_flags_of_other_algorithms(tmp_path, capsys):
    write_letor(ranking_data(seed=16, n_queries=10), tmp_path / "train.txt")
    args = ["train", "--train", str(tmp_path / "train.txt"), "--trees", "2", "--leaves", "3",
            "--min-samples-leaf", "2", "--quiet"]
    assert main(args + ["--algorithm", "mcrank", "--fit-weights", "true",
                        "--model", str(tmp_path / "m.json")]) == 0
    assert fast_mc.McRank.load(tmp_path / "m.json").fit_weights is True
    assert main(args + ["--weighting", "exp2", "--model", str(tmp_path / "lm.json")]) == 2
    assert "--algorithm lambdamart does not take --weighting" in capsys.readouterr().err


def test_the_docs_quote_the_reference_as_it_is():
    root = Path(__file__).resolve().parents[2]
    quotes = re.findall(r'```python title="reference/rankers/classification.py"\n(.*?)```',
                        (root / "docs" / "classification.md").read_text(), re.DOTALL)
    source = {line.strip() for line in (root / "reference" / "rankers" / "classification.py").read_text().splitlines()}
    quoted = [line.strip() for quote in quotes for line in quote.splitlines() if line.strip()]
    assert len(quotes) >= 2 and not [line for line in quoted if line not in source]

"""``fit(..., group=, sample_weight=)``: query sizes as LGBMRanker takes them, and weighted fits.

Oracles: weights of 1 are no weights, bit for bit; a weight of 2 on a query is that query given
twice (on features with fewer distinct values than bins, so that the bins do not depend on how
many rows there are, and with no row-count rule in the way: ``min_samples_leaf=1``, no sampling);
and both twins grow the same weighted models, on the bundled MQ2008 and on hypothesis's data.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from synthetic import ranking_data
from twins import FAST, REFERENCE

from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, load_mq2008

BOOSTED = dict(n_trees=8, learning_rate=0.3, max_leaves=8, min_samples_leaf=1)
ESTIMATORS = {  # name: (reference class, fast class, parameters for which duplication is weighting)
    "LambdaMART": (REFERENCE.LambdaMART, FAST.LambdaMART, BOOSTED),
    "LambdaMART-quantized": (REFERENCE.LambdaMART, FAST.LambdaMART,
                             dict(BOOSTED, quantized_gradients=True)),
    "GBRT": (REFERENCE.GBRT, FAST.GBRT, BOOSTED),
    "DART": (REFERENCE.DART, FAST.DART, dict(BOOSTED, drop_rate=0.3)),
    "RandomForest": (REFERENCE.RandomForest, FAST.RandomForest,
                     dict(n_trees=4, max_leaves=16, min_samples_leaf=1, feature_fraction=0.5, bootstrap=False)),
    "IGBRT": (REFERENCE.IGBRT, FAST.IGBRT,
              dict(BOOSTED, rf_n_trees=3, rf_max_leaves=8, rf_min_samples_leaf=1, rf_bootstrap=False)),
    "McRank": (REFERENCE.McRank, FAST.McRank, dict(BOOSTED, n_trees=4)),
    "McRank-fit_weights": (REFERENCE.McRank, FAST.McRank,
                           dict(BOOSTED, n_trees=4, fit_weights=True)),
}


# stochastic rounding draws one uniform per row: a query given twice is rounded twice, independently
DUPLICATION = [name for name in ESTIMATORS if name != "LambdaMART-quantized"]


def rounded(data: Dataset, decimals: int = 2) -> Dataset:
    """``data`` with its features rounded: at most 101 distinct values a feature, fewer than the bins."""
    return Dataset(np.round(data.X, decimals), data.y, data.query_offsets)


def duplicated(data: Dataset, copies: np.ndarray) -> Dataset:
    """Each query ``q`` given ``copies[q]`` times in a row."""
    return data.take_queries(np.repeat(np.arange(data.n_queries), copies))


@pytest.fixture(scope="module")
def mq2008():
    train, valid, test = load_mq2008(fold=1)
    small = rounded(train.take_queries(np.arange(120)))
    copies = np.random.default_rng(0).integers(1, 3, small.n_queries)  # each query 1 or 2 times
    return small, copies, rounded(test)


@pytest.mark.parametrize("name", DUPLICATION)
def test_weight_two_on_a_query_is_the_query_twice(name, mq2008):
    train, copies, test = mq2008
    ref_cls, fast_cls, params = ESTIMATORS[name]
    weighted = fast_cls(**params).fit(train, sample_weight=copies.astype(float))  # one weight per query
    twice = fast_cls(**params).fit(duplicated(train, copies))
    np.testing.assert_allclose(weighted.predict(test), twice.predict(test), rtol=1e-9, atol=1e-9)
    plain = fast_cls(**params).fit(train)
    assert np.max(np.abs(weighted.predict(test) - plain.predict(test))) > 1e-3  # the weights matter


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_weights_of_one_are_no_weights_and_the_twins_agree_on_weighted_fits(name, mq2008):
    train, copies, test = mq2008
    ref_cls, fast_cls, params = ESTIMATORS[name]
    for cls in (ref_cls, fast_cls):
        ones = cls(**params).fit(train, sample_weight=np.ones(train.n_rows))
        np.testing.assert_array_equal(ones.predict(test), cls(**params).fit(train).predict(test))
    rows = np.random.default_rng(1).uniform(0.0, 3.0, train.n_rows)  # per row, some near 0
    ref, fast = (cls(**params).fit(train, sample_weight=rows) for cls in (ref_cls, fast_cls))
    np.testing.assert_allclose(ref.predict(test), fast.predict(test), rtol=1e-9, atol=1e-9)


def test_blmart_members_train_on_their_queries_weights(mq2008):
    train, copies, test = mq2008
    params = dict(n_models=2, n_trees=4, max_leaves=6, min_samples_leaf=1)
    ref, fast = (cls(**params).fit(train, sample_weight=copies.astype(float))
                 for cls in (REFERENCE.BLMART, FAST.BLMART))
    np.testing.assert_allclose(ref.predict(test), fast.predict(test), rtol=1e-9, atol=1e-9)
    plain = FAST.BLMART(**params).fit(train)
    assert np.max(np.abs(fast.predict(test) - plain.predict(test))) > 1e-3


@given(seed=st.integers(0, 2**16), per_query=st.booleans(), zeros=st.booleans())
def test_the_twins_agree_on_weighted_lambdamart_and_gbrt(seed, per_query, zeros):
    data = ranking_data(12, max_docs=8, n_features=3, seed=seed, levels=5)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 4.0, data.n_queries if per_query else data.n_rows)
    if zeros:
        w[rng.random(len(w)) < 0.3] = 0.0
    w[0] = 1.0  # never all zero
    params = dict(n_trees=4, learning_rate=0.5, max_leaves=4, min_samples_leaf=1)
    for ref_cls, fast_cls in ((REFERENCE.LambdaMART, FAST.LambdaMART), (REFERENCE.GBRT, FAST.GBRT)):
        ref, fast = (cls(**params).fit(data, sample_weight=w) for cls in (ref_cls, fast_cls))
        np.testing.assert_allclose(ref.predict(data), fast.predict(data), rtol=1e-9, atol=1e-9)


def test_group_is_qid_by_sizes():
    data = ranking_data(10, seed=4)
    by_group = FAST.LambdaMART(**BOOSTED).fit(data.X, data.y, group=data.query_sizes)
    by_qid = FAST.LambdaMART(**BOOSTED).fit(data.X, data.y, qid=data.qid)
    np.testing.assert_array_equal(by_group.predict(data), by_qid.predict(data))


@pytest.mark.parametrize("kwargs, message", [
    (dict(qid="qid", group="group"), "not both"),
    (dict(group=[3, 2]), "sums to 5 rows"),
    (dict(group=[0, 4]), "must be >= 1"),
    (dict(group=[1.5, 2.5]), "integer"),
    (dict(qid="qid", sample_weight=[1.0, 2.0]), "one weight per row"),
    (dict(qid="qid", sample_weight="negative"), "finite and >= 0"),
    (dict(qid="qid", sample_weight="zeros"), "every weight is 0"),
])
def test_bad_groups_and_weights_are_refused(kwargs, message):
    data = ranking_data(6, seed=5)
    values = {"qid": data.qid, "group": data.query_sizes, "negative": np.r_[-1.0, np.ones(data.n_rows - 1)],
              "zeros": np.zeros(data.n_rows)}
    kwargs = {k: values.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(ParameterError, match=message):
        REFERENCE.LambdaMART(**BOOSTED).fit(data.X, data.y, **kwargs)


@pytest.mark.parametrize("params, message", [
    (dict(split_gain="least_squares"), "split_gain='least_squares'"),
    (dict(step="oc"), "step='oc'"),
    (dict(step="optimal", step_on="train"), "on the training set"),
])
def test_settings_that_count_rows_refuse_weights(params, message):
    data = ranking_data(6, seed=6)
    with pytest.raises(ParameterError, match=message):
        FAST.LambdaMART(**params).fit(data, sample_weight=np.ones(data.n_rows), eval_set=[data])


def test_a_weighted_eval_set_is_refused_and_a_weighted_dataset_is_the_same_as_sample_weight():
    data = ranking_data(8, seed=7)
    w = np.arange(1.0, data.n_rows + 1)
    weighted = Dataset(data.X, data.y, data.query_offsets, weight=w)
    with pytest.raises(ParameterError, match="validation metrics are unweighted"):
        REFERENCE.LambdaMART(**BOOSTED).fit(data, eval_set=[weighted])
    with pytest.raises(ParameterError, match="not both"):
        REFERENCE.LambdaMART(**BOOSTED).fit(weighted, sample_weight=w)
    a = REFERENCE.LambdaMART(**BOOSTED).fit(weighted)
    b = REFERENCE.LambdaMART(**BOOSTED).fit(data, sample_weight=w)
    np.testing.assert_array_equal(a.predict(data), b.predict(data))

"""twinrank estimators as scikit-learn citizens: checks, model selection, routing of qid."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402
from synthetic import ranking_data  # noqa: E402

import twinrank.fast as fast  # noqa: E402
import twinrank.reference as reference  # noqa: E402
from twinrank.reference.errors import ParameterError  # noqa: E402
from twinrank.reference.evaluation.metrics import ndcg  # noqa: E402
from twinrank.sklearn.glue import QueryKFold, QueryShuffleSplit, make_ranking_scorer  # noqa: E402

SMALL = dict(n_trees=3, max_leaves=3, min_samples_leaf=1)
ESTIMATORS = {"LambdaMART": SMALL, "GBRT": SMALL, "RandomForest": dict(SMALL, query_subsample=1.0),
              "IGBRT": dict(SMALL, rf_n_trees=2, rf_max_leaves=3), "McRank": SMALL}

NEEDS_QID = ("scikit-learn's generic checks call fit(X, y) with no query ids; a ranker "
             "has no ranking without them, and guessing one query would hide a forgotten qid")
# scikit-learn 1.9's checks (estimator_checks._yield_all_checks) that cannot apply to a
# ranker, each with its reason. Every check not named here runs and must pass.
NOT_FOR_RANKERS = {name: NEEDS_QID for name in [
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input",
    "check_n_features_in_after_fitting", "check_positive_only_tag_during_fit",
    "check_estimators_dtypes", "check_complex_data", "check_dtype_object",
    "check_estimators_empty_data_messages", "check_pipeline_consistency",
    "check_estimator_sparse_tag", "check_estimator_sparse_array", "check_estimator_sparse_matrix",
    "check_estimators_pickle", "check_f_contiguous_array_estimator",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged", "check_fit_idempotent",
    "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
    "check_requires_y_none",
    # the sample_weight checks fit(X, y, sample_weight=) without qid too; what they check is
    # test_sample_weight_forms here and tests/rankers/test_sample_weight.py (equivalence by duplication)
    "check_all_zero_sample_weights_error", "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weights_list", "check_sample_weights_not_an_array", "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series", "check_sample_weights_shape",
]}
NOT_FOR_RANKERS["check_estimators_unfitted"] = (
    "an unfitted twinrank estimator raises twinrank's ParameterError (a ValueError), the error "
    "type the CLI and the docs promise, not scikit-learn's NotFittedError")


@pytest.fixture(autouse=True)
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def arrays(n_queries=24, seed=0):
    data = ranking_data(n_queries=n_queries, max_docs=8, seed=seed)
    return data.X, data.y, data.qid


# The protocol is written out (twinrank/_sklearn_protocol.py) so the core never imports
# scikit-learn; the check's warning about not inheriting BaseEstimator says just that.
@pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from")
@pytest.mark.parametrize("name", ESTIMATORS)
def test_check_estimator_subset(name):
    est = getattr(reference, name)(**ESTIMATORS[name])
    results = check_estimator(est, expected_failed_checks=NOT_FOR_RANKERS, on_fail="raise",
                              on_skip=None)
    ran = [r["check_name"] for r in results if r["status"] == "passed"]
    assert "check_get_params_invariance" in ran and "check_set_params" in ran


def test_tags_and_clone_keep_requests():
    est = fast.LambdaMART(n_trees=2).set_fit_request(eval_set=True)
    tags = get_tags(est)
    assert tags.estimator_type is None and tags.input_tags.allow_nan and tags.target_tags.required
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert copy.get_metadata_routing().fit.requests["eval_set"] is True
    with pytest.raises(TypeError, match="unknown"):
        est.set_fit_request(group=True)  # query sizes cannot be split with the rows: route qid


def test_sample_weight_forms():
    """What scikit-learn's sample-weight checks ask, with the query ids: a list, a pandas Series and an
    array give one model; the array is not changed; all-zero weights and a wrong length are refused."""
    pd = pytest.importorskip("pandas")
    X, y, qid = arrays()
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    kept = w.copy()
    fits = [fast.GBRT(**SMALL).fit(X, y, qid, sample_weight=form) for form in (w, list(w), pd.Series(w))]
    np.testing.assert_array_equal(w, kept)
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0].predict(X), other.predict(X))
    for bad, message in ((np.zeros(len(y)), "every weight is 0"), (w[:-1], "one weight per row")):
        with pytest.raises(ParameterError, match=message):
            fast.GBRT(**SMALL).fit(X, y, qid, sample_weight=bad)


def test_sample_weight_is_routed_when_requested():
    X, y, qid = arrays()
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    with sklearn.config_context(enable_metadata_routing=True):
        est = fast.LambdaMART(n_trees=3, min_samples_leaf=1).set_fit_request(sample_weight=True)
        search = GridSearchCV(est, {"max_leaves": [3]}, cv=QueryKFold(3)).fit(X, y, qid=qid, sample_weight=w)
        with pytest.raises(Exception, match="sample_weight"):  # not requested: scikit-learn refuses to drop it
            GridSearchCV(fast.LambdaMART(n_trees=3), {"max_leaves": [3]}, cv=QueryKFold(3)).fit(
                X, y, qid=qid, sample_weight=w)
    direct = fast.LambdaMART(n_trees=3, max_leaves=3, min_samples_leaf=1).fit(X, y, qid, sample_weight=w)
    plain = fast.LambdaMART(n_trees=3, max_leaves=3, min_samples_leaf=1).fit(X, y, qid)
    np.testing.assert_array_equal(search.best_estimator_.predict(X), direct.predict(X))
    assert not np.array_equal(direct.predict(X), plain.predict(X))


@pytest.mark.parametrize("twin", [reference, fast])
def test_grid_search_with_group_kfold_picks_a_configuration(twin):
    """GridSearchCV over a ranker with GroupKFold runs and picks."""
    X, y, qid = arrays()
    search = GridSearchCV(twin.LambdaMART(n_trees=4, min_samples_leaf=1),
                          {"max_leaves": [2, 7], "learning_rate": [0.1, 0.3]}, cv=GroupKFold(3),
                          scoring=make_ranking_scorer("ndcg@10"))
    search.fit(X, y, groups=qid, qid=qid)
    assert search.best_params_["max_leaves"] in (2, 7)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.predict(X).shape == (len(X),)


def test_grid_search_default_score_is_mean_ndcg10_with_query_kfold():
    X, y, qid = arrays()
    search = GridSearchCV(fast.GBRT(n_trees=3, min_samples_leaf=1), {"max_leaves": [2, 4]},
                          cv=QueryKFold(3)).fit(X, y, qid=qid)  # no groups=, no scoring=
    best = search.best_estimator_
    data = reference.Dataset.from_qid(X, y, qid)
    expected = ndcg(data.y, best.predict(X), data.query_offsets, k=10).mean()
    assert best.score(X, y, qid=qid) == pytest.approx(expected)


def test_cross_validate_routes_qid_to_fit_scorer_and_splitter():
    X, y, qid = arrays()
    scores = cross_validate(reference.LambdaMART(n_trees=3, min_samples_leaf=1), X, y,
                            cv=QueryKFold(3), params={"qid": qid},
                            scoring={"ndcg": make_ranking_scorer("ndcg@5", convention="mslr"),
                                     "map": make_ranking_scorer("map")})
    assert scores["test_ndcg"].shape == (3,) and np.isfinite(scores["test_ndcg"]).all()
    assert (scores["test_map"] > 0).all()


@pytest.mark.parametrize("splitter", [QueryKFold(4), QueryShuffleSplit(3, test_size=0.3, random_state=0),
                                      GroupKFold(4)])
def test_splits_keep_queries_whole_and_contiguous(splitter):
    X, y, qid = arrays()
    for train, test in splitter.split(X, y, groups=qid):
        assert not set(qid[train]) & set(qid[test])
        for rows in (train, test):
            assert (np.diff(rows) > 0).all()  # input order: the rows of a query stay together
            reference.Dataset.from_qid(X[rows], y[rows], qid[rows])  # contiguity is checked here


def test_fit_takes_grouped_but_unsorted_query_ids():
    X, y, qid = arrays()
    relabelled = (1000 - qid) * 7  # same grouping, ids descending and sparse
    a = reference.LambdaMART(n_trees=3, min_samples_leaf=1).fit(X, y, qid=qid).predict(X)
    b = reference.LambdaMART(n_trees=3, min_samples_leaf=1).fit(X, y, qid=relabelled).predict(X)
    np.testing.assert_array_equal(a, b)


def test_clear_errors_without_qid():
    X, y, qid = arrays()
    est = reference.GBRT(n_trees=2).fit(X, y, qid=qid)
    with pytest.raises(ParameterError, match="needs qid"):
        est.score(X, y)
    with pytest.raises(ParameterError, match="needs qid"):
        make_ranking_scorer()(est, X, y)
    with pytest.raises(ParameterError, match="query ids"):
        next(QueryKFold(3).split(X, y))
    with pytest.raises(ParameterError, match="unknown metric|metric"):
        make_ranking_scorer("nonsense@3")


def test_rmse_scorer_is_negated():
    X, y, qid = arrays()
    est = reference.GBRT(n_trees=2).fit(X, y, qid=qid)
    rmse = float(np.sqrt(np.mean((est.predict(X) - y) ** 2)))
    assert make_ranking_scorer("rmse")(est, X, y, qid=qid) == pytest.approx(-rmse)

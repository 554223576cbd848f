"""scikit-learn glue: a ranking scorer and query-aware cross-validation splitters.

This is the one module that imports scikit-learn (it is optional: ``pip install
scikit-learn``). The estimators themselves speak scikit-learn's protocol without it
(``clone``, tags, ``score``, ``set_fit_request``; :mod:`._sklearn_protocol`).

Model selection needs the query ids at three places, the splitter (whole queries
per fold), ``fit`` and the scorer, so it runs with metadata routing on::

    import sklearn
    from sklearn.model_selection import GridSearchCV
    from twinrank.fast import LambdaMART
    from twinrank.sklearn.glue import QueryKFold, make_ranking_scorer

    sklearn.set_config(enable_metadata_routing=True)
    search = GridSearchCV(LambdaMART(n_trees=50), {"max_leaves": [7, 31]},
                          cv=QueryKFold(3), scoring=make_ranking_scorer("ndcg@10"))
    search.fit(X, y, qid=qid)

Every estimator requests ``qid`` for ``fit`` and ``score`` by default; the scorer and
the splitters request it too, so ``qid=`` is the only thing to pass. scikit-learn's
own ``GroupKFold`` works as well (``groups=qid``): its folds keep queries whole and,
since it takes rows in their order, the rows of a query stay contiguous.
"""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import GroupKFold, GroupShuffleSplit
from sklearn.utils.metadata_routing import MetadataRequest

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.evaluation.metrics import evaluate, metric_by_name
from twinrank.reference.io.data import Dataset

__all__ = ["RankingScorer", "make_ranking_scorer", "QueryKFold", "QueryShuffleSplit"]


class RankingScorer:
    """A scikit-learn scorer ``scorer(estimator, X, y, qid=...)``: the mean of a ranking
    metric over the queries (:func:`twinrank.reference.evaluation.metrics.evaluate`).

    Greater is better for every metric but ``rmse``, whose score is negated (scikit-learn
    maximises scores). It requests ``qid`` through metadata routing.
    """

    def __init__(self, metric: str = "ndcg@10", convention: str = DEFAULT_CONVENTION):
        metric_by_name(metric)  # an unknown metric fails here, not in the middle of a search
        self.metric, self.convention = metric, convention
        self._sign = -1.0 if metric == "rmse" else 1.0

    def __call__(self, estimator, X, y=None, qid=None) -> float:
        if not isinstance(X, Dataset) and qid is None:
            raise ParameterError(
                f"the {self.metric} scorer needs qid: enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=... to the "
                "search's fit (or cross_validate's params={'qid': qid})")
        data = X if isinstance(X, Dataset) else Dataset.from_qid(X, y, qid)
        scores = estimator.predict(data.X)
        value = evaluate(self.metric, data.y, scores, data.query_offsets,
                         convention=self.convention)[self.metric]
        return self._sign * float(value)

    def get_metadata_routing(self) -> MetadataRequest:
        request = MetadataRequest(owner=self)
        request.score.add_request(param="qid", alias=True)
        return request

    def __repr__(self) -> str:
        return f"make_ranking_scorer({self.metric!r}, convention={self.convention!r})"


def make_ranking_scorer(metric: str = "ndcg@10", convention: str = DEFAULT_CONVENTION) -> RankingScorer:
    """A scorer for ``GridSearchCV(scoring=...)`` / ``cross_validate(scoring=...)``.

    ``metric``: any name :func:`twinrank.reference.evaluation.metrics.evaluate` knows (``"ndcg@10"``,
    ``"map"``, ``"err@5"``, ...); ``convention``: a preset of
    :mod:`twinrank.reference.evaluation.conventions` (``"lightgbm"``, ``"ranklib"``, ``"letor"``, ``"trec"``).
    """
    return RankingScorer(metric, convention)


class _QuerySplitter:
    """Mixin: ``split`` takes the query ids as ``qid`` (routed) or as ``groups``."""

    __metadata_request__split = {"qid": True}

    def split(self, X, y=None, groups=None, qid=None):
        """Train and test row indices, each query wholly on one side; rows in input order."""
        return super().split(X, y, _query_ids(groups, qid))

    def get_n_splits(self, X=None, y=None, groups=None, qid=None):
        return super().get_n_splits(X, y, groups if qid is None else qid)


class QueryKFold(_QuerySplitter, GroupKFold):
    """K folds of whole queries (scikit-learn's ``GroupKFold`` with the query ids as groups).

    Parameters as ``GroupKFold``: ``n_splits``, ``shuffle``, ``random_state``. ``split``
    takes ``qid=`` (routed by ``GridSearchCV``/``cross_validate``) or ``groups=``.
    """


class QueryShuffleSplit(_QuerySplitter, GroupShuffleSplit):
    """Random train/test splits of whole queries (``GroupShuffleSplit`` on the query ids).

    Parameters as ``GroupShuffleSplit``: ``n_splits``, ``test_size``, ``train_size``,
    ``random_state``.
    """


def _query_ids(groups, qid) -> np.ndarray:
    if qid is None and groups is None:
        raise ParameterError("a query splitter needs the query ids: qid=... (or groups=...)")
    if qid is not None and groups is not None and not np.array_equal(qid, groups):
        raise ParameterError("qid and groups disagree; give one of them")
    return np.asarray(qid if qid is not None else groups)

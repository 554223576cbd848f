"""scikit-learn glue for either twin (defined once, in ``twinrank.reference.sklearn``).

The scorer and the splitters call only the estimator's ``predict`` and the shared
metrics, so the same objects serve ``twinrank.fast`` estimators.
"""
from twinrank.reference.sklearn import (QueryKFold, QueryShuffleSplit, RankingScorer,
                                        make_ranking_scorer)

__all__ = ["RankingScorer", "make_ranking_scorer", "QueryKFold", "QueryShuffleSplit"]

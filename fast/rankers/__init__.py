"""The papers' rankers on the fast twin's engine: same classes, same parameters, same models.

Every estimator module is imported here, so that each class is bound to the fast engine
(:func:`~twinrank.reference.rankers._estimator.estimator_on`) before any is used: a fast bag's
members are the fast LambdaMART, the fast transfer's domain classifier the fast McRank.
"""
from twinrank.fast.rankers import (  # noqa: F401  (each binds its classes to the fast engine)
    bagging,
    classification,
    dart,
    forest,
    gbrt,
    lambdamart,
)

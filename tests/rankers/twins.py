"""Every estimator class of each twin by name, for the ranker tests' tables.

``REFERENCE.LambdaMART`` is ``twinrank.reference.rankers.lambdamart.LambdaMART``, ``FAST.LambdaMART`` its
fast twin, and ``TWINS["fast"]`` is ``FAST``. A module, not a conftest fixture, because the tests'
``parametrize`` tables name the classes when the test module is imported.
"""
from types import SimpleNamespace

from twinrank.fast.rankers import (
    bagging as fast_bagging,
    classification as fast_classification,
    dart as fast_dart,
    forest as fast_forest,
    gbrt as fast_gbrt,
    lambdamart as fast_lambdamart,
)
from twinrank.reference.rankers import (
    bagging as ref_bagging,
    classification as ref_classification,
    dart as ref_dart,
    forest as ref_forest,
    gbrt as ref_gbrt,
    lambdamart as ref_lambdamart,
)


def estimators(*modules) -> SimpleNamespace:
    """The public classes of ``modules`` (their ``__all__``) as attributes of one namespace."""
    return SimpleNamespace(**{name: getattr(module, name) for module in modules for name in module.__all__})


REFERENCE = estimators(ref_lambdamart, ref_gbrt, ref_forest, ref_dart, ref_classification, ref_bagging)
FAST = estimators(fast_lambdamart, fast_gbrt, fast_forest, fast_dart, fast_classification, fast_bagging)
TWINS = {"reference": REFERENCE, "fast": FAST}

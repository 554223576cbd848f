"""twinrank.testing: pin the two twins together on your own data.

* :data:`REGISTRY` (:mod:`~twinrank.testing.registry`): every twinned component, the
  reference and fast functions it names, its tolerance and how to build its inputs.
* :func:`assert_twins_agree` / :func:`check_twin` / :func:`run_registry`
  (:mod:`~twinrank.testing.agree`): run components on both twins and compare.
* Hypothesis strategies for ranking data (:mod:`~twinrank.testing.strategies`):
  :func:`datasets`, :func:`queries`, :func:`query_offsets`, :func:`score_vectors`,
  :func:`label_grades`. They need ``hypothesis``; importing this package does not
  (``twinrank verify`` runs without it).
* The course's exercises (:mod:`~twinrank.grading.exercises`, ``twinrank exercise``): functions
  students write, graded against the fast twin with these strategies.
"""
from twinrank.testing.agree import (
    Result,
    TwinComparison,
    assert_twins_agree,
    check_twin,
    compare_twins,
    run_registry,
    sample_queries,
    twin_namespace,
)
from twinrank.testing.registry import REGISTRY, TOLERANCES, Inputs, Tolerance, Twin, get, layers, names

_STRATEGIES = ("datasets", "queries", "query_offsets", "score_vectors", "label_grades")

__all__ = ["REGISTRY", "TOLERANCES", "Tolerance", "Twin", "Inputs", "get", "names", "layers",
           "Result", "TwinComparison", "compare_twins", "check_twin", "run_registry", "assert_twins_agree",
           "twin_namespace", "sample_queries", *_STRATEGIES]


_RENAMED = {"Comparison": "TwinComparison", "compare": "compare_twins"}  # 0.1's names (stats has a compare)


def __getattr__(name):
    if name in _RENAMED:
        import warnings

        warnings.warn(f"twinrank.testing.{name} is now twinrank.testing.{_RENAMED[name]}; the old name works "
                      "until twinrank 0.3", DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    if name in _STRATEGIES:  # hypothesis is imported only when a strategy is asked for
        from twinrank.testing import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

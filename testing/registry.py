r"""The twin registry: one row per twinned component, one tolerance table.

Every row names a function (or an estimator class) by module and name, looked up
at call time in ``twinrank.reference.<module>`` and in ``twinrank.fast.<module>``,
the tolerance its outputs must meet, and how to build its inputs from any ranking
data set. The agreement tests (``tests/testing/test_registry.py``), :mod:`twinrank.testing`
and ``twinrank verify`` all read this one table (JAX's ``lax_reference`` registry is
the model), so a new component is one new row here.

**Inputs.** A row's ``inputs(data, rng)`` turns a :class:`~twinrank.reference.io.data.Dataset`
(its features, labels and queries) and a ``numpy.random.Generator`` into the
arguments of one call (:class:`Inputs`); both twins get deep copies of them, so a
kernel writing into its arguments cannot make the other twin agree by accident.
Only the *reference* twin is used to prepare inputs (e.g. the bins a histogram
reads). Where bit equality is owed (histograms, split choice, one tree), the
gradients and hessians are small multiples of $2^{-8}$: sums of a few of them
are exact in any order (docs/agreement.md).

**Outputs.** A row's ``outputs(result)`` flattens what the function returned into
named arrays (a :class:`~twinrank.reference.io.model.Tree` into its node arrays, a
fitted estimator into its test scores and its trees). Integer, boolean and
structure arrays must be equal; float arrays must meet the row's tolerance.

**Tolerances** (:data:`TOLERANCES`), keyed by the kind of arithmetic, as elementwise
bounds $|f - r| \le a + \rho\,|r|$, with $a$ multiplied by
$1 + \max |r|$ when ``scaled``:

========== ================== ==========================================================
key        $(\rho, a)$         why
========== ================== ==========================================================
exact      (0, 0)             the same operations in the same order, or exact sums
objectives (1e-10, 1e-10 sc.) pair sums in another order; $e^{x-y}$ as a product
models     (1e-9, 1e-12)      many rounds of float sums in another order (leaf values,
                              scores); the splits themselves must be equal
========== ================== ==========================================================

**Modules.** The table is assembled here from private modules, one idea each:
``_twin`` (a row, its inputs, the tolerances), ``_inputs`` (input pieces the rows
share), ``_kernel_rows`` (metrics to scoring, and the exact line search), ``_query_rows`` (rank
correlations of two rankings, the query-level normalisation of features) and ``_model_rows`` (whole
estimators, and the diagnosis of a tied split); every public name is importable from here.
"""
from __future__ import annotations

from twinrank.testing._inputs import STEP, exact_gradients, tied_scores, train_test
from twinrank.testing._kernel_rows import (
    METRIC_NAMES,
    _bag_rows,
    _bin_rows,
    _combine_rows,
    _diagnostics_rows,
    _metric_rows,
    _objective_rows,
    _scoring_rows,
    _tree_rows,
    split_parts,
    tree_parts,
)
from twinrank.testing._model_rows import (
    ESTIMATOR_TREES,
    NOISE,
    STRUCTURE,
    _estimator_rows,
    model_parts,
    split_tie,
)
from twinrank.testing._query_rows import _feature_rows, _rank_correlation_rows
from twinrank.testing._twin import TOLERANCES, Inputs, Tolerance, Twin

__all__ = ["Tolerance", "TOLERANCES", "Inputs", "Twin", "REGISTRY", "get", "names", "layers",
           "METRIC_NAMES", "ESTIMATOR_TREES", "tree_parts", "model_parts", "split_parts",
           "STEP", "exact_gradients", "tied_scores", "train_test", "split_tie",
           "STRUCTURE", "NOISE"]


# ---------------------------------------------------------------- the table

REGISTRY: tuple = tuple(_metric_rows() + _rank_correlation_rows() + _feature_rows() + _bin_rows() + _tree_rows()
                        + _objective_rows() + _scoring_rows() + _combine_rows() + _bag_rows() + _diagnostics_rows()
                        + _estimator_rows())
"""Every twinned component, in layer order (metrics first, whole models last)."""


def names() -> list:
    """The component names of :data:`REGISTRY`, in order."""
    return [row.name for row in REGISTRY]


def layers() -> list:
    """The layers of :data:`REGISTRY`, in order, each once."""
    return list(dict.fromkeys(row.layer for row in REGISTRY))


def get(name: str) -> Twin:
    """The registry row called ``name``; KeyError listing the names if there is none."""
    for row in REGISTRY:
        if row.name == name:
            return row
    raise KeyError(f"no twin component {name!r}; components are: {', '.join(names())}")

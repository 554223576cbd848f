r"""Run twinned components on both twins and compare: one record per component.

:func:`check_twin` runs one registry row on a data set and returns a
:class:`Result`; :func:`run_registry` runs every row (``twinrank verify``);
:func:`assert_twins_agree` raises ``AssertionError`` when the twins disagree, for a
registry row, for any function named by ``(module, name)``, or for a callable of a
twin (a user's own pipeline). Nothing here imports hypothesis.

How outputs are compared (:func:`compare_twins`), part by part (the named arrays of a
row's ``outputs``): both twins must return the same parts of the same shapes;
integer, boolean and string parts must be equal; float parts must have NaN at the
same places, equal infinities and $|f - r| \le$ the tolerance's bound
elsewhere. The report gives, over every compared element,

* ``max_abs_diff`` $= \max |f - r|$, and
* ``max_rel_diff``: the largest over parts of $\max_i |f_i - r_i| / \max_i |r_i|$
  (relative to the part's scale, so values near zero do not blow it up; 0 for a part
  that is all zeros in both twins, infinite if only the reference's is).

The comparison and the records (``compare_twins``, ``TwinComparison``, ``Result``) are written
in ``_compare``; this module runs the twins, and every public name is importable here.
"""
from __future__ import annotations

import importlib
import time
from typing import Callable

import numpy as np

from twinrank._layout import twin_module
from twinrank.testing import registry
from twinrank.testing._compare import Result, TwinComparison, _describe, _number, compare_twins
from twinrank.testing.registry import TOLERANCES, Inputs, Tolerance, Twin

__all__ = ["Result", "TwinComparison", "compare_twins", "check_twin", "run_registry", "assert_twins_agree",
           "twin_namespace", "sample_queries"]

TWINS = ("reference", "fast")


# ---------------------------------------------------------------- running a row

def _run_both(call_twin: Callable[[str], object], outputs: Callable, tolerance: Tolerance, raw=None):
    """Run ``call_twin("reference")`` and ``call_twin("fast")``; compare; (TwinComparison, seconds).

    ``raw``, a dict, receives each twin's result as returned.
    """
    results, errors, seconds = {}, {}, {}
    raw = {} if raw is None else raw
    for twin in TWINS:
        start = time.perf_counter()
        try:
            raw[twin] = call_twin(twin)
            results[twin] = outputs(raw[twin])
        except Exception as e:  # noqa: BLE001 -- a twin's error is part of the verdict
            errors[twin] = e
        seconds[twin] = round(time.perf_counter() - start, 3)
    if errors:
        return _error_verdict(errors), seconds
    return compare_twins(results["reference"], results["fast"], tolerance), seconds


def _error_verdict(errors: dict) -> TwinComparison:
    """Both twins refused the input in the same way: agreement; otherwise a disagreement."""
    described = {twin: f"{type(e).__name__}: {e}" for twin, e in errors.items()}
    if len(errors) == 2 and described["reference"] == described["fast"]:
        return TwinComparison(True, 0.0, 0.0, 0, f"both twins raise {described['reference']}")
    return TwinComparison(False, None, None, 0,
                      "; ".join(f"{twin} raises {text}" for twin, text in described.items())
                      + ("" if len(errors) == 2 else
                         f"; {next(t for t in TWINS if t not in errors)} returns normally"))


def check_twin(row: Twin | str, data, *, seed: int = 0, tolerance=None, outputs=None) -> Result:
    """Run one registry row on ``data`` (a Dataset) in both twins and compare; never raises.

    The row builds its inputs from ``data`` and its own generator (:meth:`Twin.rng`),
    once; each twin gets a deep copy. A row whose inputs cannot be built (e.g. data
    without features) is reported as failed with the reason. ``tolerance`` and
    ``outputs`` override the row's (see :func:`assert_twins_agree`).
    """
    row = registry.get(row) if isinstance(row, str) else row
    name, tol = _tolerance_of(tolerance, row.tolerance)
    try:
        inputs = row.inputs(data, row.rng(seed))
    except Exception as e:  # noqa: BLE001
        comparison, seconds, note = TwinComparison(False, None, None, 0,
                                               f"inputs not built: {type(e).__name__}: {e}"), {}, ""
    else:
        raw = {}
        comparison, seconds = _run_both(lambda twin: row.call(row.resolve(twin), inputs.copy()),
                                        outputs or row.outputs, tol, raw)
        note = inputs.note
    diagnosis = ""
    if not comparison.passed and row.diagnose is not None and len(raw) == 2:
        diagnosis = row.diagnose(inputs, raw["reference"], raw["fast"])
    return Result(row.name, row.layer, row.module, row.function, comparison.passed, comparison.max_abs_diff,
                  comparison.max_rel_diff, tol.to_dict(), name, comparison.n_values,
                  comparison.detail, note, seconds, comparison.allowed_abs_diff, diagnosis)


def run_registry(data, *, seed: int = 0, components=None, progress: Callable | None = None) -> list:
    """:func:`check_twin` of every registry row (or of the named ``components``), in order.

    ``progress(i, n, result)`` is called after each component.
    """
    rows = registry.REGISTRY if components is None else [registry.get(c) for c in components]
    results = []
    for i, row in enumerate(rows, start=1):
        results.append(check_twin(row, data, seed=seed))
        if progress is not None:
            progress(i, len(rows), results[-1])
    return results


# ---------------------------------------------------------------- the user's assertion

class _TwinNamespace:
    """``ns.objectives`` is ``twinrank.<twin>.objectives``, imported on first use."""

    def __init__(self, twin: str):
        self._twin = twin

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return importlib.import_module(twin_module(self._twin, name))

    def __repr__(self) -> str:
        return f"<twinrank.{self._twin}>"


def twin_namespace(twin: str) -> _TwinNamespace:
    """An object whose attributes are the modules of ``twinrank.<twin>`` ("reference" or "fast")."""
    if twin not in TWINS:
        raise ValueError(f"twin must be one of {TWINS}, got {twin!r}")
    return _TwinNamespace(twin)


def _tolerance_of(tolerance, default: str) -> tuple[str, Tolerance]:
    if tolerance is None:
        tolerance = default
    if isinstance(tolerance, Tolerance):
        return "custom", tolerance
    if isinstance(tolerance, str):
        return tolerance, TOLERANCES[tolerance]
    rtol, atol = tolerance
    return "custom", Tolerance(float(rtol), float(atol))


def assert_twins_agree(component, *inputs, tolerance=None, seed: int = 0, outputs=None, **kwargs) -> Result:
    """Assert that the two twins agree; return the :class:`Result` (raise AssertionError if not).

    ``component`` is one of:

    * a registry component name, e.g. ``"lambdarank[map]"`` (:func:`registry.names`),
      and ``inputs`` is one Dataset: the row builds its inputs from it with ``seed``;
    * a ``(module, name)`` pair, e.g. ``("objectives", "lambdarank")``: both twins'
      ``module.name`` are called with copies of ``*inputs, **kwargs``;
    * a callable ``f(twin, *inputs, **kwargs)``, where ``twin.<module>`` is that twin's
      module (:func:`twin_namespace`): e.g. a whole pipeline of the user's.

    ``tolerance``: a key of :data:`~twinrank.testing.registry.TOLERANCES`, a
    :class:`~twinrank.testing.registry.Tolerance` or ``(rtol, atol)``; by default the
    registry row's, else the tolerance of the registry's first row for ``(module, name)``,
    else ``"models"`` for a callable. ``outputs`` flattens a result into named arrays
    (default: an array, a tuple or a dict of arrays, a Tree, a Split, or an
    ``(scores, model)`` pair as the registry's estimator rows return).
    """
    if isinstance(component, str):
        if len(inputs) != 1 or kwargs:
            raise TypeError(f"a registry component takes one Dataset, got {len(inputs)} inputs")
        result = check_twin(component, inputs[0], seed=seed, tolerance=tolerance, outputs=outputs)
    else:
        result = _check_call(component, inputs, kwargs, tolerance, outputs)
    if not result.passed:
        raise AssertionError(f"twins disagree on {result.component}: {result.detail} "
                             f"(max abs diff {_number(result.max_abs_diff)}, tolerance "
                             f"{_describe(result)})" + (f"; {result.diagnosis}" if result.diagnosis else ""))
    return result


def _check_call(component, inputs, kwargs, tolerance, outputs) -> Result:
    call = Inputs(tuple(inputs), dict(kwargs))
    if callable(component):
        label = getattr(component, "__name__", repr(component))
        module = function = label
        default = "models"

        def run(twin):
            copied = call.copy()
            return component(twin_namespace(twin), *copied.args, **copied.kwargs)
    else:
        module, function = component
        label = f"{module}.{function}"
        rows = [r for r in registry.REGISTRY if (r.module, r.function) == (module, function)]
        default = rows[0].tolerance if rows else "exact"

        def run(twin):
            copied = call.copy()
            f = getattr(importlib.import_module(twin_module(twin, module)), function)
            return f(*copied.args, **copied.kwargs)
    name, tol = _tolerance_of(tolerance, default)
    comparison, seconds = _run_both(run, outputs or as_parts, tol)
    return Result(label, "user", module, function, comparison.passed, comparison.max_abs_diff,
                  comparison.max_rel_diff, tol.to_dict(), name,
                  comparison.n_values, comparison.detail, "", seconds, comparison.allowed_abs_diff)


def as_parts(result) -> dict:
    """Named arrays of common results: a Tree, a Split, a fitted model pair, arrays, tuples, dicts."""
    from twinrank.reference.io.model import Tree

    if isinstance(result, Tree):
        return registry.tree_parts(result)
    if result is None or type(result).__name__ == "Split":
        return registry.split_parts(result)
    if isinstance(result, tuple) and len(result) == 2 and hasattr(result[1], "n_trees"):
        return registry.model_parts(result)
    if isinstance(result, dict):
        return {str(k): np.asarray(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return {str(i): np.asarray(v) for i, v in enumerate(result)}
    return {"value": np.asarray(result)}


# ---------------------------------------------------------------- big data

def sample_queries(data, *, max_rows: int | None = None, max_queries: int | None = None, seed: int = 0):
    """A deterministic subsample of whole queries: ``(data, note)``; ``data`` itself if it fits.

    Queries are taken in a random order drawn from ``seed`` until the next one would
    pass ``max_rows`` rows or ``max_queries`` queries (at least one query), then kept
    in their original order.
    """
    sizes = data.query_sizes
    if (max_rows is None or data.n_rows <= max_rows) and (max_queries is None or data.n_queries <= max_queries):
        return data, ""
    order = np.random.default_rng(seed).permutation(data.n_queries)  # (n_queries,)
    rows_so_far = np.cumsum(sizes[order])  # (n_queries,)
    keep = np.ones(data.n_queries, dtype=bool)
    if max_rows is not None:
        keep &= rows_so_far <= max_rows
    if max_queries is not None:
        keep &= np.arange(data.n_queries) < max_queries
    keep[0] = True
    chosen = np.sort(order[: int(np.argmin(keep)) if not keep.all() else len(keep)])
    sample = data.take_queries(chosen)
    return sample, (f"a deterministic subsample (seed {seed}) of {sample.n_queries} of {data.n_queries} "
                    f"queries, {sample.n_rows} of {data.n_rows} rows")

"""A registry row (``Twin``), its inputs (``Inputs``) and the tolerance table it names (``TOLERANCES``)."""
from __future__ import annotations

import copy
import importlib
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from twinrank._layout import twin_module

# ---------------------------------------------------------------- tolerances

@dataclass(frozen=True)
class Tolerance:
    r"""Elementwise bound $|f - r| \le a' + \rho |r|$, $a' = a (1 + \max|r|)$ if ``scaled``."""

    rtol: float
    atol: float
    scaled: bool = False
    why: str = ""

    def bound(self, reference: np.ndarray) -> np.ndarray:
        """The allowed absolute difference at each element of ``reference`` (float64)."""
        reference = np.abs(np.asarray(reference, dtype=np.float64))
        reference = np.where(np.isfinite(reference), reference, 0.0)  # NaN and inf are compared apart
        atol = self.atol * (1.0 + reference.max(initial=0.0)) if self.scaled else self.atol
        return atol + self.rtol * reference

    def describe(self) -> str:
        if self.rtol == 0 and self.atol == 0:
            return "exact"
        atol = f"{self.atol:g}*(1+max|r|)" if self.scaled else f"{self.atol:g}"
        return f"rtol {self.rtol:g}, atol {atol}"

    def to_dict(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol, "scaled": self.scaled}


TOLERANCES: dict[str, Tolerance] = {
    "exact": Tolerance(0.0, 0.0, why="the same operations in the same order, or sums of exact values"),
    "objectives": Tolerance(1e-10, 1e-10, scaled=True,
                            why="pair sums in another order; e^(x-y) taken as e^x * e^-y"),
    "models": Tolerance(1e-9, 1e-12, why="leaf values and scores summed in another order over many "
                                          "rounds; the splits themselves must be equal"),
}


# ---------------------------------------------------------------- rows

@dataclass
class Inputs:
    """The arguments of one call: ``function(*args, **kwargs)``, plus what the report says of them."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    note: str = ""

    def copy(self) -> "Inputs":
        """A deep copy (each twin gets its own arrays)."""
        return Inputs(copy.deepcopy(self.args), copy.deepcopy(self.kwargs), self.note)


def _call(function, inputs: Inputs):
    return function(*inputs.args, **inputs.kwargs)


def _as_parts(result) -> dict:
    """Default outputs: an array, or a tuple of arrays named ``0, 1, ...``, or a dict of arrays."""
    if isinstance(result, dict):
        return {str(k): np.asarray(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return {str(i): np.asarray(v) for i, v in enumerate(result)}
    return {"value": np.asarray(result)}


@dataclass(frozen=True)
class Twin:
    """One twinned component: ``twinrank.<twin>.<module>.<function>`` in both twins.

    Attributes
    ----------
    name : the component's name in reports, e.g. ``"lambdarank[map]"``
    layer : the stage it belongs to (metrics, bins, histograms, split choice, one tree,
        lambdas, gradients, scoring, combining, diagnostics, whole models)
    module, function : where both twins define it (``function`` may be a class)
    tolerance : a key of :data:`TOLERANCES`
    inputs : ``(data: Dataset, rng: numpy.random.Generator) -> Inputs``
    outputs : the result as named arrays (``dict[str, ndarray]``)
    call : ``(function, inputs) -> result``; default ``function(*args, **kwargs)``
    summary : one line on what is compared
    diagnose : ``(inputs, reference_result, fast_result) -> str``, called when the twins
        disagree: a known cause of the disagreement, or ``""``
    """

    name: str
    layer: str
    module: str
    function: str
    tolerance: str
    inputs: Callable[[Any, np.random.Generator], Inputs]
    outputs: Callable[[Any], dict] = _as_parts
    call: Callable[[Any, Inputs], Any] = _call
    summary: str = ""
    diagnose: Callable[[Inputs, Any, Any], str] | None = None

    def __post_init__(self):
        if self.tolerance not in TOLERANCES:
            raise ValueError(f"{self.name}: unknown tolerance {self.tolerance!r}")

    @property
    def tol(self) -> Tolerance:
        return TOLERANCES[self.tolerance]

    def rng(self, seed: int) -> np.random.Generator:
        """This row's generator: ``default_rng([seed, crc32(name)])`` (rows draw independently)."""
        return np.random.default_rng([int(seed), zlib.crc32(self.name.encode())])

    def resolve(self, twin: str):
        """The function (or class) of ``twin`` ("reference" or "fast"), looked up now."""
        module = importlib.import_module(twin_module(twin, self.module))
        return getattr(module, self.function)

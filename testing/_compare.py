r"""Comparing the outputs of the two twins, part by part, and the verdict records (``TwinComparison``, ``Result``)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from twinrank.testing._twin import Tolerance


@dataclass
class TwinComparison:
    """The outcome of comparing the outputs of the two twins."""

    passed: bool
    max_abs_diff: float | None  # None when nothing comparable (different parts or shapes)
    max_rel_diff: float | None
    n_values: int = 0
    detail: str = ""
    allowed_abs_diff: float = 0.0  # the largest |f - r| the tolerance allows on these outputs


@dataclass
class Result:
    """One component's verdict, as ``twinrank verify`` prints it (``to_dict``: its JSON object)."""

    component: str
    layer: str
    module: str
    function: str
    passed: bool
    max_abs_diff: float | None
    max_rel_diff: float | None
    tolerance: dict
    tolerance_name: str
    n_values: int = 0
    detail: str = ""
    inputs: str = ""
    seconds: dict = field(default_factory=dict)
    allowed_abs_diff: float = 0.0
    diagnosis: str = ""  # a known cause of a disagreement (e.g. a near-tie of two splits)

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("max_abs_diff", "max_rel_diff"):  # JSON has no inf / nan
            value = out[key]
            out[key] = None if value is None or not np.isfinite(value) else float(value)
        return out

    def line(self, width: int = 40) -> str:
        """One report line: component, max abs / rel difference, tolerance, pass/FAIL."""
        verdict = "pass" if self.passed else "FAIL"
        text = (f"{self.component:<{width}} {_number(self.max_abs_diff):>9} {_number(self.max_rel_diff):>9}"
                f"  {_describe(self):<34} {verdict}")
        detail = "; ".join(x for x in (self.detail, self.diagnosis) if x)
        return text + (f"  ({detail})" if detail else "")


def _number(x) -> str:
    if x is None:
        return "-"
    return "0" if x == 0 else f"{x:.1e}"


def compare_twins(reference: dict, fast: dict, tolerance: Tolerance) -> TwinComparison:
    """Compare two dicts of named arrays (the rules of :mod:`~twinrank.testing.agree`)."""
    if list(reference) != list(fast):
        return TwinComparison(False, None, None, 0,
                          f"different outputs: reference {sorted(reference)}, fast {sorted(fast)}")
    max_abs, max_rel, allowed, n, problems = 0.0, 0.0, 0.0, 0, []
    for name in reference:
        r, f = np.asarray(reference[name]), np.asarray(fast[name])
        if r.shape != f.shape:
            problems.append(f"{name}: shape {r.shape} vs {f.shape}")
            max_abs = max_rel = None
            break
        n += r.size
        part = _compare_part(name, r, f, tolerance)
        max_abs, max_rel, allowed = max(max_abs, part[0]), max(max_rel, part[1]), max(allowed, part[3])
        if part[2]:
            problems.append(part[2])
    as_float = lambda x: None if x is None else float(x)  # noqa: E731
    return TwinComparison(not problems, as_float(max_abs), as_float(max_rel), n, "; ".join(problems[:2]),
                      float(allowed))


def _compare_part(name: str, r: np.ndarray, f: np.ndarray, tolerance: Tolerance):
    """(max abs diff, max rel diff, problem or "", largest allowed abs diff) of one named array."""
    if r.dtype.kind not in "fiub" or f.dtype.kind not in "fiub":
        same = np.array_equal(r, f)
        return (0.0 if same else np.inf, 0.0 if same else np.inf,
                "" if same else _first_difference(name, r, f), 0.0)
    r64, f64 = r.astype(np.float64), f.astype(np.float64)
    nan_r, nan_f = np.isnan(r64), np.isnan(f64)
    finite = np.isfinite(r64) & np.isfinite(f64)  # (n,) elements compared by value
    both_inf = ~finite & ~nan_r & ~nan_f
    diff = np.abs(f64[finite] - r64[finite])  # (n_finite,)
    max_abs, scale = diff.max(initial=0.0), np.abs(r64[finite]).max(initial=0.0)
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else np.inf)
    exact = r.dtype.kind in "iub" or f.dtype.kind in "iub"
    bound = np.zeros_like(diff) if exact else tolerance.bound(r64)[finite]  # (n_finite,)
    allowed = bound.max(initial=0.0)
    if np.any(nan_r != nan_f) or np.any(r64[both_inf] != f64[both_inf]):
        return np.inf, np.inf, _first_difference(name, r, f), allowed
    if np.any(diff > bound):
        return max_abs, max_rel, _first_difference(name, r, f, diff > bound, finite), allowed
    return max_abs, max_rel, "", allowed


def _first_difference(name, r, f, over=None, finite=None) -> str:
    if over is not None:
        i = np.flatnonzero(finite.ravel())[np.flatnonzero(over)[0]]
        count = int(over.sum())
    else:
        unequal = ~((r.ravel() == f.ravel()) | (_isnan(r.ravel()) & _isnan(f.ravel())))
        i, count = int(np.flatnonzero(unequal)[0]), int(unequal.sum())
    at = np.unravel_index(i, r.shape) if r.ndim > 1 else (i,)
    where = ", ".join(map(str, at))
    return (f"{name}[{where}]: reference {_plain(r.ravel()[i])!r}, fast {_plain(f.ravel()[i])!r}"
            f" ({count} of {r.size} values differ)")


def _plain(x):
    return x.item() if isinstance(x, np.generic) else x


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, dtype=bool)


def _describe(result: Result) -> str:
    t = result.tolerance
    return Tolerance(t["rtol"], t["atol"], t["scaled"]).describe()

"""Numba-parallel twin of `twinrank.reference.evaluation.stats`: the same tests, the same p-values.

The sign vectors are the reference's (drawn by ``sampling.sign_flips`` from the same
generator), so a seed gives the same permutations; :func:`permutation_counts` sums
each permutation in parallel over permutations (sequential within one, so a sum may
differ from NumPy's pairwise one in the last bits: the reference's tolerance covers
it). The Student-t distribution is the reference's continued fraction, compiled.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.stats import (
    ALTERNATIVES,
    EXTREME_TOLERANCE,
    Comparison,
    SeedVariance,
    TTest,
    _check,
    _compare,
    _randomization_p,
    _t_quantile,
    _t_test,
    paired_differences,
    seed_variance,
)

__all__ = ["randomization_test", "permutation_counts", "paired_t_test", "compare", "not_significantly_worse",
           "seed_variance", "betainc", "t_cdf", "t_ppf", "TTest", "Comparison", "SeedVariance",
           "ALTERNATIVES", "EXTREME_TOLERANCE"]

_MAX_ITERATIONS, _EPS, _TINY = 10_000, 1e-16, 1e-300


@njit(parallel=True, cache=True)
def _counts(d, flips, observed, tolerance):  # IN d (n,), flips (m, n) bool; OUT (3,) int64
    m, n = flips.shape
    extreme = np.zeros((m, 3), dtype=np.int64)  # (m, 3) per permutation: |T*| >=, T* >=, T* <=
    for p in prange(m):
        t = 0.0
        for i in range(n):
            t += -d[i] if flips[p, i] else d[i]
        extreme[p, 0] = abs(t) >= abs(observed) - tolerance
        extreme[p, 1] = t >= observed - tolerance
        extreme[p, 2] = t <= observed + tolerance
    return extreme.sum(axis=0)


def permutation_counts(d: np.ndarray, flips: np.ndarray, observed: float, tolerance: float) -> np.ndarray:
    """Numba-parallel twin of `twinrank.reference.evaluation.stats.permutation_counts` (parallel over permutations)."""
    return _counts(np.ascontiguousarray(d, dtype=np.float64), np.ascontiguousarray(flips),
                   float(observed), float(tolerance))


def randomization_test(a, b, *, n_permutations: int = 10_000, alternative: str = "two-sided",
                       seed=0) -> float:
    """Numba-parallel twin of `twinrank.reference.evaluation.stats.randomization_test`."""
    _check(alternative, n_permutations)
    return _randomization_p(paired_differences(a, b), n_permutations, alternative, seed, permutation_counts)


@njit(cache=True)
def _betacf(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITERATIONS + 1):
        m2 = 2 * m
        for step in range(2):
            aa = (m * (b - m) * x / ((qam + m2) * (a + m2)) if step == 0
                  else -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)))
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) <= _EPS:
            return h
    return math.nan


@njit(cache=True)
def _betainc(a, b, x):
    if x == 0.0 or x == 1.0:
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def betainc(a: float, b: float, x: float) -> float:
    """Numba-compiled twin of `twinrank.reference.evaluation.stats.betainc`."""
    if not (a > 0 and b > 0) or not 0.0 <= x <= 1.0:
        raise ParameterError(f"betainc needs a, b > 0 and 0 <= x <= 1, got a={a}, b={b}, x={x}")
    value = _betainc(float(a), float(b), float(x))
    if math.isnan(value):
        raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")
    return value


def t_cdf(t: float, df: float) -> float:
    """Twin of `twinrank.reference.evaluation.stats.t_cdf` on the compiled :func:`betainc`."""
    if math.isnan(t):
        return math.nan
    tail = 0.5 * betainc(0.5 * df, 0.5, df / (df + t * t)) if math.isfinite(t) else 0.0
    return 1.0 - tail if t > 0 else tail


def t_ppf(q: float, df: float) -> float:
    """Twin of `twinrank.reference.evaluation.stats.t_ppf` (bisection on the compiled :func:`betainc`)."""
    return _t_quantile(q, df, betainc)


def paired_t_test(a, b, *, alternative: str = "two-sided", confidence: float = 0.95) -> TTest:
    """Twin of `twinrank.reference.evaluation.stats.paired_t_test` on the compiled t distribution."""
    _check(alternative)
    return _t_test(paired_differences(a, b), alternative, confidence, t_cdf, t_ppf)


def compare(a, b, *, n_permutations: int = 10_000, seed=0, confidence: float = 0.95) -> Comparison:
    """Twin of `twinrank.reference.evaluation.stats.compare`."""
    return _compare(a, b, n_permutations, seed, confidence, randomization_test, paired_t_test)


def not_significantly_worse(a, b, *, alpha: float = 0.05, n_permutations: int = 10_000, seed=0) -> bool:
    """Twin of `twinrank.reference.evaluation.stats.not_significantly_worse`."""
    return randomization_test(a, b, n_permutations=n_permutations, alternative="less", seed=seed) > alpha

r"""Is system A better than system B? Paired tests over per-query metric values.

Two rankers scored on the same $n$ queries give pairs $(a_i, b_i)$ of a metric
(NDCG@10 per query, :func:`~twinrank.reference.evaluation.metrics.ndcg`) and differences
$d_i = a_i - b_i$. Both tests below ask whether the mean difference
$\bar d$ is larger than chance would make it.

**Randomization test** (Fisher's; for IR, Smucker, Allan & Carterette, CIKM 2007).
Under the null hypothesis the two systems are exchangeable, so each $d_i$ is as
likely to have been $-d_i$. Draw $N$ sign vectors $s \in \{-1, 1\}^n$,

$$T^* = \sum_i s_i d_i, \qquad p_{\text{two-sided}} = \frac{\#\{|T^*| \ge |T|\}}{N},$$

with $T = \sum_i d_i$ observed; one-sided ``"greater"`` (H1: A better) counts
$T^* \ge T$, ``"less"`` (H1: A worse) counts $T^* \le T$. The signs are drawn
by :func:`~twinrank.reference.sampling.sign_flips` from ``make_rng(seed)``, so a seed
gives one p-value in both twins. $N = 10{,}000$ (the default) puts the standard error
of a p-value near 0.05 at $\sqrt{0.05 \cdot 0.95 / N} \approx 0.002$. p = 0 means
$p < 1/N$. Sums of the same numbers in a different order round differently, so
"at least as extreme" is tested with a tolerance of $10^{-9}$ times $\sum_i |d_i|$.

**Paired t-test.** $t = \bar d / (s_d / \sqrt n)$ with $s_d$ the sample standard
deviation ($n - 1$ in the denominator), $n - 1$ degrees of freedom. The Student-t
distribution is written here from the regularized incomplete beta function
(:func:`betainc`, the continued fraction of Numerical Recipes, 2nd ed., Sec. 6.4):

$$P(|T_\nu| \ge t) = I_{\nu / (\nu + t^2)}\left(\tfrac{\nu}{2}, \tfrac{1}{2}\right).$$

Differences without variance ($s_d = 0$) leave $t$ undefined: NaN.

A *verdict* ``not_significantly_worse(a, b)`` is X-DART's (Lucchese et al. 2017):
A is "statistically equivalent or better" than B unless the one-sided test of
"A worse" rejects at ``alpha``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.sampling import make_rng, sign_flips

__all__ = ["randomization_test", "permutation_counts", "paired_t_test", "compare", "not_significantly_worse",
           "seed_variance", "betainc", "t_cdf", "t_ppf", "TTest", "Comparison", "SeedVariance",
           "ALTERNATIVES", "EXTREME_TOLERANCE"]

ALTERNATIVES = ("two-sided", "greater", "less")
EXTREME_TOLERANCE = 1e-9  # relative to sum |d|: how close to T a permuted sum counts as "as extreme"
_MAX_ITERATIONS, _EPS, _TINY = 10_000, 1e-16, 1e-300


def paired_differences(a, b, names=("a", "b")) -> np.ndarray:
    """``a - b`` as float64, after checking both are 1-D, equally long, finite, with >= 2 values."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    for name, v in zip(names, (a, b)):
        if v.ndim != 1:
            raise ParameterError(f"{name}: per-query values must be 1-D, got shape {v.shape}")
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            raise ParameterError(f"{name}: per-query value {bad[0]} is {v[bad[0]]} (NaN or infinite); "
                                 f"{len(bad)} such value(s)")
    if len(a) != len(b):
        raise ParameterError(f"{names[0]} has {len(a)} per-query values but {names[1]} has {len(b)}: "
                             "a paired test needs the same queries in both")
    if len(a) < 2:
        raise ParameterError(f"a paired test needs at least 2 queries, got {len(a)}")
    return a - b


def _check(alternative: str, n_permutations=1) -> None:
    if alternative not in ALTERNATIVES:
        raise ParameterError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 1:
        raise ParameterError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")


def permutation_counts(d: np.ndarray, flips: np.ndarray, observed: float, tolerance: float) -> np.ndarray:
    r"""How many rows of ``flips`` give a sum $T^*$ with $|T^*| \ge |T| - \epsilon$,
    $T^* \ge T - \epsilon$ and $T^* \le T + \epsilon$: int64 array of 3 counts.

    d : (n,) differences;  flips : (m, n) bool, True where $s_i = -1$.
    """
    t = np.where(flips, -d, d).sum(axis=1)  # (m,) permuted sums
    return np.array([np.sum(np.abs(t) >= abs(observed) - tolerance), np.sum(t >= observed - tolerance),
                     np.sum(t <= observed + tolerance)], dtype=np.int64)


def randomization_test(a, b, *, n_permutations: int = 10_000, alternative: str = "two-sided",
                       seed=0) -> float:
    """The p-value of the paired randomization test of ``a`` against ``b`` (module docstring)."""
    _check(alternative, n_permutations)
    d = paired_differences(a, b)
    return _randomization_p(d, n_permutations, alternative, seed, permutation_counts)


def _randomization_p(d, n_permutations, alternative, seed, counter) -> float:
    """The randomization p-value with ``counter`` (this twin's :func:`permutation_counts`)."""
    observed, tolerance = float(d.sum()), EXTREME_TOLERANCE * float(np.abs(d).sum())
    counts = np.zeros(3, dtype=np.int64)
    for flips in sign_flips(make_rng(seed), n_permutations, len(d)):
        counts += counter(d, flips, observed, tolerance)
    return float(counts[ALTERNATIVES.index(alternative)]) / n_permutations


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of $I_x(a, b)$ by the modified Lentz method (Numerical Recipes 6.4)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITERATIONS + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),  # even step, then odd step
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) <= _EPS:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    r"""The regularized incomplete beta function $I_x(a, b) = B(x; a, b) / B(a, b)$.

    $$I_x(a,b) = \frac{x^a (1-x)^b}{a\,B(a,b)} \cdot \frac{1}{1+}\,\frac{d_1}{1+}\,\frac{d_2}{1+}\cdots$$

    evaluated directly for $x < (a+1)/(a+b+2)$, else as $1 - I_{1-x}(b, a)$, where
    the fraction converges fast (Numerical Recipes, Eq. 6.4.5).
    """
    if not (a > 0 and b > 0) or not 0.0 <= x <= 1.0:
        raise ParameterError(f"betainc needs a, b > 0 and 0 <= x <= 1, got a={a}, b={b}, x={x}")
    if x == 0.0 or x == 1.0:
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    r"""$P(T_\nu \le t)$ for Student's t with $\nu$ = ``df`` degrees of freedom."""
    if math.isnan(t):
        return math.nan
    tail = 0.5 * betainc(0.5 * df, 0.5, df / (df + t * t)) if math.isfinite(t) else 0.0  # P(T >= |t|)
    return 1.0 - tail if t > 0 else tail


def t_ppf(q: float, df: float) -> float:
    r"""The quantile $t$ with $P(T_\nu \le t) = q$, to machine precision.

    Bisection on the tail $P(T_\nu \ge |t|) = \min(q, 1 - q)$, computed directly from
    :func:`betainc` (not as $1 - $ the CDF), so extreme quantiles keep their digits.
    """
    return _t_quantile(q, df, betainc)


def _t_quantile(q: float, df: float, incomplete_beta) -> float:
    """:func:`t_ppf` on a given regularized incomplete beta function (each twin passes its own)."""
    if not 0.0 < q < 1.0:
        raise ParameterError(f"t_ppf needs 0 < q < 1, got {q}")
    tail = min(q, 1.0 - q)  # P(T >= |t|)
    lo, hi = 0.0, 1.0
    while 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + hi * hi)) > tail:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid if q > 0.5 else -mid
        lo, hi = (mid, hi) if 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + mid * mid)) > tail else (lo, mid)


@dataclass(frozen=True)
class TTest:
    """A paired t-test: statistic, degrees of freedom, p-value and the mean difference's interval."""

    t_statistic: float
    df: int
    p: float
    mean_difference: float
    ci_low: float
    ci_high: float
    confidence: float


def _t_test(d: np.ndarray, alternative: str, confidence: float, cdf, ppf) -> TTest:
    """The t-test of the differences ``d`` with this twin's ``t_cdf`` and ``t_ppf``."""
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be in (0, 1), got {confidence!r}")
    n, mean = len(d), float(d.mean())
    se = float(d.std(ddof=1)) / math.sqrt(n)
    df = n - 1
    half = ppf(0.5 + 0.5 * confidence, df) * se
    if se == 0.0:
        return TTest(math.nan, df, math.nan, mean, mean, mean, confidence)
    t = mean / se
    p = {"two-sided": lambda: 2.0 * cdf(-abs(t), df), "greater": lambda: 1.0 - cdf(t, df),
         "less": lambda: cdf(t, df)}[alternative]()
    return TTest(t, df, min(p, 1.0), mean, mean - half, mean + half, confidence)


def paired_t_test(a, b, *, alternative: str = "two-sided", confidence: float = 0.95) -> TTest:
    """The paired t-test of ``a`` against ``b`` and the Student-t interval of the mean of ``a - b``."""
    _check(alternative)
    return _t_test(paired_differences(a, b), alternative, confidence, t_cdf, t_ppf)


@dataclass(frozen=True)
class Comparison:
    """Both tests of A against B (two-sided); ``as_dict()`` gives the ``twinrank compare --json`` keys."""

    n_queries: int
    mean_a: float
    mean_b: float
    difference: float
    randomization_p: float
    n_permutations: int
    t_statistic: float
    t_p: float
    df: int
    ci_low: float
    ci_high: float
    confidence: float

    def as_dict(self) -> dict:
        """The fields, NaN as None (JSON null)."""
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(self).items()}


def compare(a, b, *, n_permutations: int = 10_000, seed=0, confidence: float = 0.95) -> Comparison:
    """Means, the randomization test and the paired t-test of ``a`` against ``b`` (two-sided)."""
    return _compare(a, b, n_permutations, seed, confidence, randomization_test, paired_t_test)


def _compare(a, b, n_permutations, seed, confidence, randomization, t_test) -> Comparison:
    d = paired_differences(a, b)
    t = t_test(a, b, confidence=confidence)
    return Comparison(len(d), float(np.mean(a)), float(np.mean(b)), float(d.mean()),
                      randomization(a, b, n_permutations=n_permutations, seed=seed), n_permutations,
                      t.t_statistic, t.p, t.df, t.ci_low, t.ci_high, confidence)


def not_significantly_worse(a, b, *, alpha: float = 0.05, n_permutations: int = 10_000, seed=0) -> bool:
    """X-DART's verdict: True unless the randomization test of "A worse than B" has p <= ``alpha``."""
    return randomization_test(a, b, n_permutations=n_permutations, alternative="less", seed=seed) > alpha


@dataclass(frozen=True)
class SeedVariance:
    """Mean, variance (``ddof``) and standard deviation of a metric over seeds (or samples)."""

    n: int
    mean: float
    variance: float
    std: float


def seed_variance(values, *, ddof: int = 1) -> SeedVariance:
    """The spread of one metric over ``n`` seeds (BL-MART's Table 5 reports such variances)."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or len(v) <= ddof or not np.all(np.isfinite(v)):
        raise ParameterError(f"seed_variance needs more than ddof={ddof} finite values, got {v.tolist()}")
    variance = float(v.var(ddof=ddof))
    return SeedVariance(len(v), float(v.mean()), variance, math.sqrt(variance))

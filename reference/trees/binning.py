r"""Feature binning: per-feature thresholds, and raw features -> ``uint8`` bins.

Histogram tree growers (LightGBM, Ke et al. 2017; scikit-learn's
HistGradientBoosting) search splits over at most 255 bins per feature instead
of over every distinct value. Feature ``j`` gets ascending float64 thresholds
$t_0 < t_1 < \dots < t_{B-2}$ and a value falls in bin

$$
\mathrm{bin}(x) = \#\{b : t_b < x\} = \texttt{searchsorted}(t, x, \texttt{side="left"}),
$$

so that, for every threshold index ``b``,

$$
x \le t_b \iff \mathrm{bin}(x) \le b .
$$

This is the guarantee that routes a row the same way on raw values
(``x <= threshold``) and on bins (``bin <= bin_threshold``). A missing value
(NaN) gets its own bin, ``MISSING_BIN = 255``; value bins are ``0 .. B - 1 <= 254``.

Thresholds (scikit-learn's rule, computed in exact integer arithmetic so both
twins agree bit for bit): let $u_0 < \dots < u_m$ be the distinct non-NaN
values of the column (in float64) and $s_0 \le \dots \le s_{n-1}$ all of
its non-NaN values, sorted.

* if $m + 1 \le$ ``max_bins``: the midpoints $(u_i + u_{i+1}) / 2$, so
  every distinct value has its own bin;
* else the quantile midpoints, ``np.percentile(col, 100 j / max_bins, method="midpoint")``
  for $j = 1, \dots,$ ``max_bins - 1``: with $p = (n - 1) j$,
  $\mathrm{lo} = \lfloor p / \texttt{max\_bins} \rfloor$,
  $\mathrm{hi} = \lceil p / \texttt{max\_bins} \rceil$, the threshold is
  $(s_{\mathrm{lo}} + s_{\mathrm{hi}}) / 2$.

Either way, duplicates are removed (``np.unique``), so there are at most
``max_bins - 1`` strictly ascending thresholds. A column that is constant or
all NaN has none: every non-missing value is in bin 0. A midpoint is computed as
``0.5 * a + 0.5 * b``, which never overflows and equals ``a`` when ``a == b``.

Thresholds from a sample of the rows (``subsample_for_bin``, LightGBM's name for its
``bin_construct_sample_cnt``; scikit-learn's ``_BinMapper`` has ``subsample``, both 200,000):
with $n_{\text{rows}} >$ ``subsample_for_bin`` the rule above reads only the rows of
:func:`bin_sample`, ``subsample_for_bin`` distinct rows drawn uniformly without replacement
from the seed; with at most that many rows, or ``subsample_for_bin=None``, it reads every row,
so the thresholds (and the model) of such data do not depend on the parameter. The quantile
$q$ of $s = 200{,}000$ sampled values is off by about $\sqrt{q(1-q)/s} \le 0.0011$ in rank
(one standard deviation), under a third of a bin's width $1/255$. Every row is still binned
(:func:`apply_bins`).
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import MISSING_BIN  # noqa: F401  (re-exported: binning.MISSING_BIN)
from twinrank.reference.errors import ParameterError
from twinrank.reference.params import check_int

SAMPLE_STREAM = 0x62696E  # "bin": the sample's generator is seeded (SAMPLE_STREAM, seed), not the run's


def bin_thresholds(X, max_bins: int = 255, subsample_for_bin: int | None = None,
                   seed: int = 0) -> list[np.ndarray]:
    """Per-feature ascending float64 thresholds, at most ``max_bins - 1`` each.

    Parameters
    ----------
    X : array of shape (n_rows, n_features); NaN means missing, infinite values are an error
        (among the rows read: all rows, or the sample)
    max_bins : int in [2, 255], the number of value bins (the missing bin is extra)
    subsample_for_bin : int >= 1 or None, the most rows the thresholds are read from
        (:func:`bin_sample`); None: every row. The estimators pass theirs (default 200,000).
    seed : int >= 0, the seed of the sample (the estimator's ``seed``)

    Returns
    -------
    list of ``n_features`` float64 arrays, the rule of the module docstring.
    """
    check_int("max_bins", max_bins, low=2, high=255)
    X = _checked_matrix(X)
    rows = bin_sample(X.shape[0], subsample_for_bin, seed)
    if rows is not None:
        X = X[rows]  # (subsample_for_bin, n_features)
    return [_column_thresholds(X[:, j], max_bins, j, rows) for j in range(X.shape[1])]


def bin_sample(n_rows: int, subsample_for_bin: int | None, seed: int) -> np.ndarray | None:
    """The rows the thresholds are read from, in ascending order; None for all ``n_rows``.

    None when ``subsample_for_bin`` is None or ``n_rows <= subsample_for_bin``; else
    ``subsample_for_bin`` distinct rows, uniformly without replacement (``Generator.choice``) from
    ``numpy.random.default_rng((SAMPLE_STREAM, seed))``: a generator of its own, so the run's other
    draws (query subsamples, feature subsets) are those of a run without a sample. Both twins call
    this function: the same rows on any thread count.
    """
    if subsample_for_bin is not None:
        check_int("subsample_for_bin", subsample_for_bin, low=1)
    check_int("seed", seed, low=0)
    if subsample_for_bin is None or n_rows <= subsample_for_bin:
        return None
    rng = np.random.default_rng((SAMPLE_STREAM, seed))
    return np.sort(rng.choice(n_rows, size=subsample_for_bin, replace=False))


def _column_thresholds(column: np.ndarray, max_bins: int, j: int, rows) -> np.ndarray:
    present = np.sort(column[~np.isnan(column)].astype(np.float64))  # (n,) the s_i
    refuse_infinite(present, column, j, rows)
    distinct = np.unique(present)  # (m + 1,) the u_i
    if len(distinct) <= max_bins:
        return np.unique(_midpoint(distinct[:-1], distinct[1:]))
    p = (len(present) - 1) * np.arange(1, max_bins, dtype=np.int64)  # (max_bins - 1,)
    lo, hi = p // max_bins, -(-p // max_bins)  # floor and ceiling of p / max_bins
    return np.unique(_midpoint(present[lo], present[hi]))


def refuse_infinite(present: np.ndarray, column: np.ndarray, j: int, rows=None) -> None:
    """ParameterError if column ``j`` holds an infinite value: one sorts first or last in ``present``
    (the column's sorted non-NaN values), so the two ends decide without another pass over ``X``.
    ``column`` holds the rows ``rows`` of ``X`` (None: all), which the message names."""
    if len(present) and (np.isinf(present[0]) or np.isinf(present[-1])):
        row = np.flatnonzero(np.isinf(column))[0]
        raise ParameterError(f"X[{row if rows is None else rows[row]}, {j}] is infinite; "
                             "use NaN for a missing value")


def _midpoint(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 0.5 * a + 0.5 * b


def apply_bins(X, thresholds: list) -> np.ndarray:
    """The ``uint8`` bin of every value: ``searchsorted(t, x, side="left")``, NaN -> ``MISSING_BIN``.

    Returns an array of shape (n_rows, n_features) in C order. The values are not checked again:
    a :class:`~twinrank.reference.io.data.Dataset` refused infinite values when it was made, and
    an infinite value binned anyway goes where its comparisons send it (``-inf`` to bin 0, ``+inf``
    above every threshold).
    """
    X = _checked_matrix(X)
    _check_width(X, thresholds)
    binned = np.empty(X.shape, dtype=np.uint8)  # (n_rows, n_features)
    for j, t in enumerate(thresholds):
        binned[:, j] = np.searchsorted(t, X[:, j].astype(np.float64), side="left")
    binned[np.isnan(X)] = MISSING_BIN
    return binned


def _check_width(X: np.ndarray, thresholds: list) -> None:
    """Raise unless ``X`` has one column per threshold array, each of at most 254 thresholds."""
    if X.shape[1] != len(thresholds):
        raise ParameterError(
            f"X has {X.shape[1]} features but the thresholds are for {len(thresholds)}")
    for j, t in enumerate(thresholds):
        if len(t) >= MISSING_BIN:
            raise ParameterError(f"feature {j} has {len(t)} thresholds; at most {MISSING_BIN - 1}")


def _checked_matrix(X) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.dtype.kind not in "fiub":
        raise ParameterError(f"X must be a 2-D numeric array, got shape {X.shape} of {X.dtype}")
    if X.dtype.kind != "f":
        X = X.astype(np.float64)
    return X

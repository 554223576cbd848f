r"""LETOR's query-level normalisation (QueryLevelNorm): every feature min-max scaled inside each query.

Raw feature values of different queries live on different scales (a BM25 score depends on
the query's terms, a document count on its topic); LETOR ships its data sets, MQ2008
among them, normalised per query and per feature (Qin & Liu 2013, arXiv:1306.2597;
Ibrahim 2021, Sec. 2.1):

$$\tilde x_{if} = \frac{x_{if} - \min_{j \in q} x_{jf}}{\max_{j \in q} x_{jf} - \min_{j \in q} x_{jf}}
\qquad (i \in q),$$

so within each query every feature spans $[0, 1]$. Where the feature is constant within
the query (the maximum equals the minimum, one-document queries included) it is 0, as in
LETOR's files. A missing value (NaN) stays NaN and takes no part in the minimum and the
maximum; a feature missing on every document of a query stays NaN there.

Implementation: the minimum and maximum of every (query, feature) ignoring NaN come from
``np.fmin.reduceat`` / ``np.fmax.reduceat`` over the starts of the non-empty queries, and
are repeated onto the query's rows; one subtraction and one division per value, so the
fast twin gives the same bits.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.errors import ParameterError

__all__ = ["query_level_normalize"]


def _features(X, query_offsets) -> tuple:
    """``X`` as a C-contiguous float64 copy and the offsets as int64, checked (both twins call this)."""
    try:
        X = np.array(X, dtype=np.float64, order="C")  # (n_rows, n_features), a copy
    except (TypeError, ValueError) as e:
        raise ParameterError(f"X must be a matrix of numbers: {e}") from None
    if X.ndim != 2:
        raise ParameterError(f"X must be a 2-D (rows, features) matrix, got shape {X.shape}")
    if np.isinf(X).any():
        r, c = np.argwhere(np.isinf(X))[0]
        raise ParameterError(f"X[{r}, {c}] is infinite; use NaN for a missing value")
    offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(X) \
            or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"query_offsets must start at 0, end at n_rows={len(X)} and never decrease")
    return X, offsets


def query_level_normalize(X, query_offsets) -> np.ndarray:
    r"""Every feature of ``X`` min-max scaled to $[0, 1]$ within each query (LETOR's QueryLevelNorm).

    $$\tilde x_{if} = \frac{x_{if} - \min_{j \in q} x_{jf}}{\max_{j \in q} x_{jf} - \min_{j \in q} x_{jf}},$$

    0 where feature $f$ is constant within query $q$; NaN stays NaN and is ignored by the
    minimum and the maximum (Ibrahim 2021, Sec. 2.1; the module docstring).

    Parameters
    ----------
    X : array (n_rows, n_features) of numbers (float32 as a Dataset holds them, or float64);
        NaN is missing, an infinite value is refused
    query_offsets : int64 array (n_queries + 1,)

    Returns
    -------
    float64 array (n_rows, n_features), new; ``X`` is not changed
    """
    X, offsets = _features(X, query_offsets)
    sizes = np.diff(offsets)  # (n_queries,)
    if len(X) == 0:
        return X
    starts = offsets[:-1][sizes > 0]  # (n_nonempty,) each slice of reduceat ends at the next start
    low = np.repeat(np.fmin.reduceat(X, starts, axis=0), sizes[sizes > 0], axis=0)  # (n_rows, n_features)
    span = np.repeat(np.fmax.reduceat(X, starts, axis=0), sizes[sizes > 0], axis=0) - low  # NaN: all missing
    scaled = (X - low) / np.where(span > 0, span, 1.0)
    return np.where(np.isnan(X), np.nan, np.where(span > 0, scaled, 0.0))

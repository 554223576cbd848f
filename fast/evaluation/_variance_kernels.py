r"""Numba kernels of `twinrank.fast.evaluation.variance`: the pointwise terms and the listwise sums over a score matrix.

Each loops over documents (or queries) and, inside, over models in model order, as the
reference's ``sum(axis=0)`` adds the rows of ``P``, so the mean scores (which decide
the ranking of tied documents) are the reference's bit for bit. No fastmath: the sums
must match the reference's.

    # IN  P (B, n_rows) float64, C-contiguous; y (n_rows,) float64; ddof: int, 0 <= ddof < B
"""
from __future__ import annotations

from twinrank.fast.runtime._kernel_cache import njit


@njit(cache=True, nogil=True)
def column_means(P, out):
    """out[i] = (P[0, i] + ... + P[B-1, i]) / B, added in model order.  # OUT out (n_rows,)"""
    B, n = P.shape
    for i in range(n):
        total = 0.0
        for b in range(B):
            total += P[b, i]
        out[i] = total / B


@njit(cache=True, nogil=True)
def pointwise_kernel(P, y, ddof, mean, bias2, variance, mse):
    """Per document: bias^2, variance (1/(B - ddof)) and MSE (Eqs. 5-8).

    # IN  mean (n_rows,) from column_means;  OUT bias2, variance, mse (n_rows,)
    """
    B, n = P.shape
    for i in range(n):
        squares, errors = 0.0, 0.0
        for b in range(B):
            squares += (P[b, i] - mean[i]) ** 2
            errors += (P[b, i] - y[i]) ** 2
        bias2[i] = (mean[i] - y[i]) ** 2
        variance[i] = squares / (B - ddof)
        mse[i] = errors / B


@njit(cache=True, nogil=True)
def ranking_terms_kernel(model_values, mean_values, ddof, sre, vre, vre_signed, error):
    """SRE, VRE, signed VRE and mean ranking error per query (Eqs. 11-17).

    # IN  model_values (B, n_queries): N_b(q); mean_values (n_queries,): N(q; mean scores)
    # OUT sre, vre, vre_signed, error (n_queries,)
    """
    B, n = model_values.shape
    for q in range(n):
        losses, gaps, errors = 0.0, 0.0, 0.0
        for b in range(B):
            gap = mean_values[q] - model_values[b, q]
            losses += max(gap, 0.0)
            gaps += gap
            errors += 1.0 - model_values[b, q]
        sre[q] = 1.0 - mean_values[q]
        vre[q] = losses / (B - ddof)
        vre_signed[q] = gaps / B
        error[q] = errors / B

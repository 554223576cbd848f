"""Numba kernels of the binary metrics: AP, P@k, RR, AUC and pAUC, one thread per query; the
pooled AUC and raw pAUC of all documents ranked together (one pass over the groups of tied scores).

They only ask whether each ranked document is relevant (``relevant``, a bool per row in
input order, from the convention). Same pattern and shared arguments as
``_graded_kernels``: a scalar per-query helper walks ``order[lo:hi]`` once in rank
order, and a ``nogil`` driver loops over a range of queries (one range per thread).
"""
from __future__ import annotations

from twinrank.fast.evaluation._ranking import top_k
from twinrank.fast.runtime._kernel_cache import njit

# ----------------------------------------------------------------------------- per query


@njit(cache=True)
def _average_precision_query(relevant, order, lo, hi, k, min_k_normalizer, no_relevant_value):
    top, hits, total = top_k(k, hi - lo), 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            hits += 1
            if t < top:
                total += hits / (t + 1)
    z = min(hits, k) if (min_k_normalizer and k > 0) else hits
    return total / z if z > 0 else no_relevant_value


@njit(cache=True)
def _precision_query(relevant, order, lo, hi, k, divide_by_n):
    top, hits = top_k(k, hi - lo), 0
    for t in range(top):
        hits += relevant[order[lo + t]]
    denominator = float(top) if divide_by_n else float(k)
    return hits / max(denominator, 1.0)


@njit(cache=True)
def _reciprocal_rank_query(relevant, order, lo, hi, k, no_relevant_value):
    """1/rank of the first relevant document in the top k; 0 if none there, no_relevant_value if none at all."""
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            return 1.0 / (t + 1) if t < top_k(k, hi - lo) else 0.0
    return no_relevant_value


@njit(cache=True)
def _auc_query(relevant, order, lo, hi, no_relevant_value):
    """Ordered (relevant above irrelevant) pairs over all such pairs."""
    above, ordered = 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            above += 1
        else:
            ordered += above
    pairs = float(above) * ((hi - lo) - float(above))
    return ordered / pairs if pairs > 0 else no_relevant_value


@njit(cache=True)
def _pauc_query(relevant, order, lo, hi, p, no_relevant_value):
    """McClish-standardised area of the ROC staircase over FPR in [0, p]."""
    n_pos = 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            n_pos += 1.0
    n_neg = (hi - lo) - n_pos
    pos, neg = max(n_pos, 1.0), max(n_neg, 1.0)
    above, area = 0, 0.0
    for t in range(hi - lo):
        if relevant[order[lo + t]]:
            above += 1
        else:
            m = t + 1 - above
            area += above / pos * max(min(m / neg, p) - (m - 1) / neg, 0.0)
    if n_pos * n_neg == 0:
        return no_relevant_value
    return 0.5 * (1.0 + (area - p * p / 2.0) / (p - p * p / 2.0))


# ----------------------------------------------------------------------------- drivers


@njit(cache=True, nogil=True)
def average_precision_kernel(first, last, relevant, order, query_offsets, k, min_k_normalizer,
                             no_relevant_value, out):
    """# IN relevant (n_rows,) bool, input order."""
    for q in range(first, last):
        out[q] = _average_precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k,
                                          min_k_normalizer, no_relevant_value)


@njit(cache=True, nogil=True)
def precision_kernel(first, last, relevant, order, query_offsets, k, divide_by_n, out):
    for q in range(first, last):
        out[q] = _precision_query(relevant, order, query_offsets[q], query_offsets[q + 1], k, divide_by_n)


@njit(cache=True, nogil=True)
def reciprocal_rank_kernel(first, last, relevant, order, query_offsets, k, no_relevant_value, out):
    for q in range(first, last):
        out[q] = _reciprocal_rank_query(relevant, order, query_offsets[q], query_offsets[q + 1], k,
                                        no_relevant_value)


@njit(cache=True, nogil=True)
def auc_kernel(first, last, relevant, order, query_offsets, no_relevant_value, out):
    for q in range(first, last):
        out[q] = _auc_query(relevant, order, query_offsets[q], query_offsets[q + 1], no_relevant_value)


@njit(cache=True, nogil=True)
def pauc_kernel(first, last, relevant, order, query_offsets, p, no_relevant_value, out):
    for q in range(first, last):
        out[q] = _pauc_query(relevant, order, query_offsets[q], query_offsets[q + 1], p, no_relevant_value)


# ----------------------------------------------------------------------------- all documents pooled


@njit(cache=True)
def _next_group(scores, relevant, order, t):
    """The group of equal score starting at ranked slot ``t``: (its end, relevant, irrelevant) documents."""
    end, a, b = t, 0.0, 0.0
    while end < len(order) and scores[order[end]] == scores[order[t]]:
        if relevant[order[end]]:
            a += 1.0
        else:
            b += 1.0
        end += 1
    return end, a, b


@njit(cache=True, nogil=True)
def pooled_auc(scores, relevant, order, no_relevant_value):
    """AUC of all rows ranked together, ties 1/2: sum over groups of b_g (A_g + a_g / 2), over P N.

    # IN scores (n_rows,) float64; relevant (n_rows,) bool; order (n_rows,) int64: all rows by
    #    descending score. Every term is half an integer: the sum is exact, in any order.
    """
    above, n_neg, ordered, t = 0.0, 0.0, 0.0, 0
    while t < len(order):
        t, a, b = _next_group(scores, relevant, order, t)
        ordered += b * (above + a / 2)
        above += a
        n_neg += b
    pairs = above * n_neg
    return ordered / pairs if pairs > 0 else no_relevant_value


@njit(cache=True, nogil=True)
def pooled_pauc_raw(scores, relevant, order, p, no_relevant_value):
    """Raw area of the pooled ROC curve over FPR [0, p], group segment by group segment, from the top.

    # IN as ``pooled_auc``; p in (0, 1]. Same terms, same order as the reference's cumulative sum.
    """
    n_pos = 0.0
    for t in range(len(order)):
        n_pos += relevant[t]
    n_neg = len(order) - n_pos
    if n_pos * n_neg == 0:
        return no_relevant_value * p
    above, left, area, t = 0.0, 0.0, 0.0, 0
    while t < len(order):
        t, a, b = _next_group(scores, relevant, order, t)
        width = max(min((left + b) / n_neg, p) - left / n_neg, 0.0)
        area += width * (above + (width * n_neg / max(b, 1.0)) * a / 2) / n_pos
        above += a
        left += b
    return area

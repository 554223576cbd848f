r"""The LambdaRank kernel: one thread per query, one row of pairs at a time.

For a query of n documents it sorts them into ranked order (stable, descending
score; from the previous round's order when the caller keeps one, see
``_ranking.argsort_descending_from``), fills O(n) per-position work rows (labels,
scores, the metric's prefix sums), then for each position ``a < top`` handles the
pairs ``(a, b)``, ``b > a``, as one branch-free row that the compiler vectorises::

    position   0   1   2 ... a  a+1 ... n-1
    row a                    .  [ pairs (a, b) ] -> lambda[b], hessian[b] updated in place,
                                                    their sums (in the same pass) into lambda[a], hessian[a]

O(n log n + n * top) time, O(n) memory, ``top = min(n - 1, truncation, k)``
(pairs with both documents beyond the NDCG/ERR cutoff ``k`` have $\Delta Z = 0$).
Pairs with equal labels are not skipped but get $|\Delta Z| = 0$: cheaper than
a branch. The formulas are those of ``twinrank.reference.losses.objectives``
(``_delta_ndcg``, ``_delta_map``, ``_delta_err``, ``_pair_terms``), written per
row, with three rewrites that change only rounding:

* $e^{\sigma(s_a - s_b)} = u_a \cdot (1 / u_b)$ with $u_t = e^{\sigma (s_t - m)}$, $m$ the
  query's mid score: n exponentials per query instead of one per pair. When
  $\sigma (s_{\max} - s_{\min}) > 1400$ that could overflow, and the query takes
  one exponential per pair instead.
* Divisions by per-query or per-position constants become multiplications by
  their inverses.
* A row's sums (its pairs' lambdas and hessians, for position ``a``) are taken in the pass
  that computes the pairs, in the order the vectorised loop adds them (``fastmath``
  reassociation: several partial sums), not one pair after the other. (They were a second
  pass over a stored row: 15% of the kernel's time.) The order depends on the compiled
  vector width, never on the thread count.

Three choices that change no bit: the sort from the previous order moves each
document's score along with its id (no indirection in the insertion's compares);
NDCG's $|\Delta Z|$ is computed inside the pair row (MAP's and ERR's fill a row
first); exponential gains of integer grades come from a table ($2^l - 1$, exact).

One entry point per metric (:data:`KERNELS`) passes its metric code as a constant: the kernel
is compiled for that metric alone, the others' work rows and deltas left out (``prepare`` and
``metric_deltas`` choose at compile time), about 0.6 s less CPU in a cold NDCG fit.
"""
from __future__ import annotations

import math

import numpy as np
from numba.core import errors, types
from numba.extending import overload

from twinrank.fast.evaluation._ranking import argsort_descending, argsort_descending_from
from twinrank.fast.runtime._kernel_cache import njit
from twinrank.reference.losses.objectives import SCORE_DISTANCE_EPSILON, TIE_GRID

NDCG, MAP, ERR = 0, 1, 2
# rows of the per-thread work array (one column per ranked position); DISCOUNT and GRIDDED are the
# thread's, by position and by row of its query, the others the query's
LABEL, SCORE, LAMBDA, HESSIAN, UP, DOWN, W0, W1, W2, W3, DELTA, DISCOUNT, GRIDDED = range(13)
N_ROWS = 13
N_GRADES = 32  # integer labels 0..31 (every LETOR grade scale) get the ideal DCG by counting, not sorting
MAX_FACTORED_GAP = 1400.0  # sigma * score range below which e^{+-sigma (s - m)} cannot overflow
GRADE_GAINS = np.exp2(np.arange(float(N_GRADES))) - 1.0  # (N_GRADES,) 2^l - 1 of the integer grades, exact


@njit(cache=True, nogil=True)
def ndcg_lambdas(first, last, y, scores, query_offsets, queries, options, on_grid, g, h, ranking):
    """:func:`lambdarank_kernel` of NDCG."""
    lambdarank_kernel(first, last, y, scores, query_offsets, queries, NDCG, options, on_grid, g, h, ranking)


@njit(cache=True, nogil=True)
def map_lambdas(first, last, y, scores, query_offsets, queries, options, on_grid, g, h, ranking):
    """:func:`lambdarank_kernel` of MAP."""
    lambdarank_kernel(first, last, y, scores, query_offsets, queries, MAP, options, on_grid, g, h, ranking)


@njit(cache=True, nogil=True)
def err_lambdas(first, last, y, scores, query_offsets, queries, options, on_grid, g, h, ranking):
    """:func:`lambdarank_kernel` of ERR."""
    lambdarank_kernel(first, last, y, scores, query_offsets, queries, ERR, options, on_grid, g, h, ranking)


KERNELS = {NDCG: ndcg_lambdas, MAP: map_lambdas, ERR: err_lambdas}  # one entry point per metric code


@njit(cache=True)
def lambdarank_kernel(first, last, y, scores, query_offsets, queries, metric, options, on_grid, g, h, ranking):
    """Fill ``g`` and ``h`` at the rows of ``queries[first:last]`` (and ``ranking``, unless it is
    empty): one thread's share (``_threads.over_chunks``), with its own buffers. Called by the
    metric's entry point (:data:`KERNELS`) with ``metric`` a constant: compiled once per metric,
    with that metric's code only (:func:`prepare`, :func:`metric_deltas`).

    # IN  y, scores (n_rows,) float64; query_offsets (n_queries + 1,); queries (m,) unique
    #     metric: NDCG, MAP or ERR, a compile-time constant
    #     options ``(cutoff, linear_gain, l_max, sigma, truncation, normalize)``, as
    #     :func:`query_lambdas` takes them; cutoff, truncation: ints, >= the largest query size for "none"
    # OUT g, h (n_rows,) float64; only rows of ``queries`` are written (zeroed first)
    # IN/OUT ranking (n_rows,) int32 (int64 from 2**31 rows) or (0,): each query's rows in ranked order, the sort's
    #     starting point (``argsort_descending_from``) and its result
    # IN  on_grid: rank and pair the scores rounded to the tie grid (``objectives.on_grid``,
    #     exactly: ``rint(s * TIE_GRID) / TIE_GRID``), read per query into a buffer
    """
    cutoff, linear_gain, l_max, sigma, truncation, normalize = options
    keep = len(ranking) > 0
    max_size = np.int64(0)
    for i in range(first, last):
        max_size = max(max_size, query_offsets[queries[i] + 1] - query_offsets[queries[i]])
    order = np.empty(max_size, np.int64)
    scratch = np.empty(max_size, np.int64)
    by_gain = np.empty(max_size, np.int64)  # a query's positions by descending gain (rare paths: query_lambdas)
    work = np.empty((N_ROWS, max_size))  # (rows, position); one kind of allocation for every float buffer
    grade_counts = np.empty(N_GRADES, np.int64)
    discounts = work[DISCOUNT]  # (max_size,) NDCG@cutoff discount of each position
    for t in range(max_size):
        discounts[t] = 1.0 / np.log2(t + 2.0) if t < cutoff else 0.0
    gridded = work[GRIDDED]  # (max_size,) a query's scores on the tie grid
    for i in range(first, last):
        lo, hi = query_offsets[queries[i]], query_offsets[queries[i] + 1]
        g[lo:hi] = 0.0
        h[lo:hi] = 0.0
        s = scores[lo:hi]
        if on_grid:
            for t in range(hi - lo):
                gridded[t] = np.rint(s[t] * TIE_GRID) / TIE_GRID
            s = gridded[:hi - lo]
        if keep:
            argsort_descending_from(s, order[:hi - lo], scratch[:hi - lo], ranking[lo:hi], lo,
                                    work[SCORE, :hi - lo])
            for t in range(hi - lo):
                ranking[lo + t] = lo + order[t]
        else:
            argsort_descending(s, order[:hi - lo], scratch[:hi - lo])
        query_lambdas(y[lo:hi], s, g[lo:hi], h[lo:hi], order, work, discounts, grade_counts, by_gain, scratch,
                      metric, options)


@njit(cache=True)
def query_lambdas(y, s, g, h, order, work, discounts, grade_counts, by_gain, scratch, metric, options):
    """One query: # IN y, s (n,); order (>= n,) its ranked order; buffers of length >= n (by_gain, scratch:
    int64, for ``argsort_descending`` of the gains when they are sorted: ``prepare_ndcg``, ``tied_ndcg``);
    options ``(cutoff, linear_gain, l_max, sigma, truncation, normalize)`` (:func:`lambdarank_kernel`).
    # OUT g, h (n,)."""
    cutoff, linear_gain, l_max, sigma, truncation, normalize = options
    n = len(s)
    if n < 2:
        return
    for t in range(n):
        work[LABEL, t] = y[order[t]]
        work[SCORE, t] = s[order[t]]
        work[LAMBDA, t] = 0.0
        work[HESSIAN, t] = 0.0
    norm = prepare(work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric)
    if norm == 0.0:
        return
    spread = work[SCORE, 0] - work[SCORE, n - 1]
    if metric == NDCG and spread == 0.0:  # no order yet: the expectation over every order
        total = tied_ndcg(work, n, norm, min(truncation, cutoff), sigma, by_gain, scratch)
    else:
        total = ranked_pairs(work, n, norm, metric, min(n - 1, truncation, cutoff), sigma, normalize, spread)
    scale = math.log2(1.0 + 2.0 * total) / (2.0 * total) if normalize and total > 0.0 else 1.0
    for t in range(n):
        g[order[t]] = -(work[LAMBDA, t] * scale)
        h[order[t]] = work[HESSIAN, t] * scale


@njit(cache=True)
def ranked_pairs(work, n, norm, metric, top, sigma, normalize, spread):
    """The pairs of one ranked query into LAMBDA and HESSIAN; returns the sum of the pairs' lambdas."""
    factored = sigma * spread <= MAX_FACTORED_GAP
    if factored:
        middle = 0.5 * (work[SCORE, 0] + work[SCORE, n - 1])
        for t in range(n):
            work[UP, t] = math.exp(sigma * (work[SCORE, t] - middle))
            work[DOWN, t] = 1.0 / work[UP, t]
    damp = normalize and spread != 0.0
    total = 0.0
    for a in range(top):
        metric_deltas(work, a, n, 1.0 / norm, metric)
        row_lambda, row_hessian, row_abs = pair_row(work, a, n, sigma, factored, damp, metric == NDCG, 1.0 / norm)
        work[LAMBDA, a] += row_lambda
        work[HESSIAN, a] += row_hessian
        if normalize:
            total += row_abs
    return total


@njit(cache=True)
def tied_ndcg(work, n, ideal, top, sigma, by_gain, scratch):
    r"""NDCG's lambdas of a query whose scores all tie, in expectation over every order
    (``reference.losses.objectives._tied_ndcg``): $\lambda_i = \sigma W (n G_i - \sum_j G_j) / (2\,\mathrm{IDCG})$,
    $h_i = \sigma^2 W \sum_j |G_i - G_j| / (4\,\mathrm{IDCG})$. Reads W0 = gains, W1 = discounts;
    writes LAMBDA, HESSIAN (W2 = sorted gains, W3 = their prefix sums; by_gain, scratch (>= n,) int64
    buffers of the sort); returns the sum of the pairs' lambdas."""
    after = 0.0  # sum of D_q over q > p
    pairs = 0.0
    for p in range(n - 1, -1, -1):
        if p < top:
            pairs += (n - 1 - p) * work[W1, p] - after
        after += work[W1, p]
    weight = 2.0 * pairs / (n * (n - 1))
    ranked, prefix = work[W2, :n], work[W3, :n]
    argsort_descending(work[W0, :n], by_gain[:n], scratch[:n])
    for t in range(n):  # ascending
        ranked[t] = work[W0, by_gain[n - 1 - t]]
    running = 0.0
    for t in range(n):
        running += ranked[t]
        prefix[t] = running
    total = 0.0
    for t in range(n):
        gain = work[W0, t]
        below = _count_at_most(ranked, gain)  # how many gains are <= G_t (>= 1)
        distance = gain * (2 * below - n) - 2.0 * prefix[below - 1] + prefix[n - 1]
        work[LAMBDA, t] = sigma * weight * (n * gain - prefix[n - 1]) / (2.0 * ideal)
        work[HESSIAN, t] = sigma * sigma * weight * distance / (4.0 * ideal)
        total += sigma * weight * distance / (4.0 * ideal)
    return total


@njit(cache=True)
def _count_at_most(ascending, value):
    """How many of the ``ascending`` values are <= ``value`` (a binary search)."""
    lo, hi = 0, len(ascending)
    while lo < hi:
        mid = (lo + hi) // 2
        if ascending[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def pair_row(work, a, n, sigma, factored, damp, ndcg, inv_ideal):
    r"""Pairs (a, b), b > a: each pair's signed $\lambda$ (+ pushes a up) subtracted from LAMBDA[b], its
    hessian added to HESSIAN[b]; returns the row's sums of the lambdas, of the hessians and of the
    lambdas' absolute values (a branch on whether it is needed would keep the loop from vectorising),
    in the vectorised loop's order
    (``fastmath`` reassociation, the only flag: no contraction, no approximate operation).

    a is ranked above b, so $x = \sigma (s_a - s_b) \ge 0$, $u = e^x \ge 1$,
    $r = 1 / (1 + u) \le 1/2$ and $1 - r$ are both accurate; $\rho = r$ if
    $y_a > y_b$ (a is the better document) and $1 - r$ otherwise.

    $|\Delta Z|$: with ``ndcg``, $|G_a - G_b|\,|D_a - D_b| / \mathrm{IDCG}$ from W0 = gains,
    W1 = discounts and ``inv_ideal`` = 1 / IDCG; otherwise the row DELTA (``map_deltas``,
    ``err_deltas``).
    """
    label_a, score_a, up_a = work[LABEL, a], work[SCORE, a], work[UP, a]
    # work[ROW, a + 1:n]: positions a+1 .. n-1 of a row, indexed from 0 (a loop from 0 vectorises)
    label, score, down = work[LABEL, a + 1:n], work[SCORE, a + 1:n], work[DOWN, a + 1:n]
    delta = work[DELTA, a + 1:n]
    lambdas, hessians = work[LAMBDA, a + 1:n], work[HESSIAN, a + 1:n]
    gain_a, discount_a = work[W0, a], work[W1, a]
    gains, discounts = work[W0, a + 1:n], work[W1, a + 1:n]
    row_lambda, row_hessian, row_abs = 0.0, 0.0, 0.0
    for i in range(n - a - 1):
        z = abs(gain_a - gains[i]) * abs(discount_a - discounts[i]) * inv_ideal if ndcg else delta[i]
        weight = z / (SCORE_DISTANCE_EPSILON + (score_a - score[i])) if damp else z
        u = up_a * down[i] if factored else math.exp(sigma * (score_a - score[i]))
        r = 1.0 / (1.0 + u)
        one_minus_r = 1.0 - r
        pair_lambda = sigma * weight * (r if label_a > label[i] else -one_minus_r)
        pair_hessian = sigma * sigma * weight * r * one_minus_r
        row_lambda += pair_lambda
        row_hessian += pair_hessian
        row_abs += abs(pair_lambda)
        lambdas[i] -= pair_lambda
        hessians[i] += pair_hessian
    return row_lambda, row_hessian, row_abs


def prepare(work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric):
    """The metric's work rows of one ranked query (``prepare_ndcg``, ``prepare_map`` or ``prepare_err``);
    returns its normaliser. Kernels only (:func:`_prepare`)."""
    raise NotImplementedError("compiled only")


@overload(prepare, prefer_literal=True)
def _prepare(work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric):
    """:func:`prepare` of the constant ``metric``: the other metrics' code is not compiled."""
    code = _literal_metric(metric)
    if code == NDCG:
        return lambda work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric: (
            prepare_ndcg(work, n, discounts, linear_gain, grade_counts, by_gain, scratch))
    if code == MAP:
        return lambda work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric: (
            prepare_map(work, n))
    return lambda work, n, discounts, linear_gain, grade_counts, by_gain, scratch, cutoff, l_max, metric: (
        prepare_err(work, n, cutoff, l_max))


def metric_deltas(work, a, n, inv_norm, metric):
    """Row DELTA of position ``a``: MAP's (``map_deltas``), ERR's (``err_deltas``); NDCG's are computed
    in the pair row. Kernels only (:func:`_metric_deltas`)."""
    raise NotImplementedError("compiled only")


@overload(metric_deltas, prefer_literal=True)
def _metric_deltas(work, a, n, inv_norm, metric):
    """:func:`metric_deltas` of the constant ``metric``."""
    code = _literal_metric(metric)
    if code == MAP:
        return lambda work, a, n, inv_norm, metric: map_deltas(work, a, n, inv_norm)
    if code == ERR:
        return lambda work, a, n, inv_norm, metric: err_deltas(work, a, n)
    return lambda work, a, n, inv_norm, metric: None


def _literal_metric(metric) -> int:
    """The metric code of the numba type ``metric``, which must be a constant (:data:`KERNELS`)."""
    if not isinstance(metric, types.IntegerLiteral):
        raise errors.TypingError("the LambdaRank metric must be a compile-time constant (KERNELS)")
    return metric.literal_value


@njit(cache=True, error_model="numpy")
def map_deltas(work, a, n, inv_relevant):
    r"""DELTA[b] = $|\Delta \mathrm{AP}|$.

    W0 = relevant, W1 = relevant above, W2 = 1/(t+1), W3 = sum of rel/(u+1) above.
    """
    relevant_a, above_a, inv_rank_a, reciprocal_a = work[W0, a], work[W1, a], work[W2, a], work[W3, a]
    relevant, relevant_above = work[W0, a + 1:n], work[W1, a + 1:n]
    inv_rank, reciprocal_above, delta = work[W2, a + 1:n], work[W3, a + 1:n], work[DELTA, a + 1:n]
    c = above_a + 1.0
    for i in range(n - a - 1):
        m = relevant_above[i] - above_a - relevant_a
        between = reciprocal_above[i] - reciprocal_a - relevant_a * inv_rank_a
        gain = c * inv_rank_a - (c + m) * inv_rank[i] + between  # of moving the relevant one up
        delta[i] = abs(relevant_a - relevant[i]) * gain * inv_relevant


@njit(cache=True, error_model="numpy")
def err_deltas(work, a, n):
    r"""DELTA[b] = $|\Delta \mathrm{ERR}|$ (W0 = R, W1 = 1/(1 - R), W2 = weight $w_t$, W3 = ERR above t)."""
    stop_a, inv_go_on_a, weight_a, err_above_a = work[W0, a], work[W1, a], work[W2, a], work[W3, a]
    stop, weight, err_above = work[W0, a + 1:n], work[W2, a + 1:n], work[W3, a + 1:n]
    delta = work[DELTA, a + 1:n]
    err_term_a = stop_a * weight_a
    for i in range(n - a - 1):
        between = err_above[i] - err_above_a - err_term_a
        delta[i] = abs(stop[i] - stop_a) * (weight_a - (between + weight[i]) * inv_go_on_a)


@njit(cache=True)
def prepare_ndcg(work, n, discounts, linear_gain, grade_counts, by_gain, scratch):
    """W0 = gains, W1 = discounts; returns the ideal DCG@cutoff: from the grade counts, or for other
    labels the gains sorted by ``argsort_descending`` (compiled for the ranking anyway; a sort of
    their own, or ``values.sort()``, numba's quicksort, would be compiled for this rare path)."""
    grades = count_grades(work[LABEL, :n], grade_counts)
    for t in range(n):
        label = work[LABEL, t]
        if linear_gain:
            work[W0, t] = label
        else:
            work[W0, t] = GRADE_GAINS[int(label)] if grades else np.exp2(label) - 1.0
        work[W1, t] = discounts[t]
    if grades:
        return ideal_dcg_of_grades(grade_counts, discounts, linear_gain)
    argsort_descending(work[W0, :n], by_gain[:n], scratch[:n])
    ideal = 0.0
    for t in range(n):
        ideal += work[W0, by_gain[t]] * discounts[t]
    return ideal


@njit(cache=True)
def count_grades(labels, grade_counts):
    """Count labels per grade 0..N_GRADES-1; False if a label is not such an integer."""
    grade_counts[:] = 0
    for label in labels:
        if label != math.floor(label) or label >= N_GRADES:
            return False
        grade_counts[int(label)] += 1
    return True


@njit(cache=True)
def ideal_dcg_of_grades(grade_counts, discounts, linear_gain):
    """The ideal DCG from grade counts: the sorted-gains sum, without sorting (same order of additions)."""
    ideal, t = 0.0, 0
    for grade in range(N_GRADES - 1, -1, -1):
        gain = grade if linear_gain else GRADE_GAINS[grade]
        for _ in range(grade_counts[grade]):
            ideal += gain * discounts[t]
            t += 1
    return ideal


@njit(cache=True)
def prepare_map(work, n):
    """W0 = relevant, W1 = relevant above, W2 = 1/(t+1), W3 = sum of rel/(u+1) above; returns #relevant."""
    relevant_above, reciprocal_above = 0.0, 0.0
    for t in range(n):
        relevant = 1.0 if work[LABEL, t] > 0 else 0.0
        work[W0, t] = relevant
        work[W1, t] = relevant_above
        work[W2, t] = 1.0 / (t + 1)
        work[W3, t] = reciprocal_above
        relevant_above += relevant
        reciprocal_above += relevant / (t + 1)
    return relevant_above


@njit(cache=True)
def prepare_err(work, n, cutoff, l_max):
    """W0 = R, W1 = 1/(1 - R), W2 = reach/(t+1) before ``cutoff``, W3 = ERR above t; returns 1."""
    reach, err_above = 1.0, 0.0
    for t in range(n):
        label = work[LABEL, t]
        go_on = np.exp2(-l_max) + (1.0 - np.exp2(label - l_max))
        work[W0, t] = np.exp2(label - l_max) - np.exp2(-l_max)
        work[W1, t] = 1.0 / go_on
        work[W2, t] = reach / (t + 1) if t < cutoff else 0.0
        work[W3, t] = err_above
        err_above += work[W0, t] * work[W2, t]
        reach *= go_on
    return 1.0

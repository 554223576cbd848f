r"""Row counts on demand: the grower's histograms sum $(g, h)$, and rows are counted only where a
split needs them.

A candidate split is valid when each child keeps at least ``min_rows`` rows
(``min_samples_leaf``), and a feature's candidates depend on whether the node has
rows where it is missing (``_split.scan_feature``). Counting every row in every
histogram slot doubles the bytes each row adds (a count lane, padded to four lanes
for one vector add: 22% of the histograms' time at 1M x 136); but a node's choice
depends on the counts of at most a few features, and most often on none that the
hessians cannot settle:

* **The hessian proof.** If every row has $0 \le h_i \le h_{\max}$, a set of rows
  with hessian sum $H$ holds at least $H / h_{\max}$ rows; so $H > (n - 1)\, h_{\max}$
  proves it holds $n$ (and $H > 0$ that it is not empty). The sums of the histograms
  are float64: the proof asks for a margin ``slack`` above that, larger than any
  rounding of them (:func:`proof_of`).
* **Counting.** Otherwise the feature's rows per bin are counted over the node's rows,
  O(m) for that one feature (:func:`count_rows`), and the question is answered exactly.

The split search (``_split.best_split``) scans a feature without counts as if every
candidate kept enough rows, which gives an upper bound of its best gain, and checks
(:func:`enough_rows`) the candidates it is about to take. Features without a missing
value in any row (:func:`missing_columns`) have none in any node; the others'
missing rows are proven present (or, three-way, numerous enough) or counted
(:func:`missing_rows`). The grower's partition counts the split feature's missing
rows as it moves them.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.constants import MISSING_BIN, N_SLOTS

PROOF_SLACK = 2.0**-48  # times (rows + 1024) * H: the rounding margin of the hessian proof
COUNT_CHAINS = 4  # independent tallies of count_rows


@njit(cache=True)
def proof_of(h_max, h_min, h_total, m):
    """``(h_max, slack)`` for the hessian proof from the extreme hessians of the tree's ``m`` rows
    and their sum; ``h_max = -1`` (no proof) when a hessian is negative or all are 0.

    ``slack``: a histogram's $H$ is a float64 sum of at most m rows, minus a chain of
    other sums (the siblings above it, a skipped bin's other slots) and summed again over
    at most 256 slots; each of these roundings is at most $\\epsilon H_{\\mathrm{total}}$,
    $\\epsilon = 2^{-53}$, so the error stays below $(m + \\mathrm{depth} + 512)\\, \\epsilon
    H_{\\mathrm{total}}$. The slack is $32 (m + 1024)\\, \\epsilon H_{\\mathrm{total}}$. (Quantized
    training sums integers: exact.)"""
    if h_min < 0.0 or h_max <= 0.0:
        return -1.0, 0.0
    return h_max, PROOF_SLACK * (m + 1024.0) * h_total


@njit(cache=True)
def holds(hessian, n, h_max, slack):
    """Whether rows of hessian sum ``hessian`` are proven to be at least ``n`` (hessian proof)."""
    return h_max > 0.0 and hessian > (n - 1) * h_max + slack


@njit(cache=True)
def missing_rows(f, slots, has_missing, three_way, min_rows, counts, counted, node):
    """``(c_miss, counted)`` of feature ``f`` in a node, as its scan needs it: exact when counted
    (or ``has_missing`` is False, or the node is known to have no missing row of ``f``: 0); else,
    when its missing rows are proven present, a stand-in that answers the scan's questions as the
    count would (``> 0``; three-way also ``>= min_rows``, proven too). Otherwise the feature's rows
    are counted into ``counts``; none missing is recorded in the node's ``missing_free``.

    # IN  node: ``(bin_columns, n_rows, order, start, stop, h_max, slack, more, more_start,
    #     more_stop, missing_free)``: the bins column-major, the node's rows ``order[start:stop]``
    #     and ``more[more_start:more_stop]`` (quantized training's active rows, ``_grower``; else
    #     empty), the proof (:func:`proof_of`) and missing_free (d,) bool, IN/OUT: the features
    #     found without a missing row in the node (so in its descendants: the grower copies it
    #     to the children), or (0,) to record nothing
    """
    if counted:
        return counts[MISSING_BIN], True
    missing_free = node[10]
    if not has_missing or (len(missing_free) > 0 and missing_free[f]):
        return 0.0, False
    h_max, slack = node[5], node[6]
    h_miss = slots[MISSING_BIN, 1]
    if not three_way and holds(h_miss, np.int64(1), h_max, slack):
        return 1.0, False
    if three_way and holds(h_miss, min_rows, h_max, slack):
        return float(max(1, min_rows)), False
    count_node(f, node, counts)
    if len(missing_free) > 0 and counts[MISSING_BIN] == 0.0:
        missing_free[f] = True
    return counts[MISSING_BIN], True


@njit(cache=True)
def enough_rows(f, slots, b, side, h, c, min_rows, counts, node):
    """``(valid, counted)``: whether the candidate ``(b, side)`` of feature ``f`` (``slots`` its
    histogram) leaves ``min_rows`` rows on each side of a node of ``c`` rows and hessian ``h``,
    by the hessian proof, else by counting the feature's rows into ``counts`` (256,) (then
    ``counted``). Side 0: missing rows right; 1: left; 2: a child of their own. ``node`` as
    :func:`missing_rows`'s.
    """
    h_max, slack = node[5], node[6]
    h_left = 0.0
    for k in range(b + 1):
        h_left += slots[k, 1]
    h_miss = slots[MISSING_BIN, 1]
    if side == 1:
        h_left += h_miss
    h_right = h - h_left - (h_miss if side == 2 else 0.0)
    if holds(h_left, min_rows, h_max, slack) and holds(h_right, min_rows, h_max, slack):
        return True, False
    count_node(f, node, counts)
    c_left = 0.0
    for k in range(b + 1):
        c_left += counts[k]
    c_miss = counts[MISSING_BIN]
    if side == 1:
        c_left += c_miss
    c_right = c - c_left - (c_miss if side == 2 else 0.0)
    return c_left >= min_rows and c_right >= min_rows, True


@njit(cache=True)
def count_node(f, node, counts):
    """``counts[b]`` = the rows of the node (``missing_rows``'s ``node``: both its segments) in bin
    ``b`` of feature ``f``. O(m)."""
    bin_columns, n_rows, order, start, stop, _, _, more, more_start, more_stop, _ = node
    count_rows(bin_columns, f * n_rows, order, start, stop, counts)
    for i in range(more_start, more_stop):
        counts[bin_columns[f * n_rows + more[i]]] += 1.0


@njit(cache=True)
def count_rows(bin_columns, at, order, start, stop, counts):
    """``counts[b]`` = rows of ``order[start:stop]`` in bin ``b`` of the column that starts at
    ``bin_columns[at]`` (float64, exact). O(m).

    Four rows at a time into four integer tallies, added at the end (exact): one tally's
    increment waits on its previous store when bins repeat, as in runs of a query's rows or a
    sparse feature's common bin; four are four chains (a skewed column 2.2 -> 0.85 ns a row)."""
    tally = np.zeros((COUNT_CHAINS, N_SLOTS), dtype=np.int64)
    i = start
    while i + COUNT_CHAINS <= stop:
        for q in range(COUNT_CHAINS):  # a constant trip count: unrolled
            tally[q, bin_columns[at + order[i + q]]] += 1
        i += COUNT_CHAINS
    for i in range(i, stop):
        tally[0, bin_columns[at + order[i]]] += 1
    for b in range(N_SLOTS):
        counts[b] = float(tally[:, b].sum())


@njit(cache=True, nogil=True)
def count_features(first, last, bin_columns, n_rows, order, counts):
    """``counts[f]`` = :func:`count_rows` of feature ``f`` over all of ``order``, for the features
    ``[first, last)`` (``tree.build_histogram``'s count lane)."""
    for f in range(first, last):
        count_rows(bin_columns, f * n_rows, order, 0, len(order), counts[f])


def missing_columns(binned: np.ndarray) -> np.ndarray:
    """(d,) bool: which features of the bins ``binned`` (n_rows, d) are missing in some row."""
    n_rows, n_features = binned.shape
    found = np.zeros(n_features, dtype=np.bool_)
    over_chunks(_find_missing, n_features, binned.reshape(-1, order="F"), n_rows, found)
    return found


@njit(cache=True, nogil=True)
def _find_missing(first, last, columns, n_rows, found):
    """found[f] = whether column f holds MISSING_BIN, for the features ``[first, last)``."""
    for f in range(first, last):
        for r in range(f * n_rows, (f + 1) * n_rows):
            if columns[r] == MISSING_BIN:
                found[f] = True
                break

"""The fast tree grower taken apart: its compiled kernels replayed one by one, each timed.

``twinrank.fast._grower.grow`` runs the whole best-first loop compiled, so no
Python timer sees inside it. :func:`replay` re-runs that loop in Python on the
same inputs, calling the same compiled kernels in the same order (histogram
build with sibling subtraction, split scan, partition), and checks that it grows
the tree ``grow_tree`` grew (a replay that diverged is reported, not trusted).
The replay mirrors ``_grower.grow`` as of this benchmark; the bookkeeping between
kernels, which ``grow`` runs compiled, is Python here and is not timed.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from twinrank.fast._histogram import N_SLOTS, build_into, constant_hessian
from twinrank.fast._layout import bin_layouts
from twinrank.fast._partition import PARTITION_BLOCK, partition
from twinrank.fast._split import best_split, left_stats
from twinrank.reference.binning import MISSING_BIN
from twinrank.reference.tree import _checked_inputs


def replay(watch, tree, binned, gradients, hessians, thresholds, params, **kwargs) -> None:
    """Time ``grow_tree``'s argument checks and kernels on these inputs into ``watch``."""
    timed = _Timed(watch)
    job = timed("argument checks (grow_tree)", _checked_inputs, binned, gradients, hessians, thresholds,
                params, kwargs.get("rows"), kwargs.get("feature_mask"), kwargs.get("feature_cost"))
    columns, rows_major = timed("bin layouts (cached row-major copy)", bin_layouts, job.binned)
    splits = _grow(timed, columns, rows_major, job, params, numba.get_num_threads())
    watch.calls["replayed trees"] += 1
    grown = [(int(f), int(b)) for f, b in zip(tree.feature, tree.bin_threshold) if f >= 0]
    if sorted(splits) != sorted(grown):
        watch.calls["replay mismatches"] += 1


class _Timed:
    def __init__(self, watch):
        self.watch = watch

    def __call__(self, label, function, *args):
        start = time.perf_counter()
        result = function(*args)
        self.watch.seconds[label] += time.perf_counter() - start
        return result


def _grow(timed, bin_columns, bin_rows, job, params, n_threads) -> list:
    """``_grower.grow``'s loop with each kernel timed; returns the (feature, bin) of every split."""
    g_all, h_all = np.ascontiguousarray(job.gradients), np.ascontiguousarray(job.hessians)
    rows = job.rows.astype(np.int32)
    m, d = len(rows), bin_columns.shape[1]
    max_leaves, min_rows = params.max_leaves, job.min_rows
    min_hessian, l2 = float(params.min_hessian_in_leaf), float(params.lambda_l2)
    orders, gh, goes_left, block_lefts, hist = timed(
        "buffers (row ids, histogram pool)", _buffers, rows, m, d, max_leaves)
    is_const, h0 = timed("constant-hessian check", constant_hessian, h_all, rows)
    free = list(range(max_leaves - 1, -1, -1))
    scan = (np.empty(d), np.empty(d, dtype=np.int64), np.empty(d, dtype=np.int64))
    node = {0: dict(start=0, stop=m, buf=0, depth=0, g=float(g_all[rows].sum()), h=float(h_all[rows].sum()),
                    c=m, slot=free.pop())}
    timed("histogram: root", build_into, hist[0], bin_columns, bin_rows, g_all, h_all, orders[0], 0, m, gh,
          is_const, h0, n_threads, hist[0], False)
    best = {}
    _evaluate(timed, 0, node, best, hist, free, job, scan, min_rows, min_hessian, l2, params.min_gain_to_split)
    splits, n_leaves = [], 1
    while n_leaves < max_leaves and best:
        k = max(best, key=lambda key: (best[key][0], -key))  # largest gain, then lowest id
        gain, f, b, side = best.pop(k)
        parent = node[k]
        slots = hist[parent["slot"], f]
        g_left, h_left, c_left = left_stats(slots, b, side == 1)
        missing_left = side == 1 if slots[MISSING_BIN, 2] > 0 else c_left >= parent["c"] - c_left
        src = parent["buf"]
        timed("partition", partition, orders[src], orders[1 - src], parent["start"], parent["stop"],
              bin_columns[:, f], b, missing_left, np.int64(c_left), goes_left, block_lefts)
        splits.append((f, b))
        mid = parent["start"] + int(c_left)
        kl, kr = 2 * n_leaves - 1, 2 * n_leaves
        node[kl] = dict(start=parent["start"], stop=mid, buf=1 - src, depth=parent["depth"] + 1,
                        g=g_left, h=h_left, c=int(c_left), slot=-1)
        node[kr] = dict(start=mid, stop=parent["stop"], buf=1 - src, depth=parent["depth"] + 1,
                        g=parent["g"] - g_left, h=parent["h"] - h_left, c=parent["c"] - int(c_left), slot=-1)
        n_leaves += 1
        if n_leaves == max_leaves:
            break
        small, large = (kl, kr) if node[kl]["c"] <= node[kr]["c"] else (kr, kl)
        may = {c: node[c]["depth"] < (params.max_depth or 2**62) and node[c]["c"] >= 2 * min_rows
               for c in (small, large)}
        p_slot = parent["slot"]
        if may[large]:
            s = free.pop()
            timed("histogram: smaller child + sibling subtraction", build_into, hist[s], bin_columns, bin_rows,
                  g_all, h_all, orders[1 - src], node[small]["start"], node[small]["stop"], gh, is_const, h0,
                  n_threads, hist[p_slot], True)
            node[large]["slot"] = p_slot
            if may[small]:
                node[small]["slot"] = s
            else:
                free.append(s)
        elif may[small]:
            timed("histogram: smaller child", build_into, hist[p_slot], bin_columns, bin_rows, g_all, h_all,
                  orders[1 - src], node[small]["start"], node[small]["stop"], gh, is_const, h0, n_threads,
                  hist[p_slot], False)
            node[small]["slot"] = p_slot
        else:
            free.append(p_slot)
        for child in (kl, kr):
            if node[child]["slot"] >= 0:
                _evaluate(timed, child, node, best, hist, free, job, scan, min_rows, min_hessian, l2,
                          params.min_gain_to_split)
    return splits


def _buffers(rows, m, d, max_leaves):
    """The grower's per-tree buffers, allocated as ``grow`` allocates them."""
    orders = (rows.copy(), np.empty_like(rows))
    return (orders, np.empty((m, 2)), np.empty(m, dtype=np.uint8),
            np.empty(m // PARTITION_BLOCK + 2, dtype=np.int64), np.empty((max_leaves, d, N_SLOTS, 3)))


def _evaluate(timed, k, node, best, hist, free, job, scan, min_rows, min_hessian, l2, min_gain):
    """Leaf ``k``'s best split into ``best``, or its histogram slot freed."""
    n = node[k]
    f = timed("split scan", best_split, hist[n["slot"]], n["g"], n["h"], float(n["c"]), job.n_bins,
              np.ascontiguousarray(job.feature_mask[k]), job.penalty, min_rows, min_hessian, l2, *scan)
    if f >= 0 and scan[0][f] > min_gain:
        best[k] = (scan[0][f], int(f), int(scan[1][f]), int(scan[2][f]))
    else:
        free.append(n["slot"])
        n["slot"] = -1

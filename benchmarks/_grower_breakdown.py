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
from twinrank.fast._partition import PARTITION_BLOCK, partition
from twinrank.fast._split import best_split, left_stats
from twinrank.fast.tree import _flat_layouts, _row_ids
from twinrank.reference.binning import MISSING_BIN
from twinrank.reference.tree import _checked_inputs


def replay(watch, tree, binned, gradients, hessians, thresholds, params, **kwargs) -> None:
    """Time ``grow_tree``'s argument checks and kernels on these inputs into ``watch``.

    A replay that fails (the grower's kernels changed) or grows another tree is
    counted in ``watch.calls`` ("replay failures", "replay mismatches"), not raised.
    """
    timed = _Timed(watch)
    try:
        job = timed("argument checks (grow_tree)", _checked_inputs, binned, gradients, hessians, thresholds,
                    params, kwargs.get("rows"), kwargs.get("feature_mask"), kwargs.get("feature_cost"))
        columns, rows_major = timed("bin layouts (cached row-major copy)", _flat_layouts, job.binned)
        splits = _grow(timed, columns, rows_major, job, params, numba.get_num_threads())
    except Exception as error:  # a replay that no longer fits the grower must not stop the benchmark
        watch.calls["replay failures"] += 1
        watch.errors = getattr(watch, "errors", []) + [f"{type(error).__name__}: {error}"[:300]]
        return
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
    """``_grower.grow``'s loop (two-way splits) with each kernel timed; the (feature, bin) of every split."""
    if params.missing_split == "separate":
        raise NotImplementedError("the replay covers two-way splits only (missing_split='separate' given)")
    g_all, h_all = np.ascontiguousarray(job.gradients), np.ascontiguousarray(job.hessians)
    n_rows = len(g_all)
    rows = _row_ids(job.rows, n_rows)
    m, max_leaves, min_rows, max_depth = len(rows), params.max_leaves, job.min_rows, job.max_depth
    orders, gh, goes_left, block_lefts, hist = timed(
        "buffers (row ids, histogram pool)", _buffers, rows, m, len(job.n_bins), max_leaves)
    is_const, h0 = timed("constant-hessian check", constant_hessian, h_all, rows)
    free = list(range(max_leaves - 1, -1, -1))
    scan = (np.empty(len(job.n_bins)), np.empty(len(job.n_bins), dtype=np.int64),
            np.empty(len(job.n_bins), dtype=np.int64))
    node = {0: dict(start=0, stop=m, buf=0, depth=0, g=float(g_all[rows].sum()), h=float(h_all[rows].sum()),
                    c=m, slot=-1)}

    def may_split(k):
        return node[k]["depth"] < max_depth and node[k]["c"] >= 2 * min_rows

    best = {}
    if may_split(0):
        node[0]["slot"] = free.pop()
        timed("histogram: root", build_into, hist[node[0]["slot"]], bin_columns, bin_rows, g_all, h_all,
              orders[0], np.int64(0), np.int64(m), gh, is_const, h0, n_threads, hist[node[0]["slot"]],
              np.bool_(False))
        _evaluate(timed, 0, node, best, hist, free, job, scan, params)
    splits, n_leaves = [], 1
    while n_leaves < max_leaves and best:
        k = max(best, key=lambda key: (best[key][0], -key))  # largest gain, then lowest id
        _, f, b, side = best.pop(k)
        parent = node[k]
        slots = hist[parent["slot"], f]  # (256, 3)
        g_left, h_left, c_left = left_stats(slots, np.int64(b), side == 1)
        missing_left = side == 1 if slots[MISSING_BIN, 2] > 0 else c_left >= parent["c"] - c_left
        src = parent["buf"]
        timed("partition", partition, orders[src], orders[1 - src], np.int64(parent["start"]),
              np.int64(parent["stop"]), bin_columns[f * n_rows:(f + 1) * n_rows], np.int64(b), missing_left,
              np.int64(c_left), goes_left, block_lefts)
        splits.append((f, b))
        mid = parent["start"] + int(c_left)
        kl, kr = 2 * n_leaves - 1, 2 * n_leaves
        for child, lo, hi, g, h, c in ((kl, parent["start"], mid, g_left, h_left, int(c_left)),
                                       (kr, mid, parent["stop"], parent["g"] - g_left, parent["h"] - h_left,
                                        parent["c"] - int(c_left))):
            node[child] = dict(start=lo, stop=hi, buf=1 - src, depth=parent["depth"] + 1, g=g, h=h, c=c, slot=-1)
        n_leaves += 1
        if n_leaves == max_leaves:
            break
        small, large = (kl, kr) if node[kl]["c"] < node[kr]["c"] else (kr, kl)  # ties: the last is large
        split_small, split_large = may_split(small), may_split(large)
        if split_small or split_large:
            target = free.pop() if split_large else parent["slot"]
            timed("histogram: smaller child" + (" + sibling subtraction" if split_large else ""), build_into,
                  hist[target], bin_columns, bin_rows, g_all, h_all, orders[1 - src],
                  np.int64(node[small]["start"]), np.int64(node[small]["stop"]), gh, is_const, h0, n_threads,
                  hist[parent["slot"]], np.bool_(split_large))
            if split_small:
                node[small]["slot"] = target
            elif target != parent["slot"]:
                free.append(target)
        if split_large:
            node[large]["slot"] = parent["slot"]
        elif not split_small:
            free.append(parent["slot"])
        for child in (kl, kr):
            if node[child]["slot"] >= 0:
                _evaluate(timed, child, node, best, hist, free, job, scan, params)
    return splits


def _buffers(rows, m, d, max_leaves):
    """The grower's per-tree buffers, allocated as ``grow`` allocates them."""
    orders = (rows.copy(), np.empty_like(rows))
    return (orders, np.empty((m, 2)), np.empty(m, dtype=np.uint8),
            np.empty(m // PARTITION_BLOCK + 2, dtype=np.int64), np.empty((max_leaves, d, N_SLOTS, 3)))


def _evaluate(timed, k, node, best, hist, free, job, scan, params):
    """Leaf ``k``'s best two-way split into ``best``, or its histogram slot freed."""
    n = node[k]
    f = timed("split scan", best_split, hist[n["slot"]], n["g"], n["h"], float(n["c"]), job.n_bins,
              np.ascontiguousarray(job.feature_mask[k]), job.penalty, job.min_rows,
              float(params.min_hessian_in_leaf), float(params.lambda_l2), False, *scan)
    if f >= 0 and scan[0][f] > params.min_gain_to_split:
        best[k] = (scan[0][f], int(f), int(scan[1][f]), int(scan[2][f]))
    else:
        free.append(n["slot"])
        n["slot"] = -1

"""How far the exact grower's histograms are from the machine's bound: a measured roofline.

Three measurements, all on one thread (``time.thread_time``: the calling thread's CPU time,
which other jobs on a shared machine inflate far less than wall time), best of ``--repeat``:

1. **The bound.** The simplest scatter-add there is: for each row, ``hist[bin] += (g, h)``
   (one 16-byte vector add, ``_simd.add_row``, as the grower's), contiguous uint8 bins of
   ``ROOF_ROWS`` rows repeated, the ``(g, h)`` pairs and the histogram in cache. Bins uniform
   over 256, skewed (half the rows in one bin) or in runs (a value held for 100 rows, as a
   query-level feature in rows grouped by query); one feature at a time (each update waits on
   the previous one's store when the bin repeats) or ``k`` features interleaved per row
   (``k`` independent chains, ``k`` histograms: 4 KB each, 4 features in L1, 16 just beyond
   its 48 KB). And the same adds spread at random over 80 features' histograms (330 KB, in
   L2), the footprint of the sparse features' entries.
2. **The grower's kernels** on the benchmark's data (``generate.py``, 1M x 136, binned as
   ``fit`` bins): its parts at the root (the column pass over the dense features, the sparse
   features' entries) and whole nodes of random rows (in row order, as the partition keeps
   them): ns per update (one row's add into one slot) and per row and feature.
3. **Updates per tree.** A LambdaMART fit of the speed benchmark's settings (``--trees``
   trees): every histogram the grower built (the root, then the smaller child of each split
   that may be split further, ``_grower._child_histograms``), rebuilt from the fitted trees
   (rows per node from the rows' leaves) and timed again one node at a time with its own rows:
   updates and CPU ms per tree, next to the bound's time for as many updates.

    python benchmarks/histogram_roofline.py [--rows 1000000] [--trees 10] [--json F] [--markdown F]
"""
from __future__ import annotations

import argparse
import os
import time
from functools import partial

import numba
import numpy as np
from _frameworks import Settings, Twinrank
from _machine import machine
from _output import save
from generate import generate, queries_for_rows

from twinrank.fast.runtime._simd import add_row
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees import _grower
from twinrank.fast.trees._histogram import (
    FEATURE_SLOTS,
    PARALLEL_WORK,
    SLOT_SIZE,
    SPARSE_RATIO,
    sum_column_blocks,
)
from twinrank.fast.trees._layout import bin_layouts, sparse_layout
from twinrank.fast.trees._skipped_bins import SKIP_RATIO, _sum_entries
from twinrank.fast.trees.predict import apply_tree

ROOF_ROWS = 4096  # rows of the bound's kernels: (g, h) 64 KB, read again every repetition
ROOF_UPDATES = 1 << 25  # updates per timing of a bound
_1, _L = np.uint64(1), np.uint64(2)


def scatter(k: int):
    """A kernel ``(hist, bins, gh, reps)``: ``reps`` times, for each row ``i``, for each of the ``k``
    features (rows of ``bins`` (k, n)), ``hist[f, bins[f, i]] += gh[i]``: ``k`` independent chains
    of adds (``k`` a constant of the kernel: its loop unrolled)."""

    @numba.njit
    def kernel(hist, bins, gh, reps):
        n = np.uint64(bins.shape[1])
        flat, columns = hist.reshape(hist.size), bins.reshape(bins.size)
        for _ in range(reps):
            for i in range(np.uint64(0), n):
                for f in range(k):
                    add_row(flat, np.uint64(f * SLOT_SIZE) + np.uint64(columns[np.uint64(f) * n + i]) * _L, gh,
                            i << _1)

    return kernel


@numba.njit
def scatter_slots(hist, slots, gh, per_row, reps):
    """``reps`` times: row ``i`` adds its ``(g, h)`` into the ``per_row`` slots
    ``slots[i * per_row:]`` (slot numbers over the whole of ``hist``), as the entries do."""
    flat = hist.reshape(hist.size)
    n = len(slots) // per_row
    for _ in range(reps):
        e = np.uint64(0)
        for i in range(np.uint64(0), np.uint64(n)):
            for _q in range(per_row):
                add_row(flat, np.uint64(slots[e]) * _L, gh, i << _1)
                e += _1


def best_seconds(run, repeat: int) -> float:
    """The least calling-thread CPU time of ``repeat`` calls (after one unmeasured call)."""
    run()
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        run()
        times.append(time.thread_time() - start)
    return min(times)


def bound(repeat: int) -> list[dict]:
    """ns per update of :func:`scatter` and :func:`scatter_slots` (module docstring, 1.)."""
    rng = np.random.default_rng(0)
    n = ROOF_ROWS
    gh = rng.standard_normal(2 * n)
    draws = {"uniform": lambda: rng.integers(0, 256, n),
             "skewed (half in one bin)": lambda: np.where(rng.random(n) < 0.5, 7, rng.integers(0, 256, n)),
             "runs of 100 rows": lambda: np.repeat(rng.integers(0, 256, n // 100 + 1), 100)[:n]}
    rows = []
    for name, draw in draws.items():
        for k in (1, 4, 8, 16):
            bins = np.array([draw() for _ in range(k)], dtype=np.uint8)
            hist = np.zeros((k, FEATURE_SLOTS, 2))
            reps = ROOF_UPDATES // (k * n)
            kernel = scatter(k)
            t = best_seconds(partial(kernel, hist, bins, gh, reps), repeat)
            rows.append({"bins": name, "features per row": k, "histogram KB": hist.nbytes / 1024,
                         "ns per update": 1e9 * t / (reps * k * n)})
    for n_features in (4, 16, 80, 136):  # random slots over n_features' histograms, 28 a row
        per_row = 28
        slots = (rng.integers(0, n_features, n * per_row) * FEATURE_SLOTS
                 + rng.integers(0, 256, n * per_row)).astype(np.uint16 if n_features < 250 else np.uint32)
        hist = np.zeros((n_features, FEATURE_SLOTS, 2))
        reps = ROOF_UPDATES // (per_row * n)
        t = best_seconds(partial(scatter_slots, hist, slots, gh, per_row, reps), repeat)
        rows.append({"bins": "random slots, 28 a row", "features per row": n_features,
                     "histogram KB": hist.nbytes / 1024, "ns per update": 1e9 * t / (reps * per_row * n)})
    return rows


class Kernels:
    """The grower's histogram kernels on one binned matrix, one node at a time (module docstring, 2.)."""

    def __init__(self, binned: np.ndarray, seed: int = 1):
        columns, by_row = bin_layouts(binned)
        self.columns, self.by_row = columns.reshape(-1, order="F"), by_row.reshape(-1)
        self.skipping = sparse_layout(binned)
        self.n_rows, self.n_features = binned.shape
        rng = np.random.default_rng(seed)
        self.g, self.h = rng.standard_normal(self.n_rows), rng.uniform(0.1, 1.0, self.n_rows)
        self.hist = np.empty((self.n_features, FEATURE_SLOTS, 2))
        self.spare, self.parent = np.empty_like(self.hist), np.zeros_like(self.hist)
        self.gh = np.empty((self.n_rows, 2))
        _, dense, entry_start, *_ = self.skipping
        self.n_dense, self.entries = len(dense), np.diff(entry_start.astype(np.int64))

    def kind(self, m: int) -> str:
        """Which kernel ``_grower.build`` takes for a node of ``m`` rows."""
        n, d = self.n_rows, self.n_features
        ratio = SKIP_RATIO if self.n_dense < d else SPARSE_RATIO
        if m * d >= PARALLEL_WORK and m * ratio >= n:
            return "column pass + entries"
        return "row pass" if m * ratio < n else "column pass"

    def updates(self, rows: np.ndarray) -> int:
        """Adds into a slot the node's histogram takes (its skipped bins not added)."""
        if self.kind(len(rows)) == "column pass + entries":
            return len(rows) * self.n_dense + int(self.entries[rows].sum())
        return len(rows) * self.n_features

    def seconds(self, rows: np.ndarray, repeat: int) -> float:
        """One thread's CPU seconds of ``_grower.build`` over ``rows`` (ascending row ids)."""
        rows = rows.astype(np.int32)
        totals = np.array([self.g[rows].sum(), self.h[rows].sum()])
        return best_seconds(lambda: _grower.build(
            None, self.hist, self.columns, self.by_row, self.g, self.h, (rows, 0, len(rows)), self.gh, 1,
            self.parent, False, self.spare, self.skipping, totals, True), repeat)

    def parts(self, repeat: int) -> list[dict]:
        """The root's two parts, then whole nodes of random rows."""
        n, (_, dense, entry_start, entries, _) = self.n_rows, self.skipping
        every = np.arange(n, dtype=np.int32)
        gh, flat = np.random.default_rng(2).standard_normal(2 * n), self.hist.reshape(-1)
        t_columns = best_seconds(lambda: sum_column_blocks(flat, self.columns, True, every, gh, 0, n, dense, 0,
                                                           len(dense)), repeat)
        t_entries = best_seconds(lambda: _sum_entries(flat, entry_start, entries, True, every, gh, 0, n), repeat)
        rows = [{"node": "root, column pass of the dense features", "rows": n, "updates": n * len(dense),
                 "ms": 1e3 * t_columns},
                {"node": "root, the sparse features' entries", "rows": n, "updates": int(entry_start[-1]),
                 "ms": 1e3 * t_entries}]
        rng = np.random.default_rng(3)
        for share in (1, 2, 4, 10, 16, 64, 256):
            node = every if share == 1 else np.sort(rng.choice(n, n // share, replace=False))
            rows.append({"node": "root" if share == 1 else f"1/{share} of the rows, {self.kind(len(node))}",
                         "rows": len(node), "updates": self.updates(node), "ms": 1e3 * self.seconds(node, repeat)})
        for row in rows:
            row["ns per update"] = 1e6 * row["ms"] / row["updates"]
            row["ns per row and feature"] = 1e6 * row["ms"] / (row["rows"] * self.n_features)
        return rows


def built_nodes(tree, leaf: np.ndarray, min_rows: int, max_leaves: int) -> list[np.ndarray]:
    """The rows of every node whose histogram the grower built for ``tree`` (``leaf``: each row's
    leaf): the root, and of each split the children but the one with most rows (ties: the last),
    when one of them may be split; none after the split that filled the tree."""
    left, right, missing = tree.left, tree.right, tree.missing
    n_nodes = len(left)
    members = [[] for _ in range(n_nodes)]  # leaves under each node
    parent = np.full(n_nodes, -1)
    for k in range(n_nodes):
        for child in {left[k], right[k], missing[k]} - {-1}:
            parent[child] = k
    for k in np.flatnonzero(left == -1):
        node = k
        while node >= 0:
            members[node].append(k)
            node = parent[node]
    by_leaf = np.argsort(leaf, kind="stable")
    bounds = np.searchsorted(leaf[by_leaf], np.arange(n_nodes + 1))
    rows_of = [np.sort(np.concatenate([by_leaf[bounds[k]:bounds[k + 1]] for k in members[k]])) for k in range(n_nodes)]
    built = [rows_of[0]]
    splits = [k for k in range(n_nodes) if left[k] != -1]
    n_leaves = 1
    for k in sorted(splits, key=lambda k: left[k]):  # in the order they were made
        children = sorted({left[k], right[k], missing[k]})
        n_leaves += len(children) - 1
        if n_leaves == max_leaves:
            break
        large = max(children, key=lambda c: (len(rows_of[c]), c))
        may = {c: len(rows_of[c]) >= 2 * min_rows for c in children}
        built += [rows_of[c] for c in children if c != large and (may[c] or may[large])]
    return built


def per_tree(kernels: Kernels, data, binned_fit, settings: Settings, repeat: int) -> list[dict]:
    """Fit, then rebuild and time every histogram of every tree (module docstring, 3.)."""
    model = Twinrank(settings).train(data, binned_fit, settings.trees).model_
    out = []
    for i, tree in enumerate(model.trees):
        with threads(1):
            out.append(_tree_histograms(kernels, i, tree, data, settings, repeat))
    return out


def _tree_histograms(kernels: Kernels, i: int, tree, data, settings: Settings, repeat: int) -> dict:
    """Updates, rows and CPU ms of tree ``i``'s histograms, by kernel."""
    leaf = apply_tree(tree, data.X)
    nodes = built_nodes(tree, leaf, settings.min_leaf, settings.leaves)
    by_kind: dict = {}
    for rows in nodes:
        kind = by_kind.setdefault(kernels.kind(len(rows)), {"nodes": 0, "rows": 0, "updates": 0, "ms": 0.0})
        kind["nodes"] += 1
        kind["rows"] += len(rows)
        kind["updates"] += kernels.updates(rows)
        kind["ms"] += 1e3 * kernels.seconds(rows, repeat)
    return {"tree": i + 1, "kinds": by_kind, "updates": sum(k["updates"] for k in by_kind.values()),
            "rows x features": sum(k["rows"] for k in by_kind.values()) * kernels.n_features,
            "ms": sum(k["ms"] for k in by_kind.values())}


def report(result: dict) -> str:
    roof = min(r["ns per update"] for r in result["bound"])
    lines = ["# Histogram roofline", "", f"{result['machine']['cpu']}, commit {result['machine']['commit']}, {result['machine']['date']}; load average {result['load before']} before, "
             f"{result['load after']} after. One thread, calling thread's CPU time, best of {result['repeat']}.", "",
             "## The bound: the simplest scatter-add, one thread", "",
             "| bins | features per row | histogram KB | ns per update |", "|---|---:|---:|---:|"]
    lines += [f"| {r['bins']} | {r['features per row']} | {r['histogram KB']:.0f} | {r['ns per update']:.3f} |"
              for r in result["bound"]]
    lines += ["", f"## The grower's kernels ({result['rows']:,} rows x {result['features']} features)", "",
              "| node | rows | updates | ms | ns per update | ns per row and feature |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['node']} | {r['rows']:,} | {r['updates']:,} | {r['ms']:.2f} | {r['ns per update']:.3f} | "
              f"{r['ns per row and feature']:.3f} |" for r in result["kernels"]]
    lines += ["", f"## Updates per tree ({result['trees']} trees of the speed benchmark's settings)", "",
              "| tree | updates (M) | rows x features (M) | histogram CPU ms | ns per update | "
              f"ms at the bound ({roof:.3f} ns) | by kernel: nodes, rows per training row, updates (M), ms |",
              "|---:|---:|---:|---:|---:|---:|---|"]
    for t in result["per tree"]:
        kinds = "; ".join(f"{name}: {k['nodes']}, {k['rows'] / result['rows']:.2f}, {k['updates'] / 1e6:.0f}, "
                          f"{k['ms']:.1f}" for name, k in t["kinds"].items())
        lines.append(f"| {t['tree']} | {t['updates'] / 1e6:.0f} | {t['rows x features'] / 1e6:.0f} | {t['ms']:.1f} | "
                     f"{1e6 * t['ms'] / t['updates']:.3f} | {roof * t['updates'] / 1e6:.1f} | {kinds} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the result as JSON to this file")
    parser.add_argument("--markdown", help="write the tables as Markdown to this file")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    data = generate(queries_for_rows(args.rows), seed=0)
    settings = Settings(trees=args.trees)
    binned = Twinrank(settings).bin(data)
    kernels = Kernels(binned)
    with threads(1):
        result = {"machine": machine(), "load before": [round(x, 2) for x in load_before], "repeat": args.repeat,
                  "rows": len(data.y), "features": data.X.shape[1], "trees": args.trees,
                  "bound": bound(args.repeat), "kernels": kernels.parts(args.repeat)}
    result["per tree"] = per_tree(kernels, data, binned, settings, args.repeat)
    result["load after"] = [round(x, 2) for x in os.getloadavg()]
    text = report(result)
    save(result, text, args.json, args.markdown)


if __name__ == "__main__":
    main()

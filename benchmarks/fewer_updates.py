"""Where the exact grower could add fewer (row, feature) pairs into its histograms: four ways, measured.

The histograms run at the bound of the memory they touch (``histogram_roofline.py``), so a
tree gets faster only by fewer updates. On the benchmark's bins (``generate.py``, 1M x 136,
binned as ``fit`` bins them) this measures what each way could save:

1. **Most-frequent-bin skipping for every feature** (LightGBM's ``FixHistogram``): the share
   of all (row, feature) entries in their feature's most frequent bin, split into the sparse
   features (``_skipped_bins``: already skipped in the nodes of at least ``1 / SKIP_RATIO`` of
   the rows) and the dense ones (a dense feature would then be read from entries, as the
   sparse ones are).
2. **Features that cannot split**: in every histogram the grower built for the first
   ``--trees`` trees of a fit of the speed benchmark's settings (``histogram_roofline.built_nodes``),
   the updates of features with one non-empty bin in the node (constant: no candidate) and of
   those with fewer than ``min_leaf`` rows outside their most frequent bin (no valid candidate).
3. **Exclusive feature bundles** (LightGBM's EFB, Ke et al. 2017, Sec. 4): features taken
   greedily (most rows outside their most frequent bin first) into the first bundle none of
   whose rows they share (or at most ``--conflicts`` of the rows), at most 256 bins a bundle.
4. **The row pass's sparse features**: the share of the row-pass nodes' updates in the sparse
   features' most frequent bins, and the time of a row pass that sums only the dense features
   from the gathered rows and the sparse ones from their entries (their most frequent bins then
   restored from the totals, as the dense nodes' are) against the grower's row pass, on nodes of
   random rows: one thread, CPU time, best of ``--repeat``.

    python benchmarks/fewer_updates.py [--rows 1000000] [--trees 5] [--json F] [--markdown F]
"""
from __future__ import annotations

import argparse
import os

import numba
import numpy as np
from _frameworks import Settings, Twinrank
from _machine import machine
from _output import save
from generate import generate, queries_for_rows
from histogram_roofline import Kernels, best_seconds, built_nodes

from twinrank.fast.runtime._simd import add_row, prefetch
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees._histogram import (
    FEATURE_SLOTS,
    GATHER_ROWS,
    PREFETCH_ROWS,
    SLOT_SIZE,
    _sum_row_blocks,
)
from twinrank.fast.trees._skipped_bins import _sum_entries
from twinrank.fast.trees.predict import apply_tree

_1, _L, _SLOT, _LINE = np.uint64(1), np.uint64(2), np.uint64(SLOT_SIZE), np.uint64(64)
SHARES = (10, 16, 32, 64, 256)  # nodes of 1/share of the rows for the row passes' times


@numba.njit
def node_counts(columns, n_rows, rows, counts):
    """counts[f, b] = rows of ``rows`` in bin b of feature f (column-major bins)."""
    counts[:] = 0
    for f in range(counts.shape[0]):
        base = f * n_rows
        for r in rows:
            counts[f, columns[base + r]] += 1


@numba.njit
def dense_rows_and_entries(flat, bin_rows, order, gh_flat, start, stop, dense, n_features, entry_start,
                           entries):
    """Way 4's row pass: each row's dense features gathered from the row-major bins into a block and
    summed sixteen at a time (as the grower's row pass), then its sparse features' entries."""
    n_dense = len(dense)
    block = np.empty(GATHER_ROWS * n_dense, dtype=np.uint8)
    bases = np.empty(n_dense, dtype=np.uint64)
    for j in range(n_dense):
        bases[j] = np.uint64(dense[j]) * _SLOT
    d = np.uint64(n_features)
    for block_start in range(start, stop, GATHER_ROWS):
        block_stop = min(stop, block_start + GATHER_ROWS)
        k = np.uint64(0)
        for i in range(block_start, block_stop):
            if i + PREFETCH_ROWS < stop:
                ahead = np.uint64(order[i + PREFETCH_ROWS]) * d
                for line in range(np.uint64(0), d, _LINE):
                    prefetch(bin_rows, ahead + line)
            row_start = np.uint64(order[i]) * d
            for j in range(n_dense):
                block[k + np.uint64(j)] = bin_rows[row_start + np.uint64(dense[j])]
            k += np.uint64(n_dense)
        j = 0
        while j + 16 <= n_dense:
            k = np.uint64(j)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                pair = i << _1
                for q in range(16):
                    add_row(flat, bases[j + q] + np.uint64(block[k + np.uint64(q)]) * _L, gh_flat, pair)
                k += np.uint64(n_dense)
            j += 16
        for jj in range(j, n_dense):
            k = np.uint64(jj)
            for i in range(np.uint64(block_start), np.uint64(block_stop)):
                add_row(flat, bases[jj] + np.uint64(block[k]) * _L, gh_flat, i << _1)
                k += np.uint64(n_dense)
    _sum_entries(flat, entry_start, entries, False, order, gh_flat, start, stop)


def mode_bins(binned: np.ndarray, skip: np.ndarray) -> dict:
    """Way 1: the shares of all entries in their feature's most frequent bin."""
    n, d = binned.shape
    top = np.array([np.bincount(binned[:, f], minlength=256).max() for f in range(d)])
    sparse = skip >= 0
    return {"features": d, "sparse features": int(sparse.sum()), "all": top.sum() / (n * d),
            "sparse": top[sparse].sum() / (n * d), "dense": top[~sparse].sum() / (n * d),
            "dense top-bin share": [float(np.min(top[~sparse]) / n), float(np.max(top[~sparse]) / n)]}


def bundles(binned: np.ndarray, conflicts: float) -> dict:
    """Way 3: greedy exclusive bundles (module docstring)."""
    n, d = binned.shape
    counts = np.stack([np.bincount(binned[:, f], minlength=256) for f in range(d)])
    outside = binned != counts.argmax(axis=1)[None, :]  # (n, d) the entries outside the top bin
    limit = int(conflicts * n)
    found = []  # [features, rows outside, conflicts, bins]
    for f in np.argsort(-outside.sum(axis=0), kind="stable"):
        n_bins = int((counts[f] > 0).sum())
        for bundle in found:
            shared = int(np.count_nonzero(bundle[1] & outside[:, f]))
            if bundle[2] + shared <= limit and bundle[3] + n_bins <= 256:
                bundle[0].append(int(f))
                bundle[1] |= outside[:, f]
                bundle[2] += shared
                bundle[3] += n_bins
                break
        else:
            found.append([[int(f)], outside[:, f].copy(), 0, n_bins])
    joined = [b[0] for b in found if len(b[0]) > 1]
    return {"conflicts": conflicts, "columns": len(found), "bundles of several": len(joined),
            "features bundled": sum(len(b) for b in joined)}


def per_node(kernels: Kernels, data, binned, settings: Settings) -> list[dict]:
    """Ways 2 and 4: every built node of the fit's trees, its updates by kind (of a feature that cannot
    split, those its kernel spends on it: a sparse feature's entries in a dense node)."""
    model = Twinrank(settings).train(data, binned, settings.trees).model_
    skip = kernels.skipping[0]
    counts = np.empty((kernels.n_features, 256), dtype=np.int64)
    out = []
    for i, tree in enumerate(model.trees):
        leaf = apply_tree(tree, data.X)
        row = {"tree": i + 1, "updates": 0, "constant": 0, "too few outside": 0, "row pass": 0,
               "row pass, sparse top bins": 0}
        for rows in built_nodes(tree, leaf, settings.min_leaf, settings.leaves):
            node_counts(kernels.columns, kernels.n_rows, rows.astype(np.int64), counts)
            m, top, kind = len(rows), counts.max(axis=1), kernels.kind(len(rows))
            spent = np.full(kernels.n_features, m)  # each feature's updates in the node
            if kind == "column pass + entries":  # a sparse feature: its entries
                sparse = np.flatnonzero(skip >= 0)
                spent[sparse] = m - counts[sparse, skip[sparse]]
            row["updates"] += kernels.updates(rows)
            row["constant"] += int(spent[(counts > 0).sum(axis=1) == 1].sum())
            row["too few outside"] += int(spent[m - top < settings.min_leaf].sum())
            if kind == "row pass":
                row["row pass"] += m * kernels.n_features
                row["row pass, sparse top bins"] += int(top[skip >= 0].sum())
        out.append(row)
    return out


def row_passes(kernels: Kernels, repeat: int) -> list[dict]:
    """Way 4's times: the grower's row pass against dense rows + entries, one thread."""
    _, dense, entry_start, entries, _ = kernels.skipping
    rng = np.random.default_rng(3)
    out = []
    for share in SHARES:
        rows = np.sort(rng.choice(kernels.n_rows, kernels.n_rows // share, replace=False)).astype(np.int32)
        m = len(rows)
        gh = np.empty(2 * m)
        gh[0::2], gh[1::2] = kernels.g[rows], kernels.h[rows]
        flat = np.zeros((kernels.n_features, FEATURE_SLOTS, 2)).reshape(-1)
        with threads(1):
            plain = best_seconds(lambda: _sum_row_blocks(flat, kernels.by_row, rows, gh, 0, m, 0,
                                                         kernels.n_features), repeat)
            split = best_seconds(lambda: dense_rows_and_entries(flat, kernels.by_row, rows, gh, 0, m, dense,
                                                                kernels.n_features, entry_start, entries),
                                 repeat)
        out.append({"share": share, "rows": m, "row pass ms": 1e3 * plain, "dense rows + entries ms": 1e3 * split})
    return out


def report(result: dict) -> str:
    mode, lines = result["mode bins"], []
    lines += ["# Fewer histogram updates: four ways, measured", "",
              f"{result['machine']['cpu']}, commit {result['machine']['commit']}, {result['machine']['date']}; "
              f"load average {result['load before']} before, {result['load after']} after. "
              f"{result['rows']:,} rows x {mode['features']} features ({mode['sparse features']} sparse).", "",
              "## 1. Entries in their feature's most frequent bin", "",
              "| features | share of all (row, feature) entries |", "|---|---:|",
              f"| all | {mode['all']:.3f} |", f"| sparse (skipped in nodes of >= 1/10 of the rows) | {mode['sparse']:.3f} |",
              f"| dense (top bin {mode['dense top-bin share'][0]:.3f}-"
              f"{mode['dense top-bin share'][1]:.3f} of the rows) | {mode['dense']:.3f} |", "",
              "## 2 and 4. The built nodes' updates", "",
              "| tree | updates (M) | on constant features | on features with < min_leaf rows outside the top bin "
              "| row-pass updates (M) | of them in the sparse features' top bins |",
              "|---:|---:|---:|---:|---:|---:|"]
    for t in result["per tree"]:
        lines.append(f"| {t['tree']} | {t['updates'] / 1e6:.0f} | {t['constant'] / t['updates']:.1%} | "
                     f"{t['too few outside'] / t['updates']:.1%} | {t['row pass'] / 1e6:.0f} | "
                     f"{t['row pass, sparse top bins'] / max(t['row pass'], 1):.1%} |")
    lines += ["", "## 3. Exclusive feature bundles", "", "| conflicts allowed | columns | bundles of several | features in them |",
              "|---:|---:|---:|---:|"]
    lines += [f"| {b['conflicts']:g} | {b['columns']} | {b['bundles of several']} | {b['features bundled']} |"
              for b in result["bundles"]]
    lines += ["", "## 4. The row pass against dense rows + entries (one thread, CPU, best of "
              f"{result['repeat']})", "", "| node | rows | row pass ms | dense rows + entries ms | ratio |",
              "|---|---:|---:|---:|---:|"]
    lines += [f"| 1/{r['share']} of the rows | {r['rows']:,} | {r['row pass ms']:.2f} | "
              f"{r['dense rows + entries ms']:.2f} | {r['dense rows + entries ms'] / r['row pass ms']:.2f} |"
              for r in result["row passes"]]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trees", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--conflicts", type=float, default=1e-4, help="EFB: the share of rows two features may share")
    parser.add_argument("--json", help="write the result as JSON to this file")
    parser.add_argument("--markdown", help="write the tables as Markdown to this file")
    args = parser.parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]
    data = generate(queries_for_rows(args.rows), seed=0)
    settings = Settings(trees=args.trees)
    binned = Twinrank(settings).bin(data)
    kernels = Kernels(binned)
    result = {"machine": machine(), "load before": load_before, "repeat": args.repeat, "rows": len(data.y),
              "trees": args.trees, "mode bins": mode_bins(binned, kernels.skipping[0]),
              "bundles": [bundles(binned, 0.0), bundles(binned, args.conflicts)],
              "row passes": row_passes(kernels, args.repeat),
              "per tree": per_node(kernels, data, binned, settings)}
    result["load after"] = [round(x, 2) for x in os.getloadavg()]
    text = report(result)
    save(result, text, args.json, args.markdown)


if __name__ == "__main__":
    main()

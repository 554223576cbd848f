"""The sparse features' entries (``fast/trees/_skipped_bins.py``): what sets their time, and a fit in turn.

The exact grower sums the entries (each row's bins outside its sparse features' most frequent
bins; uint16 slot numbers into one histogram of 80 features x 258 slots, 330 KB, on the benchmark's
data) at the root and at every dense node: about 2 rows per training row a tree. They ran at
0.86 ns an update, the roofline's bound for random slots into 330 KB (``histogram_roofline.md``).
Two measurements:

1. **Kernels** (``--rows`` of ``generate.py``'s data, binned as ``fit`` bins; one thread, calling
   thread's CPU time, best of ``--repeat``; ns per real entry), on the root (rows in order) and on
   nodes of random rows (ascending, as the partition keeps them):

   * *row by row*: the grower's loop per row (``_sum_entries``), prefetched;
   * *one stream* (rows in order only): ``_sum_entries_in_order``, one loop over the entries,
     a row's position advanced by a bit on its first entry;
   * *feature blocks* (the hypothesis: histograms that fit L1/L2): the sparse features cut into
     ``k`` blocks, a uint8 offset per row and block (``k`` bytes a row), each block summed over the
     node's rows in turn;
   * *slots by frequency*: the used slots renumbered hottest first (the hot ones share cache lines);
   * *scattered rows gathered*: chunks of 256 rows' entries copied into one stream, then summed
     as one stream;
   * *a fixed loop, past the end zeros*: each row's first 16 or 24 entries by a loop of fixed length,
     the ones past its end added as (0, 0) (a select, not a branch), the rest by a second loop;
   * *fixed length, 28 a row* (not the rows' sums: a diagnostic): the same slots read 28 a row by a
     loop of fixed length.

   Every variant but the last is checked against the row-by-row sums, bit for bit.
2. **Fits in turn** (``--fit LABEL``, run from each checkout's venv, one after the other): the
   root's histogram (``_grower.build``, one thread's CPU, best of ``--repeat``), CPU and wall ms per
   tree (median of rounds 2..``--trees``) of LambdaMART with the speed benchmark's settings on 1 and
   2 threads, peak RSS, and a hash of the predictions (bit for bit across checkouts). Each run is
   added to the JSON file; the markdown shows them all.

    python benchmarks/entry_stream.py --rows 1000000 --json benchmarks/entry_stream.json
    python benchmarks/entry_stream.py --fit main --json benchmarks/entry_stream.json --markdown benchmarks/entry_stream.md
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import time

import llvmlite.ir as ir
import numba
import numpy as np
from _frameworks import Settings, Twinrank
from _machine import machine
from _output import save
from generate import generate, queries_for_rows
from histogram_roofline import Kernels, best_seconds, scatter_slots
from numba import types
from numba.extending import intrinsic

from twinrank.fast.runtime._simd import add_row, prefetch
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees import _grower
from twinrank.fast.trees._histogram import FEATURE_SLOTS, PREFETCH_ROWS
from twinrank.fast.trees._layout import sparse_layout

_1, _L = np.uint64(1), np.uint64(2)
_AHEAD, _AHEAD2 = np.uint64(PREFETCH_ROWS), np.uint64(2 * PREFETCH_ROWS)
CHUNK = 256  # rows per gathered chunk
COPY = 32  # entries copied per row by a loop of fixed length (more: a second loop)


@numba.njit
def feature_blocks(flat, entry_start, entries, offsets, in_order, order, gh, n):
    """Block by block, each row's entries of the block (``offsets[row, b] .. offsets[row, b + 1]`` past
    its start)."""
    top, width = np.uint64(n), np.uint64(offsets.shape[1])
    for b in range(offsets.shape[1] - 1):
        for i in range(np.uint64(0), top):
            if not in_order:
                if i + _AHEAD2 < top:
                    prefetch(entry_start, np.uint64(order[i + _AHEAD2]))
                    prefetch(offsets, np.uint64(order[i + _AHEAD2]) * width)
                if i + _AHEAD < top:
                    prefetch(entries, entry_start[np.uint64(order[i + _AHEAD])])
            row = i if in_order else np.uint64(order[i])
            s = np.uint64(entry_start[row])
            for e in range(s + np.uint64(offsets[row, b]), s + np.uint64(offsets[row, b + 1])):
                add_row(flat, np.uint64(entries[e]) * _L, gh, i << _1)


@numba.njit
def gathered(flat, entry_start, entries, row_starts, order, gh, n, buffer, bits):
    """Chunks of ``CHUNK`` rows: their entries copied into ``buffer`` (``COPY`` a row by a loop of fixed
    length, the rest by a second), their first entries' bits into ``bits``, then summed as one stream."""
    top = np.uint64(n)
    for c0 in range(np.uint64(0), top, np.uint64(CHUNK)):
        c1 = min(top, c0 + np.uint64(CHUNK))
        w = np.uint64(0)
        for i in range(c0, c1):
            if i + _AHEAD2 < top:
                prefetch(entry_start, np.uint64(order[i + _AHEAD2]))
            if i + _AHEAD < top:
                prefetch(entries, entry_start[np.uint64(order[i + _AHEAD])])
            row = np.uint64(order[i])
            s, t = np.uint64(entry_start[row]), np.uint64(entry_start[row + _1])
            for q in range(np.uint64(COPY)):
                buffer[w + q] = entries[s + q]
            for q in range(np.uint64(COPY), t - s):
                buffer[w + q] = entries[s + q]
            bits[w] = 1
            w += t - s
        position = c0 - _1
        for e in range(np.uint64(0), w):
            position += np.uint64(bits[e])
            bits[e] = 0
            add_row(flat, np.uint64(buffer[e]) * _L, gh, position << _1)


@intrinsic
def add_row_if(typingctx, dst, at, gh, j, keep):
    """``dst[at:at + 2] += gh[j:j + 2]`` if ``keep`` (an integer) is not 0, else ``+= (0, 0)``: a select, no
    branch. Exact either way: a slot that starts at +0.0 is never -0.0, and x + 0.0 is x."""
    signature = types.void(dst, at, gh, j, keep)

    def codegen(context, builder, sig, args):
        pair = ir.VectorType(ir.DoubleType(), 2)
        slot = builder.bitcast(builder.gep(context.make_array(sig.args[0])(context, builder, args[0]).data,
                                           [args[1]]), pair.as_pointer())
        row = builder.load(builder.bitcast(builder.gep(context.make_array(sig.args[2])(context, builder, args[2]).data,
                                                       [args[3]]), pair.as_pointer()), align=8)
        kept = builder.icmp_unsigned("!=", args[4], ir.Constant(args[4].type, 0))
        row = builder.select(kept, row, ir.Constant(pair, None))
        builder.store(builder.fadd(builder.load(slot, align=8), row), slot, align=8)
        return context.get_dummy_value()

    return signature, codegen


def masked(k: int):
    """A kernel: each row's first ``k`` entries by a loop of fixed length, those past the row's end added
    as zeros (the entries padded at the end), the rest by a second loop (prefetched as row by row)."""
    width = np.uint64(k)

    @numba.njit
    def kernel(flat, entry_start, entries, in_order, order, gh, n):
        top = np.uint64(n)
        for i in range(np.uint64(0), top):
            if not in_order:
                if i + _AHEAD2 < top:
                    prefetch(entry_start, np.uint64(order[i + _AHEAD2]))
                if i + _AHEAD < top:
                    prefetch(entries, entry_start[np.uint64(order[i + _AHEAD])])
            row = i if in_order else np.uint64(order[i])
            s, t = np.uint64(entry_start[row]), np.uint64(entry_start[row + _1])
            for q in range(width):
                add_row_if(flat, np.uint64(entries[s + q]) * _L, gh, i << _1, np.uint64(q < t - s))
            for e in range(s + width, t):
                add_row(flat, np.uint64(entries[e]) * _L, gh, i << _1)

    return kernel


def block_offsets(skip, entry_start, entries, k: int) -> np.ndarray:
    """(n_rows, k + 1) uint8: where each row's entries of each of ``k`` blocks of sparse features begin."""
    sparse = np.flatnonzero(skip >= 0)
    limits = np.array([sparse[len(sparse) * b // k] * FEATURE_SLOTS for b in range(1, k)] + [2**16])
    block = np.searchsorted(limits, entries, side="right")
    n_rows = len(entry_start) - 1
    row = np.repeat(np.arange(n_rows), np.diff(entry_start.astype(np.int64)))
    counts = np.zeros((n_rows, k), dtype=np.int64)
    np.add.at(counts, (row, block), 1)
    offsets = np.zeros((n_rows, k + 1), dtype=np.uint8)
    offsets[:, 1:] = np.cumsum(counts, axis=1)
    return offsets


def kernels(binned: np.ndarray, repeat: int) -> dict:
    """ns per entry of each variant (module docstring, 1.)."""
    from twinrank.fast.trees._skipped_bins import _sum_entries, _sum_entries_in_order

    skip, _, entry_start, entries, row_starts = sparse_layout(binned)
    n_rows, d = binned.shape
    per_row = np.diff(entry_start.astype(np.int64))
    used = np.bincount(entries, minlength=d * FEATURE_SLOTS)
    hottest = np.sort(used)[::-1].cumsum() / used.sum()
    by_frequency = np.empty(len(used), dtype=np.int64)
    by_frequency[np.argsort(-used, kind="stable")] = np.arange(len(used))
    renumbered = by_frequency[entries].astype(np.uint16)
    offsets = {k: block_offsets(skip, entry_start, entries, k) for k in (4, 8)}
    padded = np.concatenate([entries, np.zeros(64, dtype=entries.dtype)])
    masks = {k: masked(k) for k in (16, 24)}
    rng = np.random.default_rng(2)
    g, h = rng.standard_normal(n_rows), rng.uniform(0.1, 1.0, n_rows)
    hist = np.zeros(d * FEATURE_SLOTS * 2)
    buffer, bits = np.zeros(CHUNK * 128, dtype=np.uint16), np.zeros(CHUNK * 128, dtype=np.uint8)
    rows = []
    for share in (1, 2, 4, 10):
        order = (np.arange(n_rows) if share == 1 else np.sort(rng.choice(n_rows, n_rows // share, replace=False)))
        order = order.astype(np.int32)
        m, in_order = len(order), share == 1
        gh = np.empty(2 * m)
        gh[0::2], gh[1::2] = g[order], h[order]
        n_entries = int(per_row[order].sum())

        def sums(run, flat=hist):
            flat[:] = 0.0
            run()
            return flat.copy()

        row_by_row = lambda flat=hist: _sum_entries(flat, entry_start, entries, in_order, order, gh, 0, m)  # noqa: E731
        variants = {"row by row": row_by_row}
        if in_order:
            variants["one stream"] = lambda: _sum_entries_in_order(hist, row_starts, entries, gh, 0, 0,
                                                                    entry_start[-1])
        else:
            variants["scattered rows gathered"] = lambda: gathered(hist, entry_start, entries, row_starts, order,
                                                                   gh, m, buffer, bits)
        for k, off in offsets.items():
            variants[f"{k} feature blocks"] = lambda off=off: feature_blocks(hist, entry_start, entries, off,
                                                                             in_order, order, gh, m)
        for k, kernel in masks.items():
            variants[f"{k} a row by a fixed loop, past the end zeros"] = (
                lambda kernel=kernel: kernel(hist, entry_start, padded, in_order, order, gh, m))
        expected = sums(row_by_row)
        for name, run in variants.items():
            assert np.array_equal(sums(run), expected), name
        renumbered_hist = np.zeros_like(hist)
        variants["slots by frequency"] = lambda: _sum_entries(renumbered_hist, entry_start, renumbered, in_order,
                                                              order, gh, 0, m)
        back = sums(variants["slots by frequency"], renumbered_hist).reshape(-1, 2)[by_frequency]
        assert np.array_equal(back, expected.reshape(-1, 2))
        if in_order:
            fixed = entries[:(len(entries) // 28 - 1) * 28]
            variants["fixed length, 28 a row"] = lambda: scatter_slots(hist, fixed, gh, 28, 1)
        row = {"node": "root" if share == 1 else f"1/{share} of the rows", "rows": m, "entries": n_entries}
        for name, run in variants.items():
            row[name] = 1e9 * best_seconds(run, repeat) / n_entries
        rows.append(row)
    return {"entries per row": [round(float(per_row.mean()), 2), round(float(per_row.std()), 2),
                                int(per_row.min()), int(per_row.max())],
            "used slots": int((used > 0).sum()), "slots": int((skip >= 0).sum() * FEATURE_SLOTS),
            "share of entries in the hottest 256 / 1024 / 3072 slots": [round(float(hottest[k - 1]), 3)
                                                                        for k in (256, 1024, 3072)],
            "row starts bytes per row": row_starts.nbytes / n_rows, "nodes": rows}


def root_seconds(data, repeat: int) -> float:
    """One thread's CPU seconds of the grower's root histogram (``_grower.build``, the gathered ``(g, h)`` of
    half the rows and one, as in a fit), best of ``repeat``."""
    kernels = Kernels(Twinrank(Settings()).bin(data))
    rows = np.arange(kernels.n_rows, dtype=np.int32)
    gh = np.empty((kernels.n_rows // 2 + 1, 2))
    totals = np.array([kernels.g.sum(), kernels.h.sum()])
    with threads(1):
        return best_seconds(lambda: _grower.build(
            None, kernels.hist, kernels.columns, kernels.by_row, kernels.g, kernels.h, (rows, 0, len(rows)), gh, 1,
            kernels.parent, False, kernels.spare, kernels.skipping, totals, True), repeat)


def fit(data, label: str, trees: int, repeat: int) -> dict:
    """CPU and wall ms per tree of one fit on 1 and 2 threads, and the root's histogram on one (module
    docstring, 2.)."""
    out = {"label": label, "machine": machine(), "root ms": 1e3 * root_seconds(data, repeat)}
    for n_threads in (1, 2):
        model = Twinrank(Settings(trees=trees, threads=n_threads))
        model.train(data, None, 2)  # compiled and warm
        clock = []

        def on_round():
            clock.append((time.process_time(), time.perf_counter()))

        load = os.getloadavg()
        clock.append((time.process_time(), time.perf_counter()))
        estimator = model.train(data, None, trees, on_round)
        cpu, wall = (np.diff([c[j] for c in clock])[1:] for j in (0, 1))
        out[f"{n_threads} threads"] = {"cpu ms per tree": 1e3 * float(np.median(cpu)),
                                       "wall ms per tree": 1e3 * float(np.median(wall)),
                                       "load": [round(x, 2) for x in load],
                                       "predictions": hashlib.sha256(estimator.predict(data.X).tobytes()).hexdigest()[:16]}
    out["peak RSS MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def report(result: dict) -> str:
    lines = ["# The sparse features' entries: what sets their time", ""]
    k = result.get("kernels")
    if k:
        lines += [f"{result['machine']['cpu']}, commit {result['machine']['commit']}, {result['machine']['date']}; "
                  f"load average {result['load before']} before, {result['load after']} after. {result['rows']:,} "
                  f"rows; one thread, calling thread's CPU time, best of {result['repeat']}; ns per entry.", "",
                  f"Entries per row: mean {k['entries per row'][0]}, standard deviation {k['entries per row'][1]}, "
                  f"{k['entries per row'][2]} to {k['entries per row'][3]}. Slots used: {k['used slots']:,} of "
                  f"{k['slots']:,}; the hottest 256 / 1024 / 3072 hold "
                  f"{' / '.join(str(x) for x in k['share of entries in the hottest 256 / 1024 / 3072 slots'])} of "
                  f"the entries. Row starts' bits: {k['row starts bytes per row']:.2f} bytes a row.", ""]
        names = list(dict.fromkeys(n for r in k["nodes"] for n in r if n not in ("node", "rows", "entries")))
        lines += ["| node | entries | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
        lines += [f"| {r['node']} | {r['entries']:,} | " + " | ".join(f"{r[n]:.3f}" if n in r else "" for n in names)
                  + " |" for r in k["nodes"]]
    if result.get("fits"):
        lines += ["", "## Fits in turn (CPU and wall ms per tree, median of rounds 2..n)", "",
                  "| run | commit | date | root, 1 thread CPU | 1 thread CPU | wall | load | 2 threads CPU | wall | load | "
                  "peak RSS MB | predictions (1 / 2 threads) |", "|---|---|---|---:|---:|---:|---|---:|---:|---|---:|---|"]
        for f in result["fits"]:
            one, two = f["1 threads"], f["2 threads"]
            lines.append(f"| {f['label']} | {f['machine']['commit']} | {f['machine']['date']} | {f.get('root ms', 0):.1f} | "
                         f"{one['cpu ms per tree']:.1f} | {one['wall ms per tree']:.1f} | {one['load'][0]} | "
                         f"{two['cpu ms per tree']:.1f} | {two['wall ms per tree']:.1f} | {two['load'][0]} | "
                         f"{f['peak RSS MB']:.0f} | {one['predictions']} / {two['predictions']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fit", metavar="LABEL", help="time a fit of this checkout instead (module docstring, 2.)")
    parser.add_argument("--trees", type=int, default=12)
    parser.add_argument("--json", help="the JSON file: kernels written, fits added")
    parser.add_argument("--markdown", help="write the tables as Markdown to this file")
    args = parser.parse_args(argv)
    result = {}
    if args.json and os.path.exists(args.json):
        with open(args.json) as f:
            result = json.load(f)
    load_before = os.getloadavg()
    data = generate(queries_for_rows(args.rows), seed=0)
    if args.fit:
        result.setdefault("fits", []).append(fit(data, args.fit, args.trees, args.repeat))
    else:
        binned = Twinrank(Settings()).bin(data)
        with threads(1):
            result.update({"machine": machine(), "load before": [round(x, 2) for x in load_before],
                           "repeat": args.repeat, "rows": len(data.y), "kernels": kernels(binned, args.repeat),
                           "load after": [round(x, 2) for x in os.getloadavg()]})
    save(result, report(result), args.json, args.markdown)


if __name__ == "__main__":
    main()

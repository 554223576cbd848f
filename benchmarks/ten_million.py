"""10M rows x 136 (Istella-sized) on one machine: does it train, its peak memory, ms per tree against rows.

    python benchmarks/ten_million.py                       # 1M, 3M, 10M rows; 20 trees; data in /tmp
    python benchmarks/ten_million.py --rows 1000000 3000000 --keep-data --json out.json --markdown out.md
    python benchmarks/ten_million.py --from-json benchmarks/ten_million.json --markdown benchmarks/ten_million.md

* **Data.** ``generate.py``'s MSLR-WEB10K-shaped rows (float32, 136 features, lognormal
  query sizes, median ~87 and mean ~120 documents), the largest size's queries written once,
  block by block, as ``.npy`` files under ``--data`` (``X`` 5.4 GB at 10M rows): the same
  rows ``generate(queries_for_rows(rows))`` makes, never whole in this process. A smaller
  size is the first ``queries_for_rows(size)`` queries of the same file.
* **Training.** Each framework trains ``--trees`` trees with ``speed.py``'s settings (31
  leaves, 255 bins, truncation 30, 2 threads; ``_frameworks``) in a process of its own that
  memory-maps the data (``numpy.load(mmap_mode="r")``): the operating system's page cache
  holds one copy for every process, and nothing is read twice. twinrank gets the mapped
  rows as a Dataset (its ``fit`` bins them); LightGBM a ``Dataset`` from the same float32
  array (it bins them into its own, ``free_raw_data=False`` so that nothing is read again).
  Binning is timed apart (``_measure.timed_training``), ms per tree is the median over
  rounds 2.., as ``scaling.py``.
* **Memory.** Three figures per process (MB): ``peak`` (``VmHWM`` since the data were
  mapped and checked, as ``speed.py`` reads it: the mapped rows the process touched count
  in it, 5.4 GB at 10M rows), ``start`` (the resident set then: the mapped rows) and
  ``own`` = peak - start, what the framework allocates: its binned data, its training
  buffers. This process also reads the worker's ``/proc/PID/status`` every
  ``POLL_SECONDS``: ``anon peak`` is the largest ``RssAnon`` seen (the framework's own
  memory, the mapped rows excluded; a peak shorter than the poll can be missed), and its
  time series once every ``SERIES_SECONDS`` (``anon_series``: seconds since the worker
  started, MB), to tell a temporary peak (binning) from the steady state of training.
* **One layout.** ``--frameworks twinrank_lean,...``: twinrank with ``low_memory=True`` (no row-order
  copy of the bins; the same model), its ratios to LightGBM beside the default's.
* **Safety.** Sizes run smallest first, one process at a time (never two frameworks at once);
  before each, the memory it should need (``NEEDS_GB_PER_MILLION`` per million rows, the
  mapped rows included) is checked against ``MemAvailable`` and a run that would not fit
  is skipped and said so. The data files are deleted at the end unless ``--keep-data``.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
from _frameworks import FRAMEWORKS, LightGBM, Settings, Twinrank
from _machine import machine
from _measure import memory_mb, reset_peak, timed_training, warm_up
from generate import N_FEATURES, fill_rows, queries_for_rows, query_blocks

from twinrank.reference.io.data import Dataset

HERE = Path(__file__).resolve().parent
POLL_SECONDS = 0.02
SERIES_SECONDS = 1.0  # RssAnon kept once a second: the time series of the worker's own memory
PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE"}  # every worker: twinrank.fast's own policy, for LightGBM too
NEEDS_GB_PER_MILLION = 1.3  # mapped rows 0.54 + the larger framework's own ~0.7, with room


class LightGBMColWise(LightGBM):
    """LightGBM with ``force_col_wise=true``: its column groups only, without the row-wise bins its default
    adds on this data ("row-wise multi-threading"): less memory, slower trees."""
    name = "lightgbm_col_wise"

    def params(self, data):
        return {**super().params(data), "force_col_wise": True}


class TwinrankLean(Twinrank):
    """twinrank with ``low_memory=True``: its bins in one layout, without the row-order copy (docs/trees.md),
    the same model."""
    name = "twinrank_lean"

    def __init__(self, settings: Settings):
        super().__init__(settings)
        self.LambdaMART = functools.partial(self.LambdaMART, low_memory=True)


WORKERS = {**FRAMEWORKS, LightGBMColWise.name: LightGBMColWise, TwinrankLean.name: TwinrankLean}


def write_data(directory: Path, n_queries: int, seed: int = 0) -> dict:
    """The first ``n_queries`` queries of ``generate(n_queries, seed=seed)`` as ``X.npy`` (float32,
    written block by block through a memory map), ``y.npy`` and ``query_offsets.npy``; reuses files of
    the same seed and at least as many queries, whose first ``n_queries`` (:func:`mapped`) are the
    rows a run of every size reads at this size (the first queries of the biggest set), so a smaller
    run does not overwrite a bigger one's data."""
    directory.mkdir(parents=True, exist_ok=True)
    meta_path = directory / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta["seed"] == seed and meta["queries"] >= n_queries:
            return {"generate_s": 0.0, "reused": True}
    meta_path.unlink(missing_ok=True)
    start = time.perf_counter()
    rngs, sizes = query_blocks(n_queries, seed)  # generate()'s blocks and sizes
    offsets = np.r_[0, np.cumsum(np.concatenate(sizes))]  # (n_queries + 1,)
    X = np.lib.format.open_memmap(directory / "X.npy", mode="w+", dtype=np.float32,
                                  shape=(int(offsets[-1]), N_FEATURES))  # (n_rows, 136)
    y = fill_rows(X, rngs, sizes)
    X.flush()
    del X
    np.save(directory / "y.npy", y)
    np.save(directory / "query_offsets.npy", offsets.astype(np.int64))
    meta_path.write_text(json.dumps({"queries": n_queries, "seed": seed}))
    return {"generate_s": time.perf_counter() - start, "reused": False}


def mapped(directory: Path, n_queries: int) -> Dataset:
    """The first ``n_queries`` queries of the files, ``X`` a read-only memory map (not read here)."""
    offsets = np.load(directory / "query_offsets.npy")[:n_queries + 1]
    n_rows = int(offsets[-1])
    X = np.load(directory / "X.npy", mmap_mode="r")[:n_rows]  # (n_rows, 136) a view of the map
    return Dataset(X, np.load(directory / "y.npy", mmap_mode="r")[:n_rows], offsets)


def worker(name: str, directory: Path, n_queries: int, settings: Settings) -> dict:
    """One framework's fit of ``n_queries`` queries, in this process: warm-up, data, bins, trees, memory."""
    framework = WORKERS[name](settings)
    result = {"framework": name, "warmup_s": warm_up(framework)}
    data = mapped(directory, n_queries)  # Dataset's checks read every value: the map is resident now
    result["rows"], result["queries"] = data.n_rows, data.n_queries
    result["peak_reset"] = reset_peak()
    result["rss_before_mb"], result["anon_before_mb"] = memory_mb()["VmRSS"], anon_mb()
    trained = timed_training(framework, data, settings.trees)
    trained.pop("model")
    result.update(trained)
    result["peak_rss_mb"] = memory_mb()["VmHWM"]
    result["own_mb"] = result["peak_rss_mb"] - result["rss_before_mb"]
    return result


def anon_mb() -> float:
    """This process's anonymous resident memory (``RssAnon``), MB: its own allocations, no mapped file."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["RssAnon"].split()[0]) / 1024


def run_worker(name: str, directory: Path, n_queries: int, settings: Settings) -> dict:
    """:func:`worker` in a fresh process, its ``RssAnon`` / ``RssFile`` polled from here."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, str(directory), str(n_queries),
               json.dumps(asdict(settings))]
    env = {**os.environ, "OMP_NUM_THREADS": str(settings.threads), **PASSIVE}
    peaks = {"RssAnon": 0.0, "RssFile": 0.0, "VmRSS": 0.0}
    series, start = [], time.perf_counter()  # (seconds, RssAnon MB) every SERIES_SECONDS
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as process:
        status = Path(f"/proc/{process.pid}/status")
        while process.poll() is None:
            try:
                fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
                for key, peak in peaks.items():
                    peaks[key] = max(peak, int(fields[key].split()[0]) / 1024)
                now = time.perf_counter() - start
                if not series or now - series[-1][0] >= SERIES_SECONDS:
                    series.append((round(now, 2), int(fields["RssAnon"].split()[0]) // 1024))
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(POLL_SECONDS)
        stdout, stderr = process.communicate()
    if process.returncode != 0:
        return {"framework": name, "error": (stderr.strip().splitlines() or ["failed"])[-1],
                "returncode": process.returncode}
    result = json.loads(stdout.strip().splitlines()[-1])
    result.update(anon_peak_mb=peaks["RssAnon"], anon_own_mb=peaks["RssAnon"] - result["anon_before_mb"],
                  file_peak_mb=peaks["RssFile"], polled_rss_peak_mb=peaks["VmRSS"], anon_series=series)
    return result


def available_gb() -> float:
    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return int(fields["MemAvailable"].split()[0]) / 2**20


def report(runs: list[dict], frameworks: list[str]) -> str:
    """One row per size: each framework's binning s, ms / tree, peak / own / anon MB; twinrank's ratios."""
    head = ["rows", "load"]
    for name in frameworks:
        head += [f"{name} binning s", f"{name} ms / tree", f"{name} CPU ms / tree", f"{name} peak MB",
                 f"{name} own MB", f"{name} anon own MB"]
    twins = [name for name in frameworks if name.startswith("twinrank")]  # each against LightGBM
    for twin in twins:
        label = "" if twin == "twinrank" else f"{twin} "
        head += [label + ratio for ratio in ("ms / tree ratio", "CPU ratio", "peak ratio", "own ratio", "anon ratio")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for row in runs:
        cells = [f"{row['rows']:,}", f"{row['load'][0]:.1f}"]
        for name in frameworks:
            r = row.get(name, {})
            if "error" in r or not r:
                cells += [r.get("error", "not run")[:60]] + ["-"] * 5
                continue
            cpu = r.get("cpu_ms_per_tree_median")
            cells += [f"{r['bin_s']:.1f}", f"{r['ms_per_tree_median']:.0f}", "-" if cpu is None else f"{cpu:.0f}",
                      f"{r['peak_rss_mb']:,.0f}", f"{r['own_mb']:,.0f}", f"{r['anon_own_mb']:,.0f}"]
        b = row.get("lightgbm", {})
        for twin in twins:
            a = row.get(twin, {})
            for key in ("ms_per_tree_median", "cpu_ms_per_tree_median", "peak_rss_mb", "own_mb", "anon_own_mb"):
                cells.append(f"{a[key] / b[key]:.2f}" if key in a and key in b else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section(out: dict, frameworks: list[str]) -> str:
    """The body of ``benchmarks/RESULTS.md``'s section "10M rows" (``_report.TEN_MILLION``, also included by
    docs/benchmarks.md): the run, the table, notes."""
    m, s = out["machine"], out["settings"]
    return "\n".join([
        f"`{out['command']}`: {m['date']}, twinrank commit {m.get('commit', 'unknown')}, {m['usable_cores']} cores, "
        f"{m['memory_gb']} GB. The first rows of one generated set (136 features, float32, memory-mapped by "
        f"every worker), {s['trees']} trees of {s['leaves']} leaves, {s['bins']} bins, truncation {s['truncation']}, "
        f"{s['threads']} threads, `OMP_WAIT_POLICY=PASSIVE` for every framework, one framework at a time; load "
        "is the 1-minute load average when the size started.", "",
        report(out["runs"], frameworks), "",
        "- peak: `VmHWM` from after the data were mapped and checked, through binning and training (the mapped "
        "rows count in it); own: peak minus the resident set then (the mapped rows, the interpreter, the "
        "libraries), what the framework allocates; anon own: the largest `RssAnon` polled every "
        f"{1e3 * POLL_SECONDS:.0f} ms minus `RssAnon` at that start (no mapped file in it; the JSON keeps it once a "
        "second, `anon_series`). CPU ms / tree: the worker's CPU time (both threads) per round, median of rounds 2.., "
        "the fairer clock under load. Ratios: twinrank / LightGBM.",
        "- Binning: twinrank `bin_thresholds` + `apply_bins` on all rows (its `fit` bins again in round 1), "
        "LightGBM `Dataset.construct()` (edges from 200,000 sampled rows); ms / tree: median of rounds 2.."
        f"{s['trees']}."])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        name, directory, n_queries, settings = argv[1:5]
        print(json.dumps(worker(name, Path(directory), int(n_queries), Settings(**json.loads(settings)))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--truncation", type=int, default=30)
    parser.add_argument("--frameworks", default="twinrank,lightgbm",
                        help=f"of {', '.join(WORKERS)}; ratios are twinrank / lightgbm")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs per cell, in rotation")
    parser.add_argument("--data", default="/tmp/twinrank-ten-million", help="where the .npy files go")
    parser.add_argument("--keep-data", action="store_true", help="keep the data files for another run")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--markdown", help="write the RESULTS.md section here (benchmarks/ten_million.md)")
    parser.add_argument("--from-json", help="render --markdown from this JSON instead of running")
    args = parser.parse_args(argv)
    if args.from_json:
        out = json.loads(Path(args.from_json).read_text())
        names = [name for name in WORKERS if any(name in row for row in out["runs"])]
        Path(args.markdown).write_text(section(out, names) + "\n")
        return
    frameworks, directory = args.frameworks.split(","), Path(args.data)
    settings = Settings(trees=args.trees, threads=args.threads, truncation=args.truncation)
    out = {"machine": machine(), "settings": asdict(settings), "command": " ".join(sys.argv), "runs": []}
    out["data"] = write_data(directory, queries_for_rows(max(args.rows)))
    print(f"data: {out['data']}", flush=True)
    try:
        for size in sorted(args.rows):
            n_queries = queries_for_rows(size)
            row = {"size": size, "load": list(os.getloadavg())}
            for _ in range(args.repeat):
                for name in frameworks:
                    need, free = NEEDS_GB_PER_MILLION * size / 1e6, available_gb()
                    if need > free:
                        result = {"framework": name, "error": f"skipped: needs ~{need:.0f} GB, {free:.1f} GB free"}
                    else:
                        result = run_worker(name, directory, n_queries, settings)
                    print(f"  {size:>11,}  {name:<9} {json.dumps(result)}", flush=True)
                    best = row.get(name)
                    if "error" not in result and (best is None or "error" in best
                                                  or result["ms_per_tree_median"] < best["ms_per_tree_median"]):
                        result["runs"] = [result.get("ms_per_tree_median")] + (best or {}).get("runs", [])
                        row[name] = result
                    elif best is None:
                        row[name] = result
                    row["rows"] = result.get("rows", row.get("rows", size))
            row["load_after"] = list(os.getloadavg())
            out["runs"].append(row)
    finally:
        if not args.keep_data:
            shutil.rmtree(directory, ignore_errors=True)
    out["load_average_after"] = os.getloadavg()
    text = report(out["runs"], frameworks)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(section(out, frameworks) + "\n")


if __name__ == "__main__":
    main()

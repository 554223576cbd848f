"""How the cost grows: ms per tree and peak memory against rows, features and threads; the lambdas' cost.

    python benchmarks/scaling.py [--rows 100000 300000 1000000 3000000] [--threads 1 2]
        [--features 34 68 136 --feature-rows 300000] [--trees 10] [--json FILE] [--markdown FILE]

* **Rows.** The first ``queries_for_rows(r)`` queries of one generated training set,
  for each ``r`` (up to MSLR-WEB30K's 3M rows); every framework trains ``--trees`` trees in a
  process of its own (``_measure.py``, mode ``train``), median ms per tree over rounds 2..,
  the best of ``--repeat`` runs, and the process's peak resident memory (``VmHWM``: the
  data as loaded, the framework's binned copy and its training buffers; every framework
  loads the same float32 arrays first). Each thread count of ``--threads`` is a row set of its own.
* **Features.** At ``--feature-rows`` rows, the first ``d`` of the 136 columns for each ``d``
  of ``--features`` (2 threads).
* **Lambdas.** ``twinrank.fast.losses.objectives.lambdarank`` (NDCG, no cutoff) on
  ``--lambda-rows`` rows cut into queries of ``n`` documents each, with all pairs
  (truncation None, O(n^2) per query) and with truncation 20 (O(20 n)); scores are
  random normal (no ties), the median of ``REPEATS`` calls after one warm-up call.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _frameworks import FRAMEWORKS, Settings
from _machine import machine
from _measure import save, settings_json
from generate import generate, queries_for_rows

HERE = Path(__file__).resolve().parent
REPEATS = 5
DOCS_PER_QUERY = (10, 30, 100, 300, 1000)


def run_worker(name, directory, mode, settings: Settings, env=None, **extra) -> dict:
    """``_measure.py`` in a fresh process; its JSON result, or ``{"error": ...}``."""
    done = subprocess.run([sys.executable, str(HERE / "_measure.py"), name, str(directory), mode,
                           settings_json(settings, **extra)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"framework": name, "error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def rows_scaling(train, sizes, settings: Settings, frameworks, env=None, repeat=1, features=None) -> list[dict]:
    """Median ms per tree and peak MB of every framework on the first ``queries_for_rows(size)`` queries of
    ``train`` (its first ``features`` columns, if given); the best of ``repeat`` runs, frameworks in rotation."""
    results = []
    with tempfile.TemporaryDirectory() as directory:
        for size in sizes:
            part = train.take_queries(np.arange(min(queries_for_rows(size), train.n_queries)))
            if features is not None:
                part = dataclasses.replace(part, X=np.ascontiguousarray(part.X[:, :features]))
            save(part, directory, "train")
            row = {"rows": part.n_rows, "features": part.n_features, "threads": settings.threads,
                   **{name: float("inf") for name in frameworks}, **{f"{name}_mb": np.nan for name in frameworks}}
            for _ in range(repeat):
                for name in frameworks:
                    result = run_worker(name, directory, "train", settings, env=env)
                    ms = result.get("ms_per_tree_median", np.nan)
                    row[name] = min(row[name], ms)
                    row[f"{name}_mb"] = np.nanmin([row[f"{name}_mb"], result.get("peak_rss_mb", np.nan)])
                    print(f"  {part.n_rows:>9,} rows x {part.n_features:>3}  {settings.threads} threads  {name:<9} "
                          f"{ms:8.1f} ms/tree  {result.get('peak_rss_mb', np.nan):8.0f} MB peak", flush=True)
            results.append(row)
    return results


def lambda_cost(total_rows=240_000, docs_per_query=DOCS_PER_QUERY, truncations=(None, 20), threads=2) -> list[dict]:
    """Milliseconds of one ``lambdarank`` call on ``total_rows`` rows, per query size and truncation."""
    from twinrank.fast.losses import objectives
    from twinrank.fast.runtime._threads import threads as numba_threads

    rng = np.random.default_rng(0)
    results = []
    for n in docs_per_query:
        data = generate(max(1, total_rows // n), docs_per_query=n)
        scores = rng.standard_normal(data.n_rows)  # (n_rows,)
        for truncation in truncations:
            with numba_threads(threads):
                seconds = _median_seconds(objectives.lambdarank, data.y, scores, data.query_offsets,
                                          metric="ndcg", truncation=truncation)
            top = n - 1 if truncation is None else min(n - 1, truncation)
            pairs = data.n_queries * sum(n - 1 - a for a in range(top))
            results.append({"docs_per_query": n, "truncation": truncation, "rows": data.n_rows,
                            "ms": 1e3 * seconds, "ns_per_doc": 1e9 * seconds / data.n_rows,
                            "ns_per_pair": 1e9 * seconds / max(pairs, 1)})
            print(f"  {n:>5} docs/query  truncation {truncation!s:>4}  {1e3 * seconds:9.1f} ms", flush=True)
    return results


def _median_seconds(function, *args, **kwargs) -> float:
    function(*args, **kwargs)  # warm-up: compilation or cache load
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def report(rows: list[dict], lambdas: list[dict], frameworks) -> str:
    """The measurements as Markdown tables."""
    lines = []
    if rows:
        lines += ["| rows | features | threads | " + " | ".join(f"{name} ms / tree" for name in frameworks)
                  + " | twinrank / LightGBM | " + " | ".join(f"{name} peak MB" for name in frameworks)
                  + " | memory twinrank / LightGBM |",
                  "|---:|---:|---:|" + "---:|" * (2 * len(frameworks) + 2)]
        for row in rows:  # rows of older runs have no features, threads or memory: shown as "-"
            ratio = row.get("twinrank", np.nan) / row.get("lightgbm", np.nan)
            memory = row.get("twinrank_mb", np.nan) / row.get("lightgbm_mb", np.nan)
            lines.append(f"| {row['rows']:,} | {row.get('features', '-')} | {row.get('threads', '-')} | "
                         + " | ".join(f"{row[name]:.1f}" for name in frameworks) + f" | {ratio:.2f} | "
                         + " | ".join(f"{row.get(name + '_mb', np.nan):,.0f}" for name in frameworks)
                         + f" | {memory:.2f} |")
    if lambdas:
        lines += [""] * bool(lines) + ["| documents per query | rows | all pairs: ms | ns / doc | truncation 20: ms | ns / doc |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for n in sorted({r["docs_per_query"] for r in lambdas}):
            full, cut = (next(r for r in lambdas if r["docs_per_query"] == n and r["truncation"] == t)
                         for t in (None, 20))
            lines.append(f"| {n} | {full['rows']:,} | {full['ms']:.1f} | {full['ns_per_doc']:.0f} | "
                         f"{cut['ms']:.1f} | {cut['ns_per_doc']:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--features", type=int, nargs="*", default=[], help="feature counts to sweep")
    parser.add_argument("--feature-rows", type=int, default=300_000, help="rows of the feature sweep")
    parser.add_argument("--truncation", type=lambda v: None if v == "none" else int(v), default=30)
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--lambda-rows", type=int, default=240_000)
    parser.add_argument("--no-lambdas", action="store_true", help="skip the lambdas' cost")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs per cell")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--markdown", help="write the tables here")
    args = parser.parse_args(argv)
    frameworks = args.frameworks.split(",")
    train = generate(queries_for_rows(max(args.rows + [args.feature_rows] * bool(args.features))))
    load = [os.getloadavg()]
    rows = []
    for threads in args.threads:
        settings = Settings(trees=args.trees, threads=threads, truncation=args.truncation)
        rows += rows_scaling(train, args.rows, settings, frameworks, repeat=args.repeat)
    settings = Settings(trees=args.trees, threads=max(args.threads), truncation=args.truncation)
    for d in args.features:
        rows += rows_scaling(train, [args.feature_rows], settings, frameworks, repeat=args.repeat, features=d)
    lambdas = [] if args.no_lambdas else lambda_cost(args.lambda_rows, threads=max(args.threads))
    load.append(os.getloadavg())
    text = report(rows, lambdas, frameworks)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "trees": args.trees, "load_before": load[0],
                                               "load_after": load[1], "rows": rows, "lambdas": lambdas},
                                              indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Speed and quality of twinrank.fast LambdaMART against LightGBM and XGBoost, same settings.

    python benchmarks/speed.py --markdown benchmarks/RESULTS.md          # the headline run
    python benchmarks/speed.py --rows 200000 --trees 50                  # a quicker look
    python benchmarks/speed.py --scaling --markdown benchmarks/RESULTS.md

Trains each framework on MSLR-WEB10K-shaped generated data (``generate.py``; test
queries held out, from another seed) with the same trees, leaves, bins, learning
rate, minimum leaf size, truncation and threads (``_frameworks.PARAMETER_MAP``),
each in a process of its own (``_measure.py``), and reports side by side: binning
time, ms per tree, scoring throughput with a 100-tree and a 1000-tree model, peak
memory, test NDCG@10, each also as a ratio to LightGBM's. Warm-up (numba's
compilation, or loading its cache) is excluded from every timing and reported
apart. Then, unless ``--no-breakdown``, where fast LambdaMART's time goes
(``breakdown.py``); with ``--scaling``, ms per tree against rows and the lambdas'
cost against query size (``scaling.py``). The machine is shared and noisy:
compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import breakdown
import scaling
from _frameworks import FRAMEWORKS, PARAMETER_MAP, Settings
from _machine import machine
from _measure import save
from generate import queries_for_rows, train_test

HERE = Path(__file__).resolve().parent
HIGHER_IS_BETTER = ("docs_per_s", "docs_per_s_big", "ndcg@10")
COLUMNS = (  # (result key, header, format, higher is better)
    ("warmup_s", "warm-up (s)", "{:.1f}", False),
    ("bin_s", "binning (s)", "{:.2f}", False),
    ("ms_per_tree_median", "ms / tree", "{:.0f}", False),
    ("docs_per_s", "scoring, {trees} trees (docs/s)", "{:,.0f}", True),
    ("docs_per_s_big", "scoring, {score_trees} trees (docs/s)", "{:,.0f}", True),
    ("peak_rss_mb", "peak RSS (MB)", "{:,.0f}", False),
    ("rss_increase_mb", "peak RSS - RSS at start (MB)", "{:,.0f}", False),
    ("ndcg@10", "test NDCG@10", "{:.4f}", True),
)


def run(args) -> dict:
    """Every measurement the arguments ask for, as one dict (also what ``--json`` writes)."""
    settings = Settings(trees=args.trees, leaves=args.leaves, bins=args.bins, learning_rate=args.learning_rate,
                        min_leaf=args.min_leaf, truncation=args.truncation, threads=args.threads, seed=args.seed)
    frameworks = args.frameworks.split(",")
    env = _worker_env(args)
    out = {"machine": machine(), "settings": dataclasses.asdict(settings), "command": " ".join(sys.argv),
           "repeat": args.repeat,
           "env": {k: env[k] for k in sorted(env) if k.startswith(("OMP_", "NUMBA_"))}}
    n_queries = args.queries or queries_for_rows(args.rows)
    train, test = train_test(n_queries, args.test_queries, seed=args.seed)
    out["data"] = {"train_rows": train.n_rows, "train_queries": train.n_queries, "features": train.n_features,
                   "test_rows": test.n_rows, "test_queries": test.n_queries,
                   "random_ndcg@10": _ndcg(test, np.random.default_rng(args.seed).random(test.n_rows))}
    print(f"data: {train.n_rows:,} training rows ({train.n_queries:,} queries), {test.n_rows:,} test rows",
          flush=True)
    jobs = [(name, name, env) for name in frameworks]
    if not args.no_passive_peers:
        jobs += [(f"{name}, passive wait", name, {**env, "OMP_WAIT_POLICY": "PASSIVE"})
                 for name in frameworks if name != "twinrank"]
    with tempfile.TemporaryDirectory() as directory:
        save(train, directory, "train")
        save(test, directory, "test")
        runs = {label: [] for label, _, _ in jobs}
        for repeat in range(args.repeat):
            for label, name, job_env in jobs:  # in rotation, so a busy spell hits every framework
                print(f"{label} (run {repeat + 1} of {args.repeat}) ...", flush=True)
                result = scaling.run_worker(name, directory, "full", settings, env=job_env,
                                            score_trees=args.score_trees, score_queries=args.score_queries)
                _finish(result, directory, name, test)
                runs[label].append(result)
        out["runs"] = runs
        out["results"] = {label: _best(results) for label, results in runs.items()}
        if "twinrank" in frameworks and not args.no_cold_compile:
            with tempfile.TemporaryDirectory() as cache:
                cold = scaling.run_worker("twinrank", directory, "warmup", settings,
                                          env={**env, "NUMBA_CACHE_DIR": cache})
            out["results"]["twinrank"]["cold_warmup_s"] = cold.get("warmup_s", float("nan"))
        if "twinrank" in frameworks and not args.no_breakdown:
            print("breakdown ...", flush=True)
            out["breakdown"] = _breakdown(directory, args, env)
    if args.scaling:
        print("scaling ...", flush=True)
        scaling_env = env if args.no_passive_peers else {**env, "OMP_WAIT_POLICY": "PASSIVE"}
        out["scaling_policy"] = scaling_env.get("OMP_WAIT_POLICY", "library defaults")
        out["scaling_rows"] = scaling.rows_scaling(train, args.scaling_rows,
                                                   dataclasses.replace(settings, trees=args.scaling_trees),
                                                   frameworks, env=scaling_env)
        out["lambda_cost"] = scaling.lambda_cost(threads=args.threads)
    out["load_average_after"] = os.getloadavg()
    return out


def _best(results: list[dict]) -> dict:
    """The best of repeated runs, field by field: the fastest time, the highest throughput, the least memory."""
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[0]
    best = dict(ok[0])
    for key, value in best.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values = [r[key] for r in ok]
            best[key] = max(values) if key in HIGHER_IS_BETTER else min(values)
    return best


def _finish(result, directory, name, test) -> None:
    """Add the memory increase and the test NDCG@10 of the worker's saved scores."""
    if "error" not in result:
        result["rss_increase_mb"] = result["peak_rss_mb"] - result["rss_before_mb"]
        result["ndcg@10"] = _ndcg(test, np.load(Path(directory) / f"{name}_scores.npy"))
    print(f"  {json.dumps(result)}", flush=True)


def _worker_env(args) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    env.update(pair.split("=", 1) for pair in args.env)
    return env


def _ndcg(data, scores) -> float:
    from twinrank.fast.metrics import evaluate

    return evaluate(["ndcg@10"], data.y, scores, data.query_offsets, convention="lightgbm")["ndcg@10"]


def _breakdown(directory, args, env) -> dict:
    command = [sys.executable, str(HERE / "breakdown.py"), "--data", str(directory), "--json",
               "--trees", str(args.breakdown_trees), "--leaves", str(args.leaves), "--threads", str(args.threads),
               "--truncation", str(args.truncation).lower(), "--seed", str(args.seed)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(out: dict) -> str:
    """The whole results page (``benchmarks/RESULTS.md``)."""
    m, s, d = out["machine"], out["settings"], out["data"]
    lines = ["# Benchmark results", "",
             f"Regenerate with `{_command(out)}` (from the repository root). Shared, noisy machine: "
             "**compare the ratios, not the absolute times.**", "",
             "## Machine", "",
             f"{m['cpu']}, {m['usable_cores']} usable cores ({m['logical_cores']} logical), {m['memory_gb']} GB; "
             f"Linux {m['kernel']}; Python {m['python']}; numpy {m['numpy']}, numba {m['numba']}, "
             f"lightgbm {m['lightgbm']}, xgboost {m['xgboost']}; {m['date']}. Load average (1, 5, 15 min) "
             f"{_load(m['load_average'])} before, {_load(out['load_average_after'])} after"
             + (f"; worker environment {out['env']}" if out["env"] else "") + ".", "",
             "## Setup", "",
             f"Training: {d['train_rows']:,} rows, {d['train_queries']:,} queries, {d['features']} features "
             f"(`benchmarks/generate.py`, seed {s['seed']}); test: {d['test_rows']:,} rows, "
             f"{d['test_queries']:,} other queries. {s['trees']} trees, {s['leaves']} leaves, {s['bins']} bins, "
             f"learning rate {s['learning_rate']}, minimum leaf size {s['min_leaf']}, truncation "
             f"{s['truncation'] or 'none (all pairs)'}, {s['threads']} threads.", "",
             "| setting | twinrank.fast `LambdaMART` | LightGBM `lambdarank` | XGBoost `rank:ndcg` |",
             "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in PARAMETER_MAP]
    lines += ["", "## Side by side", "", _main_table(out), "", _notes(out)]
    if "breakdown" in out:
        lines += ["", "## Where fast LambdaMART spends its time", ""]
        lines += [f"Breakdown failed: {out['breakdown']['error']}"] if "error" in out["breakdown"] else \
            [breakdown.report(out["breakdown"])]
    if "scaling_rows" in out:
        lines += ["", "## Scaling", "", f"Median ms per tree ({out['settings']['threads']} threads, "
                  f"OMP_WAIT_POLICY {out.get('scaling_policy', 'library defaults')} for every framework, "
                  f"the first rows of the training set, {_scaling_trees(out)} trees, one run each):", "",
                  scaling.report(out["scaling_rows"], [], list(out["results"])), "",
                  "Cost of one `twinrank.fast.objectives.lambdarank` call (NDCG, no cutoff) on about 240,000 "
                  "rows, against the documents per query, with all pairs and with truncation 20:", "",
                  scaling.report([], out["lambda_cost"], [])]
    return "\n".join(lines) + "\n"


def _main_table(out) -> str:
    results = out["results"]
    reference = results.get("lightgbm", {})
    trees = {"trees": out["settings"]["trees"], "score_trees": out.get("score_trees", 1000)}
    header = "| | " + " | ".join(title.format(**trees) for _, title, _, _ in COLUMNS) + " |"
    lines = [header, "|---|" + "---:|" * len(COLUMNS)]
    for name, result in results.items():
        if "error" in result:
            lines.append(f"| {name} | failed: {result['error']} |" + " |" * (len(COLUMNS) - 1))
            continue
        cells = []
        for key, _, fmt, _ in COLUMNS:
            value = result.get(key, float("nan"))
            cell = fmt.format(value)
            if name != "lightgbm" and reference.get(key) and key != "warmup_s":
                cell += f" ({value / reference[key]:.2f}x)"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _notes(out) -> str:
    r, d = out["results"], out["data"]
    twin = r.get("twinrank", {})
    bullets = [
        "Ratios in parentheses are value / LightGBM's value: below 1 is better for times and memory, "
        "above 1 for throughput and NDCG."
        + (f" Every framework ran {out['repeat']} times, in rotation; each cell is its best run "
           "(fastest, highest throughput, least memory)." if out.get("repeat", 1) > 1 else ""),
        f"Test NDCG@10 uses the LightGBM convention (a query without relevant documents scores 1); random "
        f"scores get {d['random_ndcg@10']:.4f}.",
        "ms / tree is the median wall time of boosting rounds 2..N (robust to the other jobs of a shared "
        "machine; the mean and round 1 are in the JSON: "
        + ", ".join(f"{name} mean {res['ms_per_tree']:.0f} ms" for name, res in r.items() if "ms_per_tree" in res)
        + "); "
        "twinrank's round includes its NDCG@10 on the training set, which its loop computes after every tree "
        "(LightGBM and XGBoost evaluate nothing here).",
        "Binning: twinrank `bin_thresholds` + `apply_bins` on all rows; LightGBM `Dataset.construct()` "
        "(edges from a 200,000-row sample); XGBoost `QuantileDMatrix`. twinrank's `fit` bins again inside "
        "its first round.",
    ]
    policies = ", ".join(f"{name}: {res['omp_wait_policy']}" for name, res in r.items() if "omp_wait_policy" in res)
    bullets.append("Threads wait in OpenMP between parallel regions. `import twinrank.fast` sets "
                   "`OMP_WAIT_POLICY=PASSIVE` (sleep, do not spin) unless it is set; LightGBM and XGBoost run "
                   "with the OpenMP default (spin a while, then sleep) and again with PASSIVE (the "
                   "\"passive wait\" rows, ratios still to the default LightGBM row). On a busy machine the "
                   f"wait policy can matter more than the kernels. Policies: {policies}"
                   + (f"; twinrank's numba threading layer: {twin['numba_threading_layer']}."
                      if "numba_threading_layer" in twin else "."))
    if twin.get("cold_warmup_s") is not None:
        bullets.append(f"Warm-up is a tiny fit + predict in the same process before any timing: for twinrank "
                       f"{twin.get('warmup_s', float('nan')):.1f} s with numba's on-disk cache, "
                       f"{twin['cold_warmup_s']:.1f} s with an empty cache (compiling every kernel).")
    big = [f"{name} {res['big_trees']} trees of {res['big_leaves_per_tree']:.1f} leaves"
           for name, res in r.items() if "big_trees" in res]
    if big:
        first = next(res for res in r.values() if "big_train_rows" in res)
        bullets.append(f"Scoring throughput: the held-out test set ({d['test_rows']:,} rows, float32) scored by "
                       "each framework's own predict on raw features (median of 3 runs; XGBoost "
                       "`inplace_predict`). The 1000-tree models are real models of each framework, trained "
                       f"on the first {first['big_train_rows']:,} training rows (a smaller set so that 1000 "
                       f"trees train quickly): {', '.join(big)}.")
    bullets.append("Peak RSS: the high-water mark of the framework's own process (`VmHWM`, reset after the "
                   "training data are loaded and the warm-up is done) through binning, training and scoring. "
                   "RSS at start is what was resident then: the training data, the interpreter and the "
                   "framework's libraries ("
                   + ", ".join(f"{name} {res['rss_before_mb']:,.0f} MB"
                               for name, res in r.items() if "rss_before_mb" in res) + ").")
    return "\n".join(f"- {b}" for b in bullets)


def _command(out) -> str:
    argv = out["command"].split()
    return "python benchmarks/speed.py " + " ".join(argv[1:])


def _load(values) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def _scaling_trees(out) -> int:
    return out.get("scaling_trees", out["settings"]["trees"])


def terminal(out) -> str:
    """A short plain-text summary for the console."""
    return _main_table(out) + "\n\n" + (breakdown.report(out["breakdown"]) if "loop_ms" in out.get("breakdown", {})
                                         else "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--rows", type=int, default=1_000_000, help="about this many training rows (default 1M)")
    size.add_argument("--queries", type=int, help="training queries (instead of --rows)")
    parser.add_argument("--test-queries", type=int, default=2000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--bins", type=int, default=255)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--min-leaf", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--truncation", type=lambda v: None if v == "none" else int(v), default=30,
                        help="T, or 'none' for all pairs (default 30, LightGBM's default)")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score-trees", type=int, default=1000)
    parser.add_argument("--score-queries", type=int, default=250)
    parser.add_argument("--breakdown-trees", type=int, default=30)
    parser.add_argument("--no-breakdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run every framework this many times, in rotation; report the best of each")
    parser.add_argument("--no-passive-peers", action="store_true",
                        help="skip re-running LightGBM and XGBoost with OMP_WAIT_POLICY=PASSIVE")
    parser.add_argument("--no-cold-compile", action="store_true", help="skip the empty-cache warm-up")
    parser.add_argument("--scaling", action="store_true", help="also ms/tree vs rows and lambda cost vs query size")
    parser.add_argument("--scaling-rows", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--scaling-trees", type=int, default=20)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="environment of the workers, e.g. OMP_WAIT_POLICY=passive (repeatable)")
    parser.add_argument("--markdown", metavar="PATH", help="write the results page here")
    parser.add_argument("--json", metavar="PATH", help="write every number here")
    args = parser.parse_args(argv)
    out = run(args)
    out.update(scaling_trees=args.scaling_trees, score_trees=args.score_trees)
    print(terminal(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(markdown(out))
        print(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()

"""Speed and quality of twinrank.fast LambdaMART against LightGBM and XGBoost, same settings.

    python benchmarks/speed.py --markdown benchmarks/RESULTS.md      # the headline run: 1M rows, 100 trees
    python benchmarks/speed.py --rows 200000 --trees 50              # a quicker look
    python benchmarks/speed.py --repeat 2 --scaling --markdown benchmarks/RESULTS.md --json benchmarks/RESULTS.json
    python benchmarks/speed.py --from-json benchmarks/RESULTS.json --markdown benchmarks/RESULTS.md  # re-render
    python benchmarks/speed.py --train train.txt --test test.txt     # your own LETOR / SVMlight data

Trains each framework on MSLR-WEB10K-shaped generated data (``generate.py``; test
queries held out, from another seed), or on the LETOR files ``--train``/``--test``, with the same trees, leaves, bins, learning
rate, minimum leaf size, truncation and threads (``_frameworks.PARAMETER_MAP``),
each in a process of its own (``_measure.py``), and reports side by side: binning
time, ms per tree, scoring throughput with a 100-tree and a 1000-tree model, peak
memory, test NDCG@10, each also as a ratio to LightGBM's; and twinrank and LightGBM
once more with nothing but the trees, threads and seed set (``--no-defaults`` skips
them): each with its own defaults (``_frameworks.DEFAULTS``), twinrank's ratios to
LightGBM's defaults row. Warm-up (numba's
compilation, or loading its cache) is excluded from every timing and reported
apart. LightGBM and XGBoost also run with ``OMP_WAIT_POLICY=PASSIVE``, the
policy ``twinrank.fast`` sets for itself. Then, unless ``--no-breakdown``, where
fast LambdaMART's time goes (``breakdown.py``: a stopwatch around every kernel its
``fit`` calls, the tree grower timed as a whole); with ``--scaling``, ms per tree
against rows and the lambdas' cost against query size (``scaling.py``). The
machine is shared and noisy: compare ratios, not absolute times; ``--repeat``
runs every framework several times in rotation and keeps the best of each.
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
import scaling
from _frameworks import FRAMEWORKS, Settings
from _machine import machine
from _measure import save
from _report import markdown, terminal, with_readme_block
from generate import queries_for_rows, train_test

from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import read_letor

HERE = Path(__file__).resolve().parent
HIGHER_IS_BETTER = ("docs_per_s", "docs_per_s_big", "ndcg@10")


def run(args) -> dict:
    """Every measurement the arguments ask for, as one dict (also what ``--json`` writes)."""
    settings = Settings(trees=args.trees, leaves=args.leaves, bins=args.bins, learning_rate=args.learning_rate,
                        min_leaf=args.min_leaf, truncation=args.truncation, threads=args.threads, seed=args.seed)
    frameworks = args.frameworks.split(",")
    env = _worker_env(args)
    out = {"machine": machine(), "settings": dataclasses.asdict(settings), "command": " ".join(sys.argv),
           "repeat": args.repeat,
           "env": {k: env[k] for k in sorted(env) if k.startswith(("OMP_", "NUMBA_"))}}
    train, test, source = _data(args)
    out["data"] = {"source": source, "train_rows": train.n_rows, "train_queries": train.n_queries,
                   "features": train.n_features,
                   "test_rows": test.n_rows, "test_queries": test.n_queries,
                   "random_ndcg@10": _ndcg(test, np.random.default_rng(args.seed).random(test.n_rows))}
    print(f"data: {train.n_rows:,} training rows ({train.n_queries:,} queries), {test.n_rows:,} test rows",
          flush=True)
    jobs = [(name, name, env, settings) for name in frameworks]
    if not args.no_passive_peers:
        jobs += [(f"{name}, passive wait", name, {**env, "OMP_WAIT_POLICY": "PASSIVE"}, settings)
                 for name in frameworks if name != "twinrank"]
    if not args.no_defaults:
        jobs += [(f"{name}, defaults", name, env, dataclasses.replace(settings, defaults=True))
                 for name in frameworks if name in ("twinrank", "lightgbm")]
    with tempfile.TemporaryDirectory() as directory:
        save(train, directory, "train")
        save(test, directory, "test")
        runs = {label: [] for label, _, _, _ in jobs}
        for repeat in range(args.repeat):
            for label, name, job_env, job_settings in jobs:  # in rotation, so a busy spell hits every framework
                print(f"{label} (run {repeat + 1} of {args.repeat}) ...", flush=True)
                result = scaling.run_worker(name, directory, "full", job_settings, env=job_env,
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
        out["scaling_repeat"] = args.repeat
        out["scaling_rows"] = scaling.rows_scaling(train, args.scaling_rows,
                                                   dataclasses.replace(settings, trees=args.scaling_trees),
                                                   frameworks, env=scaling_env, repeat=args.repeat)
        out["lambda_cost"] = scaling.lambda_cost(threads=args.threads)
    out["load_average_after"] = os.getloadavg()
    return out


def _data(args):
    """``(train, test, source)``: generated (``generate.py``), or read from ``--train``/``--test``."""
    if not args.train:
        n_queries = args.queries or queries_for_rows(args.rows)
        return (*train_test(n_queries, args.test_queries, seed=args.seed),
                f"`benchmarks/generate.py`, seed {args.seed}")
    print(f"reading {args.train} and {args.test} ...", flush=True)
    train, test = read_letor(args.train), read_letor(args.test)
    width = max(train.n_features, test.n_features)  # a feature absent from a file is 0.0 there
    train, test = (Dataset(np.pad(d.X, ((0, 0), (0, width - d.n_features))), d.y, d.query_offsets)
                   for d in (train, test))
    return train, test, f"`{args.train}`, test `{args.test}`"


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
    from twinrank.fast.evaluation.metrics import evaluate

    return evaluate(["ndcg@10"], data.y, scores, data.query_offsets, convention="lightgbm")["ndcg@10"]


def _breakdown(directory, args, env) -> dict:
    command = [sys.executable, str(HERE / "breakdown.py"), "--data", str(directory), "--json",
               "--trees", str(args.breakdown_trees), "--leaves", str(args.leaves), "--threads", str(args.threads),
               "--truncation", str(args.truncation).lower(), "--seed", str(args.seed)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--rows", type=int, default=1_000_000, help="about this many training rows (default 1M)")
    size.add_argument("--queries", type=int, help="training queries (instead of --rows)")
    size.add_argument("--train", metavar="PATH",
                      help="train on this LETOR / SVMlight file instead of generated data (needs --test)")
    parser.add_argument("--test", metavar="PATH", help="the held-out LETOR / SVMlight file for --train")
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
    parser.add_argument("--no-defaults", action="store_true",
                        help="skip the runs of twinrank and LightGBM with their own defaults")
    parser.add_argument("--no-cold-compile", action="store_true", help="skip the empty-cache warm-up")
    parser.add_argument("--scaling", action="store_true", help="also ms/tree vs rows and lambda cost vs query size")
    parser.add_argument("--scaling-rows", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--scaling-trees", type=int, default=20)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="environment of the workers, e.g. OMP_WAIT_POLICY=passive (repeatable)")
    parser.add_argument("--markdown", metavar="PATH", help="write the results page here")
    parser.add_argument("--readme", metavar="PATH",
                        help="replace the results block of this README with the side-by-side table")
    parser.add_argument("--from-json", metavar="PATH", help="measure nothing: render a saved --json file")
    parser.add_argument("--json", metavar="PATH", help="write every number here")
    args = parser.parse_args(argv)
    if bool(args.train) != bool(args.test):
        parser.error("--train and --test go together")
    if args.from_json:
        out = json.loads(Path(args.from_json).read_text())
    else:
        out = run(args)
        out["score_trees"] = args.score_trees
        if args.scaling:
            out.update(scaling_trees=args.scaling_trees, scaling_commit=out["machine"]["commit"])
        elif args.json and Path(args.json).exists():
            out.update(carried_scaling(json.loads(Path(args.json).read_text())))
    print(terminal(out))
    if args.json and not args.from_json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(markdown(out))
        print(f"wrote {args.markdown}")
    if args.readme:
        readme = Path(args.readme)
        readme.write_text(with_readme_block(readme.read_text(), out))
        print(f"updated {args.readme}")


SCALING_KEYS = ("scaling_trees", "scaling_policy", "scaling_repeat", "scaling_rows", "lambda_cost")


def carried_scaling(previous: dict) -> dict:
    """The scaling section of a previous ``--json`` file, for a run without ``--scaling``: its keys
    and ``scaling_commit`` (the commit that measured them), so the page and the docs' figure keep it."""
    if "scaling_rows" not in previous:
        return {}
    carried = {key: previous[key] for key in SCALING_KEYS if key in previous}
    carried["scaling_commit"] = previous.get("scaling_commit", previous["machine"].get("commit", "unknown"))
    return carried


if __name__ == "__main__":
    main()

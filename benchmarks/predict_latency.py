"""Scoring side by side: one ``predict`` call of a few rows, and throughput on many rows.

    python benchmarks/predict_latency.py --models /tmp/models --json benchmarks/predict_latency.json
    python benchmarks/predict_latency.py --models /tmp/models --no-latency --dtype float64  # a variant

twinrank.fast LambdaMART, LightGBM and XGBoost each train a 100-tree and a 1000-tree
model of 31 leaves (``_frameworks.Settings``: the settings of ``speed.py``) on
MSLR-shaped data (``generate.py``; the 1000-tree model on fewer queries, as ``speed.py``
does), in a process of their own, once. Then, in rotation (``--repeat`` rounds, one new
process per framework and round, so a busy spell of the shared machine hits every
framework), each framework loads its models and measures, through its own public
``predict`` (twinrank: the estimator's ``predict``; LightGBM: ``Booster.predict(X,
num_threads=...)``; XGBoost: ``Booster.inplace_predict``):

* **latency**: ``--calls`` calls of ``--rows`` rows each (every call other rows of the test
  set, so no branch predictor learns one row), with the 100-tree model: min, median and 90th
  percentile microseconds per call;
* **throughput**: the whole test set (``--test-rows`` rows), ``--predict-repeats`` times,
  with either model: documents per second, best and median.

Each best is also a ratio to LightGBM's best. The machine is shared (``--clock cpu`` with ``--threads 1``:
CPU time, which other jobs inflate far less): compare ratios, read the medians too. ``--features``, ``--dtype``,
``--threads`` and ``--test-rows`` vary the data shape (the variants of
``docs/benchmarks.md``: why one run's ratio is not another's).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
from _frameworks import FRAMEWORKS, Settings
from _machine import machine
from _measure import load, save
from generate import train_test

HERE = Path(__file__).resolve().parent
MODELS = {"twinrank": "json", "lightgbm": "txt", "xgboost": "json"}


def run(args) -> dict:
    """Every measurement the arguments ask for, as one dict (what ``--json`` writes)."""
    frameworks = args.frameworks.split(",")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    out = {"machine": machine(), "command": " ".join(sys.argv), "args": vars(args),
           "settings": asdict(_settings(args))}
    with tempfile.TemporaryDirectory() as scratch:
        directory = _model_directory(args, scratch)
        train, test = (_narrowed(data, args.features)
                       for data in train_test(args.queries, args.test_queries, seed=args.seed))
        save(train, directory, "train")
        save(test, directory, "test")
        out["data"] = {"train_rows": train.n_rows, "test_rows": min(args.test_rows, test.n_rows),
                       "big_train_rows": int(train.query_offsets[args.big_queries]),
                       "features": test.n_features, "dtype": args.dtype}
        for name in frameworks:
            if all(path.exists() for path in _model_paths(name, directory, args)):
                print(f"{name}: models kept in {directory}", flush=True)
                continue
            print(f"{name}: training ...", flush=True)
            out.setdefault("training_s", {})[name] = _worker(name, "train", directory, args, env)["train_s"]
        rounds = []
        for r in range(args.repeat):
            for name in frameworks:
                print(f"{name} (round {r + 1} of {args.repeat}) ...", flush=True)
                measured = _worker(name, "measure", directory, args, env)
                rounds.append({"round": r, "framework": name, **measured})
        out["rounds"] = rounds
    out["summary"] = summary(rounds, frameworks)
    out["load_average_after"] = os.getloadavg()
    return out


def _model_directory(args, scratch) -> str:
    """Where the models live: ``--models DIR/<the training arguments>`` (kept for the next run, whose
    variants then score the same models), else a temporary folder."""
    if not args.models:
        return scratch
    key = f"q{args.queries}-b{args.big_queries}-t{args.big_trees}-f{args.features}-s{args.seed}"
    directory = Path(args.models) / key
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory)


def _model_paths(name, directory, args) -> list[Path]:
    return [Path(directory) / f"{name}_{trees}.{MODELS[name]}" for trees in (100, args.big_trees)]


def _narrowed(data, features: int):
    """``data`` with its first ``features`` columns only (0: all of them)."""
    return type(data)(data.X[:, :features], data.y, data.query_offsets) if features else data


def _settings(args) -> Settings:
    return Settings(trees=100, leaves=31, threads=args.threads, seed=args.seed)


def _worker(name, mode, directory, args, env) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, mode, directory,
               json.dumps(vars(args))]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{name} {mode} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def worker(name, mode, directory, args) -> dict:
    """In a process of its own: train and save the models, or load them and measure."""
    framework = FRAMEWORKS[name](_settings(args))
    paths = _model_paths(name, directory, args)
    if mode == "train":
        train = load(directory, "train")
        small = train.take_queries(np.arange(args.big_queries))
        start = time.perf_counter()
        models = [framework.train(train, framework.bin(train), 100),
                  framework.train(small, framework.bin(small), args.big_trees)]
        seconds = time.perf_counter() - start
        for model, path in zip(models, paths):
            _save(name, model, path)
        return {"train_s": seconds}
    test = load(directory, "test")
    X = np.ascontiguousarray(test.X[:args.test_rows], dtype=args.dtype)  # rows as the variant asks
    models = [_load(name, path, args.threads) for path in paths]
    predict = _predictor(name, args.threads)
    predict(models[0], X[:64])  # warm-up: compilation or cache load, first-call set-up
    predict(models[1], X[:64])
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    result = {}
    for rows in args.rows:
        batches = [X[i:i + rows].copy() for i in range(0, len(X) - rows + 1, rows)][:args.calls]
        result[f"latency_{rows}"] = latency(predict, models[0], batches, args.calls, clock)
    for trees, model in zip((100, args.big_trees), models):
        result[f"throughput_{trees}"] = throughput(predict, model, X, args.predict_repeats, clock)
    return result


def latency(predict, model, batches, calls, clock=time.perf_counter) -> dict:
    """Microseconds per call over ``calls`` calls, cycling through ``batches``."""
    seconds = np.empty(calls)
    for k in range(calls):
        X = batches[k % len(batches)]
        start = clock()
        predict(model, X)
        seconds[k] = clock() - start
    us = 1e6 * seconds
    return {"min_us": float(us.min()), "median_us": float(np.median(us)),
            "p90_us": float(np.percentile(us, 90))}


def throughput(predict, model, X, repeats, clock=time.perf_counter) -> dict:
    """Documents per second scoring all of ``X``: the best and the median of ``repeats`` calls."""
    seconds = []
    for _ in range(repeats):
        start = clock()
        predict(model, X)
        seconds.append(clock() - start)
    return {"best_docs_per_s": len(X) / min(seconds), "median_docs_per_s": len(X) / float(np.median(seconds))}


def _predictor(name, threads):
    if name == "twinrank":
        return lambda model, X: model.predict(X)
    if name == "lightgbm":
        return lambda model, X: model.predict(X, num_threads=threads)
    return lambda model, X: model.inplace_predict(X)


def _save(name, model, path) -> None:
    if name == "twinrank":
        model.save(path)
    else:
        model.save_model(str(path))


def _load(name, path, threads):
    if name == "twinrank":
        from twinrank.fast.rankers.lambdamart import LambdaMART

        return LambdaMART.load(path).set_params(n_threads=threads)
    if name == "lightgbm":
        import lightgbm

        return lightgbm.Booster(model_file=str(path))
    import xgboost

    booster = xgboost.Booster(model_file=str(path))
    booster.set_param({"nthread": threads})
    return booster


def summary(rounds: list[dict], frameworks: list[str]) -> dict:
    """Per framework and measure: the best and the median over rounds, and the ratio of each to
    LightGBM's (LightGBM's time / theirs: above 1 is faster than LightGBM)."""
    out = {}
    for name in frameworks:
        mine = [r for r in rounds if r["framework"] == name]
        out[name] = {}
        for measure in (k for k in mine[0] if k.startswith(("latency_", "throughput_"))):
            fields = mine[0][measure]
            best = {f: (min if f.endswith("_us") else max)(r[measure][f] for r in mine) for f in fields}
            median = {f: float(np.median([r[measure][f] for r in mine])) for f in fields}
            out[name][measure] = {"best": best, "median_of_rounds": median}
    if "lightgbm" in out:
        for name in frameworks:
            for measure, values in out[name].items():
                base = out["lightgbm"][measure]["best"]
                values["speedup_vs_lightgbm"] = {
                    f: (base[f] / v if f.endswith("_us") else v / base[f]) for f, v in values["best"].items()}
    return out


def report(out: dict) -> str:
    """The summary as a Markdown table (best over rounds; speed-up over LightGBM in parentheses)."""
    s = out["summary"]
    measures = list(next(iter(s.values())))
    header = "| | " + " | ".join(_title(m, out) for m in measures) + " |"
    lines = [header, "|---|" + "---:|" * len(measures)]
    for name, values in s.items():
        cells = []
        for m in measures:
            key = "median_us" if m.startswith("latency_") else "best_docs_per_s"
            value, ratio = values[m]["best"][key], values[m].get("speedup_vs_lightgbm", {}).get(key)
            text = f"{value:,.0f}" if m.startswith("throughput_") else f"{value:,.1f}"
            cells.append(text + (f" ({ratio:.2f}x)" if ratio is not None and name != "lightgbm" else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(out: dict) -> str:
    """The run as a Markdown section: what was measured, on what, and the table."""
    m, d, a = out["machine"], out["data"], out["args"]
    lines = [f"`python benchmarks/{Path(__file__).name} {' '.join(out['command'].split()[1:])}`: "
             f"{m['cpu']}, {m['usable_cores']} usable cores, twinrank commit {m.get('commit', 'unknown')}, "
             f"lightgbm {m['lightgbm']}, xgboost {m['xgboost']}; {m['date']}; load average "
             f"{', '.join(f'{x:.1f}' for x in m['load_average'])} before, "
             f"{', '.join(f'{x:.1f}' for x in out['load_average_after'])} after. "
             f"Models of 31 leaves trained on {d['train_rows']:,} rows (100 trees) and {d['big_train_rows']:,} "
             f"rows ({a['big_trees']} trees) of `generate.py` data, {d['features']} features; scored on "
             f"{d['test_rows']:,} other rows, {d['dtype']}, {a['threads']} thread(s), "
             f"{'CPU time of the calling thread' if a.get('clock') == 'cpu' else 'wall time'}, each framework in a "
             f"process of its own, {a['repeat']} rounds in rotation. Latency: {a['calls']:,} calls, each on "
             f"other rows, the median call of the best round; throughput: the best of {a['predict_repeats']} "
             "calls per round, the best round. In parentheses: LightGBM's time / theirs (above 1 is "
             "faster than LightGBM).", "", report(out)]
    return "\n".join(lines) + "\n"


def _title(measure: str, out: dict) -> str:
    kind, n = measure.split("_")
    if kind == "latency":
        return f"one call of {n} row{'s' if n != '1' else ''}, 100 trees (median us)"
    return f"throughput, {n} trees (docs/s, {out['data']['test_rows']:,} rows)"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        name, mode, directory, options = argv[1:5]
        print(json.dumps(worker(name, mode, directory, argparse.Namespace(**json.loads(options)))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="training queries of the 100-tree model")
    parser.add_argument("--big-queries", type=int, default=60, help="training queries of the 1000-tree model")
    parser.add_argument("--big-trees", type=int, default=1000)
    parser.add_argument("--test-queries", type=int, default=500)
    parser.add_argument("--test-rows", type=int, default=50_000, help="rows scored for throughput")
    parser.add_argument("--features", type=int, default=0, help="keep the first K features (0: all 136)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: the calling thread's CPU time (with --threads 1 only: each tool then scores "
                             "on the calling thread), which other jobs on a shared machine inflate far less")
    parser.add_argument("--rows", type=int, nargs="*", default=[1, 20], help="rows per call for latency")
    parser.add_argument("--calls", type=int, default=1000, help="calls per latency measure")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--predict-repeats", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, frameworks in rotation")
    parser.add_argument("--frameworks", default="twinrank,lightgbm,xgboost")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", metavar="DIR", help="keep the trained models here and reuse them")
    parser.add_argument("--json", metavar="PATH", help="write every number here")
    parser.add_argument("--markdown", metavar="PATH", help="write the table and its setup here")
    parser.add_argument("--from-json", metavar="PATH", help="measure nothing: render a saved --json file")
    args = parser.parse_args(argv)
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu measures the calling thread: it needs --threads 1")
    if args.no_latency:
        args.rows = []
    out = json.loads(Path(args.from_json).read_text()) if args.from_json else run(args)
    print(report(out))
    if args.json and not args.from_json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {args.json}")
    if args.markdown:
        Path(args.markdown).write_text(markdown(out))
        print(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()

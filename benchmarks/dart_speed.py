"""DART and X-DART per iteration against LightGBM's and XGBoost's DART, side by side in one run.

MSLR-WEB10K-shaped data (``generate.py``; 136 features, ~120 documents a query, grades 0-4).
Every ranker grows ``--iterations`` trees of 31 leaves, learning rate 0.1, 255 bins, LambdaRank
pairs truncated at 30, no lambda normalisation (the settings of ``speed.py``), on 2 threads,
and drops trees at the same rate ``--drop-rate`` $r$:

- twinrank DART: ``drop="ratio"``, $k = \\lfloor r |E| \\rfloor$ (X-DART's ratio rule);
  X-DART: the same rule plus the pruning test on a validation set (one NDCG@10 evaluation
  of the candidate and one of the result per iteration);
- LightGBM ``boosting="dart"``: ``drop_rate=r``, ``skip_drop=0``, ``max_drop=-1``,
  ``uniform_drop=true``, ``xgboost_dart_mode=true`` (each tree dropped with probability $r$,
  so $k$ is binomial with mean $r|E|$; the same normalisation $\\eta/(k+\\eta)$);
- XGBoost ``booster="dart"``: ``rate_drop=r``, ``skip_drop=0``, ``sample_type="uniform"``,
  ``normalize_type="tree"``.

Time per iteration is the median over iterations 2..N of each iteration's wall time (the first
compiles / allocates and is reported apart); the plain gradient-boosted model of each framework
is timed the same way as the baseline. Ratios, not absolute times: the machine is shared.
XGBoost's DART predicts the whole ensemble again every iteration, so its cost grows with the
ensemble; it runs ``--xgboost-dart-iterations`` iterations only (a lower bound on its cost at N).

    python benchmarks/dart_speed.py --queries 2000 --iterations 100 --json benchmarks/dart_speed.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _frameworks import LightGBM, Settings, XGBoost  # noqa: E402
from _machine import machine  # noqa: E402
from generate import train_test  # noqa: E402

from twinrank.fast import LambdaMART, evaluate  # noqa: E402
from twinrank.fast.rankers.dart import DART, XDART  # noqa: E402


def per_iteration(times: list) -> dict:
    """Median wall time per iteration over iterations 2..N, and the first iteration apart, in ms."""
    t = np.diff(np.asarray(times)) * 1e3  # (N,) ms per iteration
    return {"ms_per_iteration": float(np.median(t[1:])), "first_ms": float(t[0]), "iterations": len(t)}


def timed_twinrank(make, train, valid) -> tuple:
    times = [time.perf_counter()]
    est = make().fit(train, eval_set=None if valid is None else [valid],
                     callback=lambda i, record: times.append(time.perf_counter()))
    return per_iteration(times), est.predict


def timed_booster(booster, update, n: int) -> dict:
    times = [time.perf_counter()]
    for i in range(n):
        update(booster, i)
        times.append(time.perf_counter())
    return per_iteration(times)


def lightgbm_runs(s: Settings, train, n: int, rate: float) -> dict:
    lgb = LightGBM(s)
    binned = lgb.bin(train)
    out = {}
    for name, extra in (("lightgbm gbdt", {}),
                        ("lightgbm dart", dict(boosting="dart", drop_rate=rate, skip_drop=0.0, max_drop=-1,
                                               uniform_drop=True, xgboost_dart_mode=True))):
        booster = lgb.lgb.Booster({**lgb.params(train), **extra}, binned)
        out[name] = (timed_booster(booster, lambda b, i: b.update(), n), lambda X, b=booster: b.predict(X))
    return out


def xgboost_runs(s: Settings, train, n: int, rate: float, n_dart: int) -> dict:
    xgb = XGBoost(s)
    binned = xgb.bin(train)
    out = {}
    for name, extra, rounds in (
            ("xgboost gbtree", {}, n),
            (f"xgboost dart ({n_dart} iterations)", dict(booster="dart", rate_drop=rate, skip_drop=0.0,
                                                         sample_type="uniform", normalize_type="tree"), n_dart)):
        booster = xgb.xgb.Booster({**xgb.params(train), **extra}, [binned])
        out[name] = (timed_booster(booster, lambda b, i: b.update(binned, i), rounds),
                     lambda X, b=booster: b.inplace_predict(X))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000, help="training queries (~120 rows each)")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--drop-rate", type=float, default=0.05)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--xgboost-dart-iterations", type=int, default=20,
                        help="XGBoost's DART recomputes every tree's prediction each iteration (its cost grows "
                             "with the ensemble): it runs only this many iterations, a lower bound on its cost")
    parser.add_argument("--json", help="write the numbers here")
    parser.add_argument("--markdown", help="write the table here (docs/dart.md includes it)")
    args = parser.parse_args(argv)
    train, test = train_test(args.queries, max(200, args.queries // 4), seed=0)
    valid = test.take_queries(np.arange(0, test.n_queries, 2))
    s = Settings(trees=args.iterations, threads=args.threads)
    n, rate = args.iterations, args.drop_rate
    common = dict(n_trees=n, learning_rate=s.learning_rate, max_leaves=s.leaves, min_samples_leaf=s.min_leaf,
                  max_bins=s.bins, truncation=s.truncation, normalize=False, target="ndcg", n_threads=s.threads)
    warm = LambdaMART(n_trees=2, max_leaves=4).fit(train.take_queries(np.arange(20)))  # compile, not timed
    del warm
    runs = {
        "twinrank lambdamart": timed_twinrank(lambda: LambdaMART(**common), train, None),
        "twinrank dart": timed_twinrank(lambda: DART(**common, drop="ratio", drop_rate=rate), train, None),
        "twinrank x-dart": timed_twinrank(lambda: XDART(**common, drop="ratio", drop_rate=rate,
                                                        max_iterations=n), train, valid),
        **lightgbm_runs(s, train, n, rate),
        **xgboost_runs(s, train, n, rate, min(n, args.xgboost_dart_iterations)),
    }
    rows = {}
    for name, (timing, predict) in runs.items():
        ndcg = evaluate("ndcg@10", test.y, np.asarray(predict(test.X), dtype=np.float64), test.query_offsets)
        rows[name] = {**timing, "test_ndcg@10": float(ndcg["ndcg@10"])}
    text = markdown(rows, train, n, rate, args.threads, os.getloadavg()[0])
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "rows": train.n_rows, "iterations": n, "drop_rate": rate,
                       "threads": args.threads, "load": os.getloadavg()[0], "results": rows}, f, indent=2)


def markdown(rows: dict, train, n: int, rate: float, threads: int, load: float) -> str:
    """The side-by-side table, ratios to LightGBM's DART."""
    lgb_dart = rows["lightgbm dart"]["ms_per_iteration"]
    lines = [f"`python benchmarks/dart_speed.py` ({train.n_rows:,} MSLR-shaped rows x {train.n_features} features, "
             f"{n} iterations of 31 leaves, drop rate {rate}, {threads} threads, one run, load {load:.1f}; "
             "`benchmarks/dart_speed.json`):", "",
             "| ranker | ms / iteration | vs LightGBM DART | first iteration (with binning), ms | test NDCG@10 |",
             "|---|---|---|---|---|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['ms_per_iteration']:.1f} | {row['ms_per_iteration'] / lgb_dart:.2f}x | "
                     f"{row['first_ms']:.0f} | {row['test_ndcg@10']:.4f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

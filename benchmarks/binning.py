r"""Binning: its time against LightGBM's, and what thresholds from a sample of the rows cost in NDCG@10.

Time (``--time``): twinrank.fast ``bin_thresholds`` + ``apply_bins`` (thresholds from every row,
and from the ``subsample_for_bin`` sample fit uses, 200,000 rows by default) and LightGBM's
``Dataset(X).construct()`` (its edges from a 200,000-row sample, ``bin_construct_sample_cnt``), in
one process, in rotation, best of ``--repeat``; the generated training set of ``benchmarks/generate.py``
(1M rows x 136 features by default), ``--threads`` threads.

Quality (``--quality``): test NDCG@10 (LightGBM convention) of fast LambdaMART with thresholds
from every row and from samples: on the generated set (the settings of ``benchmarks/speed.py``:
100 trees of 31 leaves, truncation 30, not normalised), and on MQ2008's five folds and the Yahoo!
sample's five folds (``benchmarks/defaults.py``), whose training sets are smaller than 200,000 rows,
so the default reads every row and samples of 1,000 and 3,000 rows show what a sample costs.

    python benchmarks/binning.py --time --quality --json benchmarks/binning.json
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from generate import queries_for_rows, train_test

SAMPLE = 200_000  # BoostParams.subsample_for_bin; LightGBM's bin_construct_sample_cnt


def binning_times(X, threads: int, repeat: int) -> dict:
    """Best wall and CPU seconds (user + sys of the process) of each way of binning ``X``, the ways
    taken in rotation: on a loaded machine the CPU seconds hold better than the wall."""
    import lightgbm
    import numba

    from twinrank.fast.trees import binning

    numba.set_num_threads(threads)
    binning.apply_bins(X[:1000], binning.bin_thresholds(X[:1000]))  # compiled or loaded before timing
    ways = {
        "twinrank, every row": lambda: binning.apply_bins(X, binning.bin_thresholds(X, 255)),
        "twinrank, 200,000-row sample": lambda: binning.apply_bins(X, binning.bin_thresholds(X, 255, SAMPLE, 0)),
        "lightgbm Dataset.construct()": lambda: lightgbm.Dataset(
            X, params={"max_bin": 255, "num_threads": threads, "verbose": -1}).construct(),
    }
    parts = {"thresholds, every row": lambda: binning.bin_thresholds(X, 255),
             "thresholds, 200,000-row sample": lambda: binning.bin_thresholds(X, 255, SAMPLE, 0)}
    thresholds = binning.bin_thresholds(X, 255, SAMPLE, 0)
    parts["apply_bins"] = lambda: binning.apply_bins(X, thresholds)
    best = {"wall": {}, "cpu": {}}
    for _ in range(repeat):
        for name, way in {**ways, **parts}.items():
            wall, cpu = time.perf_counter(), time.process_time()
            way()
            best["wall"][name] = min(best["wall"].get(name, np.inf), time.perf_counter() - wall)
            best["cpu"][name] = min(best["cpu"].get(name, np.inf), time.process_time() - cpu)
    return best


def _ndcg(data, scores) -> float:
    from twinrank.fast.evaluation.metrics import evaluate

    return float(evaluate(["ndcg@10"], data.y, scores, data.query_offsets, convention="lightgbm")["ndcg@10"])


def generated_quality(train, test, samples, threads: int) -> dict:
    """Test NDCG@10 of the benchmark's LambdaMART on ``train`` for each ``subsample_for_bin``."""
    from twinrank.fast.rankers.lambdamart import LambdaMART

    out = {}
    for sample in samples:
        est = LambdaMART(n_trees=100, learning_rate=0.1, max_leaves=31, min_samples_leaf=20, truncation=30,
                         normalize=False, target="ndcg", n_threads=threads, seed=0, subsample_for_bin=sample)
        out[str(sample)] = _ndcg(test, est.fit(train).predict(test))
        print(f"generated, subsample_for_bin={sample}: {out[str(sample)]:.4f}", flush=True)
    return out


def folds_quality(folds, samples, threads: int) -> dict:
    """Mean test NDCG@10 over ``folds`` (train, valid, test) of LambdaMART's defaults, 100 trees."""
    from twinrank.fast.rankers.lambdamart import LambdaMART

    folds = list(folds)
    out = {"train_rows": [int(f[0].n_rows) for f in folds]}
    for sample in samples:
        scores = [_ndcg(test, LambdaMART(n_threads=threads, seed=0, subsample_for_bin=sample).fit(train).predict(test))
                  for train, _, test in folds]
        out[str(sample)] = float(np.mean(scores))
        print(f"subsample_for_bin={sample}: {out[str(sample)]:.4f} ({len(folds)} folds)", flush=True)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="generated training rows (default 1M)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="rounds of the timing rotation (best of)")
    p.add_argument("--time", action="store_true", help="time the binning")
    p.add_argument("--quality", action="store_true", help="NDCG@10 with every row and with samples")
    p.add_argument("--yahoo", default="../shared/data/yahoo-sample", help="the Yahoo! sample's folder")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    out = {"load_average_before": os.getloadavg(), "threads": args.threads}
    train, test = train_test(queries_for_rows(args.rows), 2000, seed=0)
    out["rows"], out["features"] = train.n_rows, train.n_features
    if args.time:
        out["seconds"] = binning_times(train.X, args.threads, args.repeat)
        for name, wall in out["seconds"]["wall"].items():
            print(f"{name:35s} {wall:6.2f} s, CPU {out['seconds']['cpu'][name]:6.2f} s", flush=True)
    if args.quality:
        from defaults import yahoo_folds

        from twinrank.fast import load_mq2008

        out["ndcg@10"] = {
            "generated": generated_quality(train, test, [None, SAMPLE, 50_000], args.threads),
            "mq2008": folds_quality((load_mq2008(fold=k) for k in range(1, 6)), [None, 3000, 1000], args.threads),
            "yahoo": folds_quality(yahoo_folds(args.yahoo), [None, 3000, 1000], args.threads)}
    out["load_average_after"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

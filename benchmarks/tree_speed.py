"""Milliseconds per regression tree: twinrank's grower (both twins) against LightGBM, same data, same run.

One tree = 31 leaves, 255 bins, min 20 rows per leaf, on MSLR-shaped data
(``generate.py``) with squared-error gradients of the labels around their mean
(what LightGBM's first tree sees). LightGBM: ``lightgbm.train(objective="regression",
num_leaves=31, max_bin=255, min_data_in_leaf=20, learning_rate=0.1)`` for ``--rounds``
rounds on a constructed ``Dataset``; ms per tree = wall / rounds (``Dataset``
construction excluded, one warm-up ``train`` excluded). twinrank: ``grow_tree`` on
bins from ``apply_bins`` (binning and the first, compiling call excluded and
reported apart). Runs alternate (LightGBM, fast, ...) so load changes hit both;
the minimum and median over ``--repeats`` are reported, with the load average.

    python benchmarks/tree_speed.py --rows 100000 1000000 --threads 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import generate, queries_for_rows  # noqa: E402

from twinrank.fast.trees import (
    binning as fast_binning,  # noqa: E402
    tree as fast_tree,  # noqa: E402
)
from twinrank.reference.params import TreeParams  # noqa: E402
from twinrank.reference.trees import (
    binning as ref_binning,  # noqa: E402
    tree as ref_tree,  # noqa: E402
)

PARAMS = TreeParams(max_leaves=31, min_samples_leaf=20)


def seconds(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def bench(n_rows: int, args) -> dict:
    import lightgbm as lgb
    data = generate(queries_for_rows(n_rows), seed=0)
    X, y = data.X, data.y
    out = {"rows": len(y), "features": X.shape[1]}
    start = time.perf_counter()
    thresholds = fast_binning.bin_thresholds(X, 255)
    binned = fast_binning.apply_bins(X, thresholds)
    out["fast binning s"] = time.perf_counter() - start
    g, h_const = y.mean() - y, np.ones(len(y))
    h_varied = np.random.default_rng(0).uniform(0.1, 1.0, len(y))  # LambdaMART-like hessians
    out["fast first call s"] = seconds(fast_tree.grow_tree, binned, g, h_const, thresholds, PARAMS)
    fast_tree.grow_tree(binned, g, h_varied, thresholds, PARAMS)
    dataset = lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1})
    dataset.construct()
    lgb_params = dict(objective="regression", num_leaves=31, max_bin=255, min_data_in_leaf=20,
                      learning_rate=0.1, num_threads=args.threads, verbose=-1)
    lgb.train(lgb_params, dataset, num_boost_round=args.rounds)  # warm-up
    times = {"lightgbm": [], "fast": [], "fast, varied hessians": []}
    for _ in range(args.repeats):
        times["lightgbm"].append(seconds(lgb.train, lgb_params, dataset,
                                         num_boost_round=args.rounds) / args.rounds)
        times["fast"].append(seconds(fast_tree.grow_tree, binned, g, h_const, thresholds, PARAMS))
        times["fast, varied hessians"].append(
            seconds(fast_tree.grow_tree, binned, g, h_varied, thresholds, PARAMS))
    if n_rows <= args.reference_max_rows:
        ref_bins = ref_binning.apply_bins(X, thresholds)
        times["reference"] = [seconds(ref_tree.grow_tree, ref_bins, g, h_const, thresholds, PARAMS)
                              for _ in range(2)]
    for name, values in times.items():
        out[f"{name} ms/tree"] = (1000 * min(values), 1000 * float(np.median(values)))
    out["fast / lightgbm (min)"] = out["fast ms/tree"][0] / out["lightgbm ms/tree"][0]
    out["load average"] = os.getloadavg()[0]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference-max-rows", type=int, default=100_000)
    args = parser.parse_args(argv)
    numba.set_num_threads(args.threads)
    for n_rows in args.rows:
        for key, value in bench(n_rows, args).items():
            if isinstance(value, tuple):
                print(f"{key:32s} min {value[0]:9.1f}   median {value[1]:9.1f}")
            else:
                print(f"{key:32s} {value:.3g}")
        print()


if __name__ == "__main__":
    main()

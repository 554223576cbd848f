"""Do fast random forests use every core? Wall time of a forest against the sum of its per-tree times.

Grows the trees of ``twinrank.fast.RandomForest`` (defaults: unpruned trees,
bootstrap, 10% of the features per node) on MQ2008 Fold 1 (bundled) twice, with
the same seed:

1. one tree at a time on one thread, each tree timed on its own: the sum of the
   per-tree times is the work;
2. through ``fast.forest.grow_trees``, which grows ``trees_at_once()`` trees at
   once (one per numba thread): its wall time is what a user waits.

The ratio sum / wall is the speed-up from growing trees in parallel (at most the
thread count); the two forests are checked to be the same trees. Compare on an
idle machine: another job holding a core leaves nothing to parallelise onto.

    python benchmarks/forest_cores.py --trees 64 --threads 2
"""
from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from twinrank.fast.rankers import forest
from twinrank.fast.runtime._threads import threads
from twinrank.fast.trees import tree
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.params import ForestParams, TreeParams
from twinrank.reference.rankers.forest import tree_sample
from twinrank.reference.sampling import make_rng


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", type=int, default=64)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--repeat", type=int, default=2, help="best of this many runs of each")
    args = parser.parse_args(argv)

    train = load_mq2008(1)[0]
    params = ForestParams(n_trees=args.trees, seed=0,
                          tree=TreeParams(max_leaves=1024, min_samples_leaf=5, feature_fraction=0.1))
    thresholds = forest.binning.bin_thresholds(train.X, params.max_bins)
    binned = forest.binning.apply_bins(train.X, thresholds)
    gradients, hessians = -train.y, np.ones(train.n_rows)
    rng = make_rng(params.seed)
    samples = [tree_sample(rng, train, params) for _ in range(args.trees)]

    def one_at_a_time():
        times, trees = [], []
        with threads(1):
            for rows, mask in samples:
                start = time.perf_counter()
                trees.append(tree.grow_tree(binned, gradients, hessians, thresholds, params.tree,
                                            rows=rows, feature_mask=mask))
                times.append(time.perf_counter() - start)
        return sum(times), trees

    def at_once():
        with threads(args.threads):
            start, cpu = time.perf_counter(), time.process_time()
            trees = forest.grow_trees(binned, gradients, hessians, thresholds, params.tree, samples)
            return time.perf_counter() - start, time.process_time() - cpu, trees

    one_at_a_time()  # compile (or load the cache) and warm up
    with threads(args.threads):
        workers = forest.trees_at_once()
    serial, parallel = [], []
    for _ in range(args.repeat):
        serial.append(one_at_a_time())
        parallel.append(at_once())
    work, serial_trees = min(serial, key=lambda run: run[0])
    wall, cpu, parallel_trees = min(parallel, key=lambda run: run[0])
    same = all(np.array_equal(a.value, b.value) and np.array_equal(a.feature, b.feature)
               for a, b in zip(serial_trees, parallel_trees))
    leaves = np.mean([t.n_leaves for t in serial_trees])
    print(f"MQ2008 Fold 1 train: {train.n_rows} rows x {train.n_features} features; "
          f"{args.trees} trees of {leaves:.0f} leaves on average; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"sum of per-tree times, one tree at a time on 1 thread: {work:.2f} s")
    print(f"forest.grow_trees, {workers} tree(s) at once on {args.threads} thread(s): "
          f"wall {wall:.2f} s, CPU {cpu:.2f} s")
    print(f"speed-up (sum / wall): {work / wall:.2f}x; same trees: {same}")


if __name__ == "__main__":
    main()

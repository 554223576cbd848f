"""Crossings per second of the exact line search (``optimal_combination``) on MSLR-shaped data.

Two rankers of a generated 6,000-query MSLR-WEB10K-shaped set (``generate.py``, ~720k
rows): A = the BM25 of the whole document (feature 110), B = a LambdaMART of
``--trees`` trees trained on ``--train-queries`` other queries. The fast twin's
search (convex form, alpha in [0, 1], NDCG@10, expected ties) is timed after a
compiling call on a small set (reported apart); the reference is timed on the first
``--reference-queries`` queries. Every pair of documents of a query is a candidate;
"crossings" counts those inside the range. Peak memory: the process's maximum
resident set size before and after the fast search (``resource.getrusage``).

    python benchmarks/combine_speed.py --queries 6000 --json benchmarks/combine_speed.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import train_test  # noqa: E402

from twinrank.fast import LambdaMART  # noqa: E402
from twinrank.fast.combination import (
    _combine_kernels as kernels,  # noqa: E402
    combine as fast,  # noqa: E402
)
from twinrank.reference.combination import combine as reference  # noqa: E402

BM25_WHOLE = 109  # 0-based column of feature 110, BM25 of the whole document


def crossings(a, b, offsets) -> int:
    """Crossings inside (0, 1) of the convex form, counted by the fast twin's first pass."""
    active = np.diff(offsets) >= 2
    _, histogram = kernels.first_crossings(a, b, offsets, active, 0.0, 1.0, False, fast.HISTOGRAM_BINS)
    return int(histogram.sum())


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=6000)
    parser.add_argument("--train-queries", type=int, default=500)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--reference-queries", type=int, default=30)
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    train, data = train_test(args.train_queries, args.queries, seed=0)
    model = LambdaMART(n_trees=args.trees, max_leaves=31).fit(train)
    a = np.nan_to_num(data.X[:, BM25_WHOLE].astype(np.float64))
    b = model.predict(data.X)
    a = (a - a.mean()) / a.std()  # both rankers on one scale, so alpha in [0, 1] mixes them
    b = (b - b.mean()) / b.std()
    offsets = data.query_offsets
    small = offsets[:11]
    t = time.perf_counter()
    fast.optimal_combination(a[:small[-1]], b[:small[-1]], data.y[:small[-1]], small)
    compile_seconds = time.perf_counter() - t
    n_crossings = crossings(a, b, offsets)
    rss_before = max_rss_mb()
    t = time.perf_counter()
    result = fast.optimal_combination(a, b, data.y, offsets, metric="ndcg@10")
    fast_seconds = time.perf_counter() - t
    rss_after = max_rss_mb()
    sub = offsets[:args.reference_queries + 1]
    sub_crossings = crossings(a[:sub[-1]], b[:sub[-1]], sub)
    t = time.perf_counter()
    ref_result = reference.optimal_combination(a[:sub[-1]], b[:sub[-1]], data.y[:sub[-1]], sub)
    reference_seconds = time.perf_counter() - t
    fast_sub = fast.optimal_combination(a[:sub[-1]], b[:sub[-1]], data.y[:sub[-1]], sub)
    out = {
        "command": "python benchmarks/combine_speed.py " + " ".join(argv or sys.argv[1:]),
        "queries": len(offsets) - 1, "rows": int(offsets[-1]), "threads": int(os.cpu_count()),
        "load_average": os.getloadavg()[0],
        "crossings": n_crossings, "pairs": int(np.sum(np.diff(offsets) * (np.diff(offsets) - 1) // 2)),
        "fast_seconds": fast_seconds, "fast_crossings_per_second": n_crossings / fast_seconds,
        "fast_compile_seconds": compile_seconds, "windows": len(fast.plan_windows(
            kernels.first_crossings(a, b, offsets, np.diff(offsets) >= 2, 0.0, 1.0, False,
                                    fast.HISTOGRAM_BINS)[1], fast.CROSSINGS_PER_CHUNK)),
        "max_rss_mb_before": rss_before, "max_rss_mb_after": rss_after,
        "alpha": result.alpha, "ndcg@10": result.value,
        "reference_queries": args.reference_queries, "reference_crossings": sub_crossings,
        "reference_seconds": reference_seconds,
        "reference_crossings_per_second": sub_crossings / reference_seconds,
        "twins_agree_on_subset": bool(ref_result.alpha == fast_sub.alpha),
    }
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()

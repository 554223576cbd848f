"""Memory of one long query: the reference's LambdaMART on a query of 20,000 documents.

    python benchmarks/long_query.py [--docs 20000] [--trees 2] [--engine reference]

The reference lists LambdaRank's pairs a block of about ``PAIR_BLOCK`` pairs at a time
(``reference/losses/objectives.py``, ``reference/losses/_query_pairs.py``), so its memory grows like n, not
n^2: before the blocks, a 20,000-document query needed 3 GB per (n, n) matrix and died near 9.8 GB. Each run is a
fresh process (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``: its peak resident memory);
it prints the peak, the seconds, and the limit it is checked against (``--limit-gb``).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

WORKER = """
import json, sys, numpy as np
from twinrank.{engine}.lambdamart import LambdaMART
n, trees = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.random((n, 10), dtype=np.float32)  # (n, 10)
y = np.minimum(4, rng.poisson(0.3 + 2 * X[:, 0])).astype(float)  # (n,) grades 0..4
LambdaMART(n_trees=trees, max_leaves=15).fit(X, y, np.zeros(n, dtype=np.int64))
print(json.dumps({{"docs": n, "trees": trees}}))
"""


def measure(engine: str, docs: int, trees: int) -> dict:
    """Peak RSS (GB) and seconds of a fresh process training ``trees`` trees on one query of ``docs`` documents."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WORKER.format(engine=engine), str(docs), str(trees)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    return {"engine": engine, "docs": docs, "trees": trees, "peak_gb": round(peak_kb / 2**20, 3),
            "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--engine", choices=["reference", "fast"], default="reference")
    parser.add_argument("--limit-gb", type=float, default=2.0)
    args = parser.parse_args()
    result = measure(args.engine, args.docs, args.trees)
    result["within_limit"] = result["peak_gb"] <= args.limit_gb
    print(json.dumps(result))
    sys.exit(0 if result["within_limit"] else 1)


if __name__ == "__main__":
    main()

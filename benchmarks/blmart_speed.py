"""BL-MART's cost: a 20-member bag against 20 sequential LambdaMART fits, and on Dask with 1 and 2 workers.

Usage: python benchmarks/blmart_speed.py [--models 20] [--json FILE]
On the bundled MQ2008 Fold1, fast twin, LambdaMART's defaults for every member. Ratios
matter, not seconds (machines are shared and noisy): bag / sequential fits (the issue's
target is at most ~1.3), and Dask 2 workers / 1 worker.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from twinrank.fast import LambdaMART, load_mq2008
from twinrank.fast.rankers.bagging import BLMART, member_queries, member_seeds


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--models", type=int, default=20)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    train, valid, _ = load_mq2008(1)
    LambdaMART(n_trees=2).fit(train)  # compiled before any timing
    samples = [train.take_queries(member_queries(s, train.n_queries, 0.67)) for s in member_seeds(0, args.models)]
    whole = [train] * args.models
    result = {
        "sequential fits on the members' samples": seconds(lambda: [LambdaMART(seed=i).fit(s, eval_set=[valid])
                                                                   for i, s in enumerate(samples)]),
        "sequential fits on the whole training set": seconds(lambda: [LambdaMART(seed=i).fit(s, eval_set=[valid])
                                                                     for i, s in enumerate(whole)]),
        "bag in process": seconds(lambda: BLMART(n_models=args.models).fit(train, eval_set=[valid])),
        "bag on Dask, 1 worker": seconds(lambda: BLMART(n_models=args.models, workers=1).fit(train, eval_set=[valid])),
        "bag on Dask, 2 workers": seconds(lambda: BLMART(n_models=args.models, workers=2).fit(train, eval_set=[valid])),
    }
    ratios = {"bag / sequential fits (same samples)": result["bag in process"]
              / result["sequential fits on the members' samples"],
              "bag / sequential fits (whole set)": result["bag in process"]
              / result["sequential fits on the whole training set"],
              "Dask 2 workers / 1 worker": result["bag on Dask, 2 workers"] / result["bag on Dask, 1 worker"]}
    out = {"models": args.models, "seconds": result, "ratios": ratios}
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

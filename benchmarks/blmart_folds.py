"""BL-MART against LambdaMART with the same member parameters on LETOR folds (NDCG@10 and MAP, LETOR convention).

Usage: python benchmarks/blmart_folds.py [DIR_WITH_Fold1..Fold5] [--models B] [--set name=value ...]
Prints one row per fold and the means; --json writes them. Default: ../shared/data/mq2008.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.bagging import BLMART
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.ensembles.runs import read_folds

METRICS = ["ndcg@10", "map"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("folds", nargs="?", default="../shared/data/mq2008")
    p.add_argument("--models", type=int, default=10)
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a member parameter, e.g. --set early_stopping_rounds=50")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    params = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    rows = []
    for fold in read_folds(args.folds):
        row = {"fold": fold.name}
        for name, est in (("lambdamart", LambdaMART(**params)), ("bl-mart", BLMART(n_models=args.models, **params))):
            start = time.perf_counter()
            est.fit(fold.train, eval_set=[fold.valid])
            scores = est.predict(fold.test)
            values = evaluate(METRICS, fold.test.y, scores, fold.test.query_offsets, convention="letor")
            row.update({f"{name}:{m}": float(v) for m, v in values.items()})
            row[f"{name}:seconds"] = round(time.perf_counter() - start, 2)
        rows.append(row)
        print(row, file=sys.stderr)
    means = {k: float(np.mean([r[k] for r in rows])) for k in rows[0] if k != "fold"}
    print(json.dumps({"params": params, "n_models": args.models, "means": means}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"params": params, "n_models": args.models, "folds": rows, "means": means}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

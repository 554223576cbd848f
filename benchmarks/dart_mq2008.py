"""DART and X-DART against LambdaMART on MQ2008's five folds (the issue's bar), with significance tests.

For each fold and seed: LambdaMART, DART (ratio 1.5%) and X-DART (adaptive, UB = 5) with the same
trees (``--trees`` N, 15 leaves, learning rate 0.1), X-DART keeping snapshots at every 25 trees.
Reported, over all (fold, seed, test query) triples, LightGBM's NDCG@10 convention:

- DART at N against LambdaMART at N (paired randomization test, 10,000 permutations);
- X-DART with DART's budget of N iterations: its final size (smaller: pruned trees) and NDCG@10,
  "not significantly worse" than DART at N (one-sided test, p > 0.05);
- the smallest X-DART snapshot not significantly worse than DART at N (the paper's protocol).

    python benchmarks/dart_mq2008.py --json benchmarks/dart_mq2008.json --markdown benchmarks/dart_mq2008.md
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _output import save

from twinrank.fast import LambdaMART, evaluate, load_mq2008
from twinrank.fast.evaluation.stats import not_significantly_worse, randomization_test
from twinrank.fast.rankers.dart import DART, XDART


def ndcg10(est, test, n_trees=None) -> np.ndarray:
    scores = est.predict(test, n_trees=n_trees)
    return evaluate("ndcg@10", test.y, scores, test.query_offsets, per_query=True)["ndcg@10"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    n, sizes = args.trees, list(range(25, args.trees + 1, 25))
    common = dict(n_trees=n, learning_rate=0.1, max_leaves=15)
    per_query = {"lambdamart": [], "dart": [], "x-dart budget": [], **{f"x-dart@{s}": [] for s in sizes}}
    xdart_sizes, seconds = [], {"lambdamart": 0.0, "dart": 0.0, "x-dart": 0.0}
    for fold in range(1, 6):
        train, valid, test = load_mq2008(fold)
        for seed in range(args.seeds):
            for name, est in (("lambdamart", LambdaMART(**common, seed=seed)),
                              ("dart", DART(**common, seed=seed)),
                              ("x-dart", XDART(**common, seed=seed, snapshot_sizes=sizes)),
                              ("x-dart budget", XDART(**common, seed=seed, max_iterations=n))):
                start = time.perf_counter()
                est.fit(train, eval_set=[valid])
                seconds[name.split(" ")[0]] += time.perf_counter() - start
                if name == "x-dart":
                    for s in sizes:
                        per_query[f"x-dart@{s}"].append(ndcg10(est, test, s))
                else:
                    per_query[name].append(ndcg10(est, test))
                if name == "x-dart budget":
                    xdart_sizes.append(est.model_.n_trees)
        print(f"fold {fold} done", flush=True)
    v = {k: np.concatenate(x) for k, x in per_query.items()}
    dart = v["dart"]
    snapshots = {s: {"ndcg@10": float(v[f"x-dart@{s}"].mean()),
                     "not_significantly_worse": bool(not_significantly_worse(v[f"x-dart@{s}"], dart))}
                 for s in sizes}
    smallest = next((s for s in sizes if snapshots[s]["not_significantly_worse"]), None)
    result = {
        "trees": n, "seeds": args.seeds, "pairs": int(len(dart)),
        "ndcg@10": {k: float(v[k].mean()) for k in ("lambdamart", "dart", "x-dart budget")},
        "dart_vs_lambdamart_p": float(randomization_test(dart, v["lambdamart"])),
        "x-dart_budget_mean_size": float(np.mean(xdart_sizes)),
        "x-dart_budget_sizes": [int(s) for s in xdart_sizes],
        "x-dart_budget_not_significantly_worse": bool(not_significantly_worse(v["x-dart budget"], dart)),
        "x-dart_snapshots": snapshots, "smallest_snapshot_not_worse": smallest,
        "seconds": seconds, "load": os.getloadavg()[0],
    }
    text = markdown(result)
    save(result, text, args.json, args.markdown, indent=2)


def markdown(r: dict) -> str:
    """The result as the docs' table (``docs/dart.md`` includes the file)."""
    n, nd = r["trees"], r["ndcg@10"]
    lines = [f"`python benchmarks/dart_mq2008.py` (MQ2008, 5 folds x {r['seeds']} seeds = {r['pairs']} "
             f"(seed, test query) pairs; {n} trees of 15 leaves, learning rate 0.1; LightGBM's NDCG@10 "
             "convention; `benchmarks/dart_mq2008.json`):", "",
             "| model | trees | test NDCG@10 | against DART at N |", "|---|---|---|---|",
             f"| LambdaMART | {n} | {nd['lambdamart']:.4f} | DART vs LambdaMART: p = {r['dart_vs_lambdamart_p']:.3f} |",
             f"| DART (ratio 1.5%) | {n} | {nd['dart']:.4f} | |",
             f"| X-DART (adaptive, UB 5), {n} iterations | {r['x-dart_budget_mean_size']:.1f} (mean) | "
             f"{nd['x-dart budget']:.4f} | "
             f"{'not significantly worse' if r['x-dart_budget_not_significantly_worse'] else 'significantly worse'} |"]
    for s, cell in r["x-dart_snapshots"].items():
        verdict = "not significantly worse" if cell["not_significantly_worse"] else "significantly worse"
        lines.append(f"| X-DART snapshot | {s} | {cell['ndcg@10']:.4f} | {verdict} |")
    smallest = r["smallest_snapshot_not_worse"]
    lines += ["", f"The smallest X-DART snapshot not significantly worse than DART at {n} trees has "
              f"{smallest} trees." if smallest else "No X-DART snapshot is within DART's noise.",
              f"Fit time over all runs: LambdaMART {r['seconds']['lambdamart']:.0f} s, DART "
              f"{r['seconds']['dart']:.0f} s, X-DART {r['seconds']['x-dart']:.0f} s (both X-DART runs).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

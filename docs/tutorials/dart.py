"""DART and X-DART: the normalisation rule, one X-DART run drawn, and the paper's Table 1 in miniature.

Run it with ``python docs/tutorials/dart.py`` from the repository root; the documentation
build runs it section by section (the ``--8<--`` markers), in about a minute.
"""
# --8<-- [start:rule]
import numpy as np

from twinrank.fast import load_mq2008
from twinrank.fast.rankers.dart import DART

train, valid, test = load_mq2008(fold=1)
# two iterations, one tree dropped at the second: the new tree is fit to the scores of the
# ensemble without the first tree (the starting scores), so it is the first tree again,
# and both end at weight 1 / (1 + eta)
dart = DART(n_trees=2, learning_rate=0.3, drop="fixed", drop_k=1, max_leaves=7).fit(train)
print("dropped per iteration:", dart.history_["dropped"], " branches:", dart.history_["branch"])
print("tree weights:", np.round(dart.model_.tree_weights, 6), " 1/(1+0.3) =", round(1 / 1.3, 6))
print("the two trees are equal:", dart.model_.trees[0].equals(dart.model_.trees[1]))
# --8<-- [end:rule]

# --8<-- [start:history]
import matplotlib.pyplot as plt

from twinrank.fast.rankers.dart import XDART

xdart = XDART(n_trees=150, max_leaves=15, seed=0).fit(train, eval_set=[valid])
h = xdart.history_
it = np.arange(1, len(h["size"]) + 1)
fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(7, 5.6), sharex=True, height_ratios=[2, 2, 1])
top.plot(it, h["size"], color="k", lw=1)
for branch, color, size in (("normalize", "tab:blue", 6), ("add", "tab:gray", 6), ("prune", "tab:red", 30)):
    at = np.array([b == branch for b in h["branch"]])
    top.scatter(it[at], np.array(h["size"])[at], s=size, color=color, label=branch, zorder=3)
top.set_ylabel("|E| after it")
top.legend(loc="upper left", fontsize=8)
middle.plot(it, h["valid_loss"], lw=1, label="validation loss 1 - NDCG@10")
middle.plot(it, h["best_loss"], lw=1, label="best loss so far")
middle.legend(fontsize=8)
bottom.step(it, h["dropped"], where="mid", lw=1, color="tab:green")
bottom.set_ylabel("k dropped")
bottom.set_xlabel("iteration")
fig.tight_layout()
branches = h["branch"]
print(f"{len(it)} iterations for {xdart.model_.n_trees} trees: {branches.count('prune')} pruned, "
      f"{branches.count('normalize')} normalised, {branches.count('add')} with nothing dropped; "
      f"{sum(k for k, b in zip(h['dropped'], branches) if b == 'prune')} trees pruned in all")
# --8<-- [end:history]

# --8<-- [start:table]
from twinrank.fast import LambdaMART, evaluate
from twinrank.fast.evaluation.stats import not_significantly_worse

SIZES, SEEDS = [25, 50, 100, 150, 200], [0, 1, 2]
common = dict(n_trees=200, learning_rate=0.1, max_leaves=15)
methods = {
    "LambdaMART": lambda seed: LambdaMART(**common, seed=seed),
    "LambdaMART A.L.R.": lambda seed: LambdaMART(**common, learning_rate_schedule="adaptive", seed=seed),
    "DART (ratio 1.5%)": lambda seed: DART(**common, snapshot_sizes=SIZES, seed=seed),
    "X-DART ratio 1.5%": lambda seed: XDART(**common, drop="ratio", snapshot_sizes=SIZES, seed=seed),
    "X-DART fixed k=2": lambda seed: XDART(**common, drop="fixed", drop_k=2, snapshot_sizes=SIZES, seed=seed),
    "X-DART adaptive UB=5": lambda seed: XDART(**common, snapshot_sizes=SIZES, seed=seed),
}
per_query = {}  # (method, size) -> per-query NDCG@10 of the 3 seeds' models, one array per seed
for name, make in methods.items():
    for seed in SEEDS:
        est = make(seed).fit(train, eval_set=[valid])
        for size in SIZES:
            scores = est.predict(test, n_trees=size)
            values = evaluate("ndcg@10", test.y, scores, test.query_offsets, per_query=True)["ndcg@10"]
            per_query.setdefault((name, size), []).append(values)
# one value per query, the mean of its three seeds: a query under three seeds is not three independent pairs
per_query = {key: np.mean(v, axis=0) for key, v in per_query.items()}
dart_full = per_query[("DART (ratio 1.5%)", 200)]
print(f"{'test NDCG@10':22s}" + "".join(f"{s:>9d}" for s in SIZES))
for name in methods:
    cells = []
    for size in SIZES:
        v = per_query[(name, size)]
        mark = "" if not name.startswith("X-DART") else ("*" if not_significantly_worse(v, dart_full) else " ")
        cells.append(f"{v.mean():.4f}{mark}".rjust(9))
    print(f"{name:22s}" + "".join(cells))
print("* not significantly worse than DART at 200 trees (one-sided paired randomization test over the test "
      "queries, each query's NDCG@10 averaged over the seeds; 10,000 permutations, p > 0.05)")
# --8<-- [end:table]

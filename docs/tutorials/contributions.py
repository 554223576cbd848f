"""Explaining a score: per-feature contributions (path-dependent TreeSHAP) on MQ2008.

Run it with ``python docs/tutorials/contributions.py`` from the repository root; the
documentation build runs it section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:one_query]
import numpy as np

from twinrank.fast import LambdaMART, load_mq2008

train, valid, test = load_mq2008(fold=1)
ranker = LambdaMART(n_trees=100, max_leaves=15, seed=0).fit(train)
phi = ranker.predict_contributions(test)  # (n_rows, 46 + 1): f1 ... f46, then the base value
scores = ranker.predict(test)
print(f"{phi.shape}; base value {phi[0, -1]:.6f} in every row")
print(f"largest |row sum - score|: {np.abs(phi.sum(axis=1) - scores).max():.1e}")

q = 4  # one query of the test fold
rows = np.arange(test.query_offsets[q], test.query_offsets[q + 1])
rows = rows[np.argsort(-scores[rows], kind="stable")]  # ranked by the model
print(f"\nquery {test.qid[rows[0]]}: {len(rows)} documents, ranked by score")
for i in rows[:5]:
    top = np.argsort(-np.abs(phi[i, :-1]))[:3]  # its three largest contributions
    shares = ", ".join(f"f{f + 1} {phi[i, f]:+.3f}" for f in top)
    print(f"  label {test.y[i]:.0f}  score {scores[i]:+.3f} = base {phi[i, -1]:+.3f} + ... ({shares})")
# --8<-- [end:one_query]

# --8<-- [start:definition]
import itertools
import math

from twinrank.reference.attribution.contributions import tree_contributions
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.model import LEAF

small = Dataset(train.X[:, [4, 38, 40]], train.y, train.query_offsets)  # three features: f5, f39, f41
tree = LambdaMART(n_trees=1, max_leaves=6, seed=0).fit(small).model_.trees[0]


def f_x(tree, x, known, j=0):
    """Algorithm 1: follow x at a split on a known feature, else average the children by their rows."""
    if tree.left[j] == LEAF:
        return tree.value[j]
    children = (tree.left[j], tree.right[j])
    if tree.feature[j] in known:
        return f_x(tree, x, known, children[0] if x[tree.feature[j]] <= tree.threshold[j] else children[1])
    return sum(tree.count[c] / tree.count[j] * f_x(tree, x, known, c) for c in children)


x = small.X[0]
M = 3
by_definition = [sum(math.factorial(len(S)) * math.factorial(M - len(S) - 1) / math.factorial(M)
                     * (f_x(tree, x, {*S, i}) - f_x(tree, x, set(S)))
                     for size in range(M) for S in itertools.combinations([f for f in range(M) if f != i], size))
                 for i in range(M)]
print("by the definition, 2^3 subsets:", np.round(by_definition, 6), " f_x({}) =", round(f_x(tree, x, set()), 6))
print("TreeSHAP, one walk of the tree:", np.round(tree_contributions(tree, x[None, :])[0], 6))
print(f"f(x) = {f_x(tree, x, {0, 1, 2}):.6f} = the sum of the four")
# --8<-- [end:definition]

# --8<-- [start:lightgbm]
import os
import tempfile
import time

import lightgbm

import twinrank.fast.attribution.contributions as fast
import twinrank.reference.attribution.contributions as reference
from twinrank.interop.lightgbm_text import save_lightgbm

path = os.path.join(tempfile.mkdtemp(), "lambdamart.txt")
save_lightgbm(ranker.model_, path)  # what `twinrank export` writes
theirs = lightgbm.Booster(model_file=path).predict(test.X, pred_contrib=True)
print(f"LightGBM's pred_contrib: {theirs.shape}, largest difference {np.abs(phi - theirs).max():.1e}")
for twin in (reference, fast):  # the reference walks a tree once for all rows; fast, once per 64 rows
    report = []
    for X, expected in ((test.X[rows], phi[rows]), (test.X, phi)):  # one query, then the whole test fold
        start = time.perf_counter()
        same = np.array_equal(twin.predict_contributions(ranker.model_, X), expected)
        report.append(f"{len(X)} rows {time.perf_counter() - start:.2f} s ({'equal' if same else 'NOT equal'})")
    print(f"{twin.__name__.split('.')[1]:>9}, {ranker.model_.n_trees} trees: {'; '.join(report)}")
# --8<-- [end:lightgbm]

# --8<-- [start:figure]
import matplotlib.pyplot as plt

top = np.argsort(-np.abs(phi[rows, :-1]).sum(axis=0))[:6]  # the query's six most used features
colors = plt.cm.tab10(np.arange(len(top) + 1))
fig, (waterfall, bars) = plt.subplots(1, 2, figsize=(10, 4.2), width_ratios=[1, 1.4])

first = rows[0]  # the waterfall of the top-ranked document: from the base value to its score
order = np.argsort(-np.abs(phi[first, :-1]))[:8]
steps = [("base value", phi[first, -1])] + [(f"f{f + 1}", phi[first, f]) for f in order]
steps.append(("other features", phi[first, :-1].sum() - phi[first, order].sum()))
level = 0.0
for k, (name, value) in enumerate(steps):
    start = 0.0 if k == 0 else level
    waterfall.barh(k, value, left=start, color="0.6" if k == 0 else ("tab:green" if value >= 0 else "tab:red"))
    level = start + value
waterfall.axvline(scores[first], color="k", lw=1, ls="--", label=f"score {scores[first]:.3f}")
waterfall.set_yticks(range(len(steps)), [name for name, _ in steps])
waterfall.invert_yaxis()
waterfall.set_title(f"top document of query {test.qid[first]} (label {test.y[first]:.0f})", fontsize=10)
waterfall.legend(fontsize=8, loc="lower right")

for k, i in enumerate(rows):  # every document of the query: its contributions, stacked
    positive = negative = 0.0
    parts = [phi[i, f] for f in top] + [phi[i, :-1].sum() - phi[i, top].sum()]
    for part, color in zip(parts, colors):
        base = positive if part >= 0 else negative
        bars.bar(k, part, bottom=base, color=color, width=0.8)
        positive, negative = (positive + part, negative) if part >= 0 else (positive, negative + part)
    bars.plot(k, scores[i] - phi[i, -1], "k_", ms=10)
bars.axhline(0, color="k", lw=0.5)
bars.set_xticks(range(len(rows)), [f"{test.y[i]:.0f}" for i in rows], fontsize=7)
bars.set_xlabel("documents in ranked order (their labels)")
bars.set_ylabel("score - base value")
bars.legend([plt.Rectangle((0, 0), 1, 1, color=c) for c in colors],
            [f"f{f + 1}" for f in top] + ["other"], fontsize=7, ncol=2)
bars.set_title("each document's contributions; - marks their sum", fontsize=10)
fig.tight_layout()
# --8<-- [end:figure]

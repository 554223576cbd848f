"""Pointwise rankers: GBRT, random forests and IGBRT on MQ2008.

Run it with ``python docs/tutorials/pointwise.py``; the documentation build
runs it section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:helpers]
def markdown_table(header, rows, digits=4):
    """A Markdown table (the docs render it); floats rounded to ``digits``."""
    def cell(v):
        return f"{v:.{digits}f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
# --8<-- [end:helpers]


# --8<-- [start:gbrt]
import numpy as np

from twinrank.fast.rankers.gbrt import GBRT
from twinrank.fast.trees.predict import apply_tree
from twinrank.reference.io.data import load_mq2008

train, valid, test = load_mq2008(fold=1)
gbrt = GBRT(n_trees=1, learning_rate=0.1, max_leaves=4, min_samples_leaf=50).fit(train)
model = gbrt.model_
print(f"F0 = base_score = {model.base_score:.6f}, mean label = {train.y.mean():.6f}")
leaf = apply_tree(model.trees[0], train.X)          # the leaf of every training row
for k in np.unique(leaf):
    residual = train.y[leaf == k] - model.base_score
    print(f"leaf {k}: {residual.size:5d} rows, value {model.trees[0].value[k]:+.6f}"
          f" = 0.1 x mean residual {residual.mean():+.6f}")
# --8<-- [end:gbrt]

# --8<-- [start:cart]
from twinrank.fast.rankers.forest import RandomForest
from twinrank.fast.trees.binning import apply_bins, bin_thresholds
from twinrank.fast.trees.tree import grow_tree
from twinrank.reference.params import TreeParams

forest = RandomForest(n_trees=1, bootstrap=False, feature_fraction=1.0,
                      max_leaves=64, min_samples_leaf=5).fit(train)
thresholds = bin_thresholds(train.X, 255)
cart = grow_tree(apply_bins(train.X, thresholds), -train.y, np.ones(train.n_rows),
                 thresholds, TreeParams(max_leaves=64, min_samples_leaf=5,
                                        min_hessian_in_leaf=0.0))
print("the one-tree forest is grow_tree(g = -y, h = 1):", forest.model_.trees[0].equals(cart))
leaf = apply_tree(cart, train.X)
means = [train.y[leaf == k].mean() for k in np.unique(leaf)]
print("every leaf value is the mean label of its rows:",
      np.allclose(cart.value[np.unique(leaf)], means, rtol=1e-12))
# --8<-- [end:cart]

# --8<-- [start:experiment]
import time

from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.forest import IGBRT

forest_params = dict(n_trees=40, max_leaves=1024, min_samples_leaf=50, feature_fraction=0.1)
boost_params = dict(n_trees=300, learning_rate=0.05, max_leaves=8, min_samples_leaf=20,
                    metric="ndcg@10", convention="ranklib", early_stopping_rounds=30)
rankers = {
    "random forest": RandomForest(**forest_params, metric="ndcg@10", convention="ranklib"),
    "GBRT": GBRT(**boost_params),
    "IGBRT": IGBRT(**{f"rf_{k}": v for k, v in forest_params.items()}, **boost_params),
}
rows = []
for name, ranker in rankers.items():
    start = time.perf_counter()
    ranker.fit(train, eval_set=[valid])
    seconds = time.perf_counter() - start
    values = evaluate(["ndcg@10", "err@10"], test.y, ranker.predict(test),
                      test.query_offsets, convention="ranklib")
    boosted = "" if name == "random forest" else ranker.model_.n_trees
    rows.append([name, values["ndcg@10"], values["err@10"], boosted, f"{seconds:.1f} s"])
same = all(s.equals(t) for s, t in zip(rankers["IGBRT"].model_.init_model.trees,
                                       rankers["random forest"].model_.trees))
print(f"IGBRT's forest is the random forest above: {same}\n")
print(markdown_table(["ranker", "test NDCG@10", "test ERR@10", "boosted trees kept",
                      "fit time"], rows))
# --8<-- [end:experiment]

# --8<-- [start:curve]
import matplotlib.pyplot as plt

key = "valid:ndcg@10"
forest_curve = rankers["random forest"].history_[key]
igbrt_curve = rankers["IGBRT"].model_.init_model.history[key] + rankers["IGBRT"].history_[key]
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(range(1, len(forest_curve) + 1), forest_curve, label="random forest (mean of t trees)")
ax.plot(range(1, len(rankers["GBRT"].history_[key]) + 1), rankers["GBRT"].history_[key],
        label="GBRT")
ax.plot(range(1, len(igbrt_curve) + 1), igbrt_curve, label="IGBRT (forest, then boosting)")
ax.axvline(len(forest_curve), color="gray", linestyle=":")
ax.set_xlabel("trees")
ax.set_ylabel("validation NDCG@10 (ranklib)")
ax.legend(frameon=False)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:curve]

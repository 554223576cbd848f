"""Interoperability: a twinrank model in LightGBM, a LightGBM model in twinrank.

Run it with ``python docs/tutorials/lightgbm.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:export]
import os
import tempfile

import lightgbm
import numpy as np

from twinrank.fast import LambdaMART, load_mq2008
from twinrank.fast.trees.predict import predict_ensemble
from twinrank.interop.lightgbm_text import load_lightgbm, save_lightgbm

train, vali, test = load_mq2008(1)
rng = np.random.default_rng(0)
X, X_test = train.X.copy(), test.X.copy()
X[rng.random(X.shape) < 0.1] = np.nan  # 10% missing values, in training and at scoring
X_test[rng.random(X_test.shape) < 0.1] = np.nan

ranker = LambdaMART(n_trees=50, max_leaves=15, missing="separate").fit(X, train.y, qid=train.qid)
folder = tempfile.mkdtemp()
save_lightgbm(ranker.model_, os.path.join(folder, "lambdamart.txt"))

booster = lightgbm.Booster(model_file=os.path.join(folder, "lambdamart.txt"))
ours, theirs = ranker.predict(X_test), booster.predict(X_test)
three_way = sum(int(np.sum((t.left >= 0) & (t.missing != t.left) & (t.missing != t.right)))
                for t in ranker.model_.trees)
print(f"{booster.num_trees()} trees; {three_way} three-way splits became two LightGBM nodes each")
print(f"scores equal on all {len(ours)} test rows: {np.array_equal(ours, theirs)}")
# --8<-- [end:export]

# --8<-- [start:import]
group = np.diff(train.query_offsets)
trained = lightgbm.train({"objective": "lambdarank", "num_leaves": 31, "verbose": -1, "num_threads": 2},
                         lightgbm.Dataset(X, train.y, group=group), num_boost_round=50)
trained.save_model(os.path.join(folder, "lightgbm.txt"))

model = load_lightgbm(os.path.join(folder, "lightgbm.txt"))
raw = trained.predict(X_test, raw_score=True)
print(f"imported {model.n_trees} trees over {model.n_features} features, objective "
      f"{model.params['objective']!r}")
print(f"fast twin = LightGBM raw scores: {np.array_equal(predict_ensemble(model, X_test), raw)}")
# --8<-- [end:import]

# --8<-- [start:figure]
import matplotlib.pyplot as plt  # noqa: E402


def box(ax, xy, text, color):
    ax.annotate(text, xy, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.4", "fc": color, "ec": "0.3"})


def arrow(ax, start, end, label):
    ax.annotate("", end, start, arrowprops={"arrowstyle": "->", "color": "0.3"})
    ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, label, fontsize=8, ha="center",
            va="center", bbox={"fc": "white", "ec": "none", "pad": 1})


fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
box(left, (0.5, 0.85), "twinrank node k\nx[f] <= t ?", "#dbe4ff")
for x, name, label in ((0.15, "L", "yes"), (0.5, "M", "NaN"), (0.85, "R", "no")):
    box(left, (x, 0.15), name, "#e9f5e1" if name != "M" else "#ffe8cc")
    arrow(left, (0.5, 0.75), (x, 0.25), label)
box(right, (0.62, 0.9), "LightGBM node A\nx[f] <= inf ?  NaN: right", "#f3e1ff")
box(right, (0.3, 0.5), "node B\nx[f] <= t ?", "#dbe4ff")
box(right, (0.85, 0.5), "M", "#ffe8cc")
box(right, (0.12, 0.1), "L", "#e9f5e1")
box(right, (0.5, 0.1), "R", "#e9f5e1")
arrow(right, (0.62, 0.8), (0.3, 0.6), "every number")
arrow(right, (0.62, 0.8), (0.85, 0.6), "NaN")
arrow(right, (0.3, 0.4), (0.12, 0.2), "yes")
arrow(right, (0.3, 0.4), (0.5, 0.2), "no")
left.set_title("missing values in a child of their own", fontsize=10)
right.set_title("the same routes in LightGBM's binary nodes", fontsize=10)
for ax in (left, right):
    ax.set_xlim(0, 1), ax.set_ylim(0, 1), ax.axis("off")
fig.tight_layout()
# --8<-- [end:figure]

if __name__ == "__main__":
    plt.show()

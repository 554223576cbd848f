"""Scoring: walking trees (the reference) and QuickScorer's bit masks (the fast twin).

Run it with ``python docs/tutorials/scoring.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:tree]
import numpy as np

from twinrank.fast.trees import _quickscorer
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.model import LEAF
from twinrank.reference.losses.objectives import lambdarank
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import predict
from twinrank.reference.trees.binning import apply_bins, bin_thresholds
from twinrank.reference.trees.tree import grow_tree

train, vali, test = load_mq2008(1)
thresholds = bin_thresholds(train.X, 255)
g, h = lambdarank(train.y, np.zeros(train.n_rows), train.query_offsets)
tree = grow_tree(apply_bins(train.X, thresholds), g, h, thresholds,
                 TreeParams(max_leaves=5, min_samples_leaf=20))
for k in range(tree.n_nodes):
    if tree.left[k] == LEAF:
        print(f"node {k}: leaf, value {tree.value[k]:+.4f}")
    else:
        print(f"node {k}: x[{tree.feature[k]}] <= {tree.threshold[k]:.4f} ? node {tree.left[k]} "
              f": node {tree.right[k]}   (missing -> node {tree.missing[k]})")
# --8<-- [end:tree]

# --8<-- [start:masks]
nodes, gt, nan, leaf_order = _quickscorer._tree_masks(tree.left, tree.right, tree.missing)
n_leaves = len(leaf_order)
print("leaf bits, left to right:", {f"bit {b}": f"node {k}" for b, k in enumerate(leaf_order)})
for k, gt_mask, nan_mask in zip(nodes, gt, nan):
    keep = (1 << n_leaves) - 1  # show the tree's own bits only
    print(f"node {k}: gt mask {int(gt_mask) & keep:0{n_leaves}b}   "
          f"NaN mask {int(nan_mask) & keep:0{n_leaves}b}   (bit 0 rightmost)")
# --8<-- [end:masks]

# --8<-- [start:one_row]
row = test.X[0]
word = (1 << n_leaves) - 1
for k, gt_mask, nan_mask in zip(nodes, gt, nan):
    x = row[tree.feature[k]]
    picked = nan_mask if np.isnan(x) else (gt_mask if x > tree.threshold[k] else ~0)
    word &= int(picked)
    print(f"node {k}: x[{tree.feature[k]}] = {x:.4f} -> AND -> {word & ((1 << n_leaves) - 1):0{n_leaves}b}")
lowest = (word & -word).bit_length() - 1
print(f"lowest set bit {lowest}: leaf node {leaf_order[lowest]}; "
      f"walking the tree reaches node {predict.apply_tree(tree, test.X[:1])[0]}")
# --8<-- [end:one_row]

# --8<-- [start:plot]
import matplotlib.pyplot as plt

# one row of the picture per internal node: the mask the row picked; then their AND
picked_rows, labels = [], []
for k, gt_mask, nan_mask in zip(nodes, gt, nan):
    x = row[tree.feature[k]]
    picked = nan_mask if np.isnan(x) else (gt_mask if x > tree.threshold[k] else ~0)
    picked_rows.append([(int(picked) >> b) & 1 for b in range(n_leaves)])
    labels.append(f"node {k}: " + ("NaN" if np.isnan(x) else ("x > t" if x > tree.threshold[k] else "x <= t")))
picked_rows.append([(word >> b) & 1 for b in range(n_leaves)])
labels.append("AND of all")
bits = np.array(picked_rows)
fig, ax = plt.subplots(figsize=(6.5, 0.45 * len(bits) + 0.9))
ax.imshow(bits, cmap="Blues", vmin=-0.3, vmax=1.3, aspect="auto")
for i, j in np.ndindex(bits.shape):
    ax.text(j, i, bits[i, j], ha="center", va="center",
            color="white" if bits[i, j] else "black")
ax.add_patch(plt.Rectangle((lowest - 0.5, len(bits) - 1.5), 1, 1, fill=False, lw=3, color="tab:orange"))
ax.axhline(len(bits) - 1.5, color="black", lw=1)
ax.set_xticks(range(n_leaves), [f"leaf bit {b}\n(node {leaf_order[b]})" for b in range(n_leaves)],
              fontsize="small")
ax.set_yticks(range(len(bits)), labels, fontsize="small")
ax.set_title(f"exit leaf = lowest set bit: bit {lowest}, node {leaf_order[lowest]}", fontsize="medium")
ax.tick_params(length=0)
fig.tight_layout()
# --8<-- [end:plot]

# --8<-- [start:agreement]
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.fast.trees import predict as fast_predict

ranker = LambdaMART(n_trees=100, learning_rate=0.05, max_leaves=15, seed=0).fit(train)
model = ranker.model_
walked = predict.predict_ensemble(model, test.X)  # the reference: every tree walked
masked = fast_predict.predict_ensemble(model, test.X)  # the fast twin: QuickScorer
print(f"{model.n_trees} trees of at most {max(t.n_leaves for t in model.trees)} leaves, "
      f"{len(test.X)} test rows")
print("largest difference, reference walk vs fast QuickScorer:", np.abs(walked - masked).max())
# --8<-- [end:agreement]

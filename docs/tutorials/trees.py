"""Regression trees: binning, histograms, split gain, leaf-wise growth, missing values.

Run it with ``python docs/tutorials/trees.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:helpers]
import inspect


def show_source(function):
    """A function's current source as a Markdown code block (the docs render it)."""
    return "```python\n" + inspect.getsource(function) + "```"


def markdown_table(header, rows, digits=4):
    """A Markdown table (the docs render it); floats rounded to ``digits``."""
    def cell(v):
        return f"{v:.{digits}f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
# --8<-- [end:helpers]


# --8<-- [start:gradients]
import numpy as np

from twinrank.reference.io.data import load_mq2008
from twinrank.reference.losses.objectives import lambdarank

train, _, _ = load_mq2008(fold=1)
scores = np.zeros(train.n_rows)            # the first round: every score is 0
g, h = lambdarank(train.y, scores, train.query_offsets, k=10)
print(f"g: {g.shape} {g.dtype}, sum {g.sum():+.1e}")
print(f"h: min {h.min():.3f}, max {h.max():.3f}")
# --8<-- [end:gradients]

# --8<-- [start:bins]
from twinrank.reference.trees.binning import MISSING_BIN, apply_bins, bin_thresholds

thresholds = bin_thresholds(train.X, max_bins=255)  # float64 array per feature
binned = apply_bins(train.X, thresholds)            # (n_rows, n_features) uint8
f = 0
print(f"feature {f}: {len(np.unique(train.X[:, f]))} distinct values, "
      f"{len(thresholds[f])} thresholds, {len(thresholds[f]) + 1} bins")
print("values", train.X[:5, f])
print("bins  ", binned[:5, f])
print(f"binned {binned.shape} {binned.dtype}; missing bin {MISSING_BIN}")
# --8<-- [end:bins]

# --8<-- [start:histogram]
from twinrank.reference.trees.tree import build_histogram

rows = np.arange(train.n_rows)                  # the root holds every row
hist = build_histogram(binned, g, h, rows)      # (n_features, 256, 3)
print(f"{hist.shape}\n")                        # (a blank line ends the text)
print(markdown_table(["bin", "G", "H", "count"],
                     [[b, *hist[f, b, :2], int(hist[f, b, 2])] for b in range(4)]))
# --8<-- [end:histogram]

# --8<-- [start:gain]
G, H = g.sum(), h.sum()
value_bins = hist[:, :MISSING_BIN]                  # (n_features, 255, 3)
G_left = np.cumsum(value_bins[..., 0], axis=1)      # rows with bin <= b
H_left = np.cumsum(value_bins[..., 1], axis=1)
n_left = np.cumsum(value_bins[..., 2], axis=1)
G_right, H_right, n_right = G - G_left, H - H_left, train.n_rows - n_left
with np.errstate(divide="ignore", invalid="ignore"):
    gain = G_left**2 / H_left + G_right**2 / H_right - G**2 / H
n_bins = np.array([len(t) + 1 for t in thresholds])
is_threshold = np.arange(MISSING_BIN) < n_bins[:, None] - 1
gain = np.where(is_threshold & (n_left >= 20) & (n_right >= 20), gain, -np.inf)
best_feature, best_bin = np.unravel_index(np.argmax(gain), gain.shape)
print(f"by hand: feature {best_feature}, "
      f"x <= {thresholds[best_feature][best_bin]:.6f} (bin {best_bin}), "
      f"gain {gain[best_feature, best_bin]:.6f}")
# --8<-- [end:gain]

# --8<-- [start:find_best_split]
from twinrank.reference.params import TreeParams
from twinrank.reference.trees.tree import find_best_split

params = TreeParams(max_leaves=4, min_samples_leaf=20)
split = find_best_split(hist, totals=np.array([G, H, train.n_rows]),
                        n_bins=n_bins, allowed=np.ones(train.n_features, bool),
                        penalty=np.zeros(train.n_features), params=params,
                        min_rows=20)
print(split)
assert (split.feature, split.bin_threshold) == (best_feature, best_bin)
assert np.isclose(split.gain, gain[best_feature, best_bin], rtol=1e-12)
# --8<-- [end:find_best_split]

# --8<-- [start:plot_gain]
import matplotlib.pyplot as plt

top3 = np.argsort(-gain.max(axis=1))[:3]     # the features of largest gain
fig, ax = plt.subplots(figsize=(7, 3.2))
for j in top3:
    t = thresholds[j]                        # threshold b: bins <= b go left
    gain_j = gain[j, :len(t)]
    ok = np.isfinite(gain_j)                 # valid candidates only
    ax.plot(t[ok], gain_j[ok], marker=".", markersize=3, linewidth=1,
            label=f"feature {j}")
ax.plot(thresholds[split.feature][split.bin_threshold], split.gain, "k*",
        markersize=12, label="best split of the root")
ax.set_xlabel("threshold t (rows with x <= t go left)")
ax.set_ylabel("gain")
ax.legend(frameon=False, fontsize="small")
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:plot_gain]

# --8<-- [start:grow]
from twinrank.reference.trees.tree import grow_tree

tree = grow_tree(binned, g, h, thresholds, params)
columns = ["feature", "threshold", "left", "right", "missing", "value", "gain",
           "count"]
print(markdown_table(
    ["node", *columns],
    [[k, *(getattr(tree, c)[k].item() for c in columns)]
     for k in range(tree.n_nodes)]))
# --8<-- [end:grow]

# --8<-- [start:predict]
from twinrank.reference.trees.predict import apply_tree, predict_tree, predict_tree_binned

leaves = apply_tree(tree, train.X)           # the leaf each row reaches
counts = {int(k): int(n) for k, n in zip(*np.unique(leaves, return_counts=True))}
print("rows per leaf:", counts)
raw, on_bins = predict_tree(tree, train.X), predict_tree_binned(tree, binned)
print("raw and binned routes agree:", np.array_equal(raw, on_bins))
# --8<-- [end:predict]

# --8<-- [start:missing]
from twinrank.reference.losses.objectives import squared_error

rng = np.random.default_rng(0)
x = rng.random((200, 1)).astype(np.float32)     # one feature
y = (x[:, 0] > 0.5).astype(float)               # relevant when x > 0.5
x[rng.random(200) < 0.25] = np.nan              # a quarter goes missing ...
y[np.isnan(x[:, 0])] = 1.0                      # ... and those are relevant
g_sq, h_sq = squared_error(y, np.zeros(200))    # regression on the labels
t = bin_thresholds(x)
stump = grow_tree(apply_bins(x, t), g_sq, h_sq, t, TreeParams(max_leaves=2))
side = "left" if stump.missing[0] == stump.left[0] else "right"
print(f"root: x <= {stump.threshold[0]:.3f}; missing values go {side}")
print(f"leaf values: left {stump.value[1] + 0:.3f}, right {stump.value[2] + 0:.3f}")
new_rows = np.array([[0.2], [0.9], [np.nan]], dtype=np.float32)
print("predictions for x = 0.2, 0.9, NaN:", predict_tree(stump, new_rows) + 0.0)
# --8<-- [end:missing]

# --8<-- [start:fast]
from twinrank.fast.trees.tree import grow_tree as fast_grow_tree

fast_tree = fast_grow_tree(binned, g, h, thresholds, params)
structure = ["feature", "bin_threshold", "left", "right", "missing", "count"]
print("same structure:", all(np.array_equal(getattr(tree, a), getattr(fast_tree, a))
                             for a in structure))
difference = np.abs(fast_tree.value - tree.value).max()
print(f"largest |fast - reference| node value: {difference:.1e}")
# --8<-- [end:fast]

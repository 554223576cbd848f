"""Plots of fitted rankers on MQ2008: feature importance, the metric history, one tree, McRank and DART.

Run it with ``python docs/tutorials/plots.py``; the documentation build runs it section by
section (the ``--8<--`` markers) and shows its figures.
"""
# --8<-- [start:fit]
from twinrank.fast import LambdaMART, load_mq2008
from twinrank.fast.plot import plot_importance, plot_metric, plot_tree

train, valid, test = load_mq2008(fold=1)
ranker = LambdaMART(n_trees=60, max_leaves=8, learning_rate=0.1, eval_train=True, seed=0)
ranker.fit(train, eval_set=[valid])
print(f"{ranker.model_.n_trees} trees; history_ keys: {sorted(ranker.history_)}")
# --8<-- [end:fit]

# --8<-- [start:importance]
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
plot_importance(ranker, "split", max_num_features=10, ax=left)
plot_importance(ranker, "gain", max_num_features=10, ax=right)
fig.tight_layout()
# --8<-- [end:importance]

# --8<-- [start:metric]
ax = plot_metric(ranker)  # "ndcg@10": the only metric recorded; a line for train, one for valid
ax.figure.set_size_inches(7, 3.5)
best = max(range(len(ranker.history_["valid:ndcg@10"])), key=ranker.history_["valid:ndcg@10"].__getitem__)
print(f"best validation NDCG@10 {ranker.history_['valid:ndcg@10'][best]:.4f} after {best + 1} trees")
# --8<-- [end:metric]

# --8<-- [start:tree]
ax = plot_tree(ranker, tree=0)
# --8<-- [end:tree]

# --8<-- [start:mcrank]
from twinrank.fast import McRank
from twinrank.fast.rankers.dart import DART

mcrank = McRank(n_trees=20, max_leaves=8, seed=0).fit(train, eval_set=[valid])
dart = DART(n_trees=30, max_leaves=8, drop_rate=0.1, seed=0).fit(train, eval_set=[valid])
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
plot_metric(mcrank, ax=left)  # one line per classifier: y>0 and y>1 (MQ2008's grades are 0, 1, 2)
plot_metric(dart, ax=right)
right.set_title("DART: ndcg@10 during training")
fig.tight_layout()
print("McRank's classifiers:", len(mcrank.model_.classifiers), "- trees:",
      [len(c.trees) for c in mcrank.model_.classifiers])
# --8<-- [end:mcrank]

# --8<-- [start:dart_tree]
ax = plot_tree(dart, tree=2)  # the title gives the weight DART's normalisation left the tree with
print(ax.get_title())
# --8<-- [end:dart_tree]

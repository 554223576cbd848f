"""Quickstart: train LambdaMART on MQ2008, evaluate, save, load, use the other twin.

Run it with ``python docs/tutorials/quickstart.py``; the documentation build
runs it section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:setup]
import tempfile
from pathlib import Path

workdir = Path(tempfile.mkdtemp(prefix="twinrank-"))  # a scratch folder
# --8<-- [end:setup]

# --8<-- [start:train]
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.io.data import load_mq2008

train, valid, test = load_mq2008(fold=1)
ranker = LambdaMART(n_trees=100, learning_rate=0.1, max_leaves=15,
                    min_samples_leaf=20, metric="ndcg@10", eval_train=True,
                    early_stopping_rounds=20, seed=0)
ranker.fit(train, eval_set=[valid])
print(ranker)
print(f"kept {ranker.model_.n_trees} trees, "
      f"the best validation NDCG@10 was after {ranker.best_iteration_}")
# --8<-- [end:train]

# --8<-- [start:curve]
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3))
for name, values in ranker.history_.items():
    ax.plot(range(1, len(values) + 1), values, label=name)
ax.axvline(ranker.best_iteration_, color="gray", linestyle=":",
           label="best iteration")
ax.set_xlabel("trees")
ax.set_ylabel("NDCG@10 (lightgbm convention)")
ax.legend(frameon=False)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:curve]

# --8<-- [start:evaluate]
from twinrank.fast.evaluation.metrics import evaluate

scores = ranker.predict(test)                       # one score per row of test.X
names = ["ndcg@1", "ndcg@5", "ndcg@10", "map", "err@10"]
for convention in ["lightgbm", "ranklib", "letor"]:
    values = evaluate(names, test.y, scores, test.query_offsets,
                      convention=convention)
    print(f"{convention:>9}  "
          + "  ".join(f"{k} {v:.4f}" for k, v in values.items()))
# --8<-- [end:evaluate]

# --8<-- [start:inspect]
import numpy as np

from twinrank.fast import dump_tree, feature_importances

for k in (1, 3, ranker.model_.n_trees):                # the first k trees only
    ndcg10 = evaluate("ndcg@10", test.y, ranker.predict(test, n_trees=k),
                      test.query_offsets)["ndcg@10"]
    print(f"{k:>3} trees: test NDCG@10 {ndcg10:.4f}")
print(f"score(): {ranker.score(test.X, test.y, qid=test.qid):.4f}")  # all trees
split = feature_importances(ranker, "split")           # splits per feature, all trees
top = np.argsort(-ranker.feature_importances_)[:5]     # total gain, normalised to sum 1
print("top features by gain:", ", ".join(
    f"f{f} ({ranker.feature_importances_[f]:.2f}, {int(split[f])} splits)" for f in top))
print(dump_tree(ranker.model_.trees[0], precision=3))
# --8<-- [end:inspect]

# --8<-- [start:save]
path = workdir / "mq2008.json"
ranker.save(path)                 # versioned JSON, written atomically
loaded = LambdaMART.load(path)
print(f"{path.stat().st_size / 1e3:.0f} kB; same scores after loading:",
      (loaded.predict(test) == scores).all())
# --8<-- [end:save]

# --8<-- [start:json]
import json

model = json.loads(path.read_text())
header = ["format", "version", "algorithm", "n_features", "best_iteration"]
print({k: model[k] for k in header})
first = model["trees"][0]
print("tree 0 fields:", ", ".join(first))
print("tree 0 feature:", first["feature"])
# --8<-- [end:json]

# --8<-- [start:cross]
from twinrank.reference.rankers.lambdamart import LambdaMART as ReferenceLambdaMART

reference_ranker = ReferenceLambdaMART.load(path)    # the NumPy twin
difference = abs(reference_ranker.predict(test) - scores).max()
print(f"largest |fast - reference| score: {difference:.1e}")
# --8<-- [end:cross]

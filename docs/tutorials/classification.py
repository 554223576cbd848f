"""Ranking by classification: McRank against regression (GBRT) on MQ2008, fold 1.

Run it with ``python docs/tutorials/classification.py``; the documentation build
runs it section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:fit]
import numpy as np

from twinrank.fast.rankers.classification import McRank
from twinrank.fast.rankers.gbrt import GBRT
from twinrank.reference.io.data import load_mq2008

train, valid, test = load_mq2008(fold=1)
trees = dict(n_trees=50, learning_rate=0.1, max_leaves=15, min_samples_leaf=20, seed=0)

regression = GBRT(**trees).fit(train)       # least squares on the labels 0, 1, 2
classification = McRank(**trees).fit(train)  # one logistic classifier per threshold
print("labels:", classification.classes_)
for classifier in classification.model_.classifiers:
    print(f"classifier of y > {classifier.params['threshold']:g}: {classifier.n_trees} trees, "
          f"prior log-odds {classifier.base_score:+.3f}, seed {classifier.params['seed']}")
# --8<-- [end:fit]

# --8<-- [start:proba]
labels = classification.classes_               # the grades c_k: 0, 1, 2
proba = classification.predict_proba(test)     # (n_rows, 3): P(y = 0), P(y = 1), P(y = 2)
expected = classification.predict(test)        # sum_k P(y = c_k) F(c_k), F(c) = c
np.set_printoptions(precision=3, suppress=True)
print(np.c_[proba[:4], expected[:4]])
print("rows sum to 1:", np.allclose(proba.sum(axis=1), 1.0), " smallest entry:", proba.min())

from twinrank.fast.rankers.classification import classifier_scores

s = classifier_scores(classification.model_, test.X)  # (n_rows, 2) log-odds of y > 0, y > 1
print(f"the two classifiers cross (P(y > 1) > P(y > 0)) on {np.mean(s[:, 1] > s[:, 0]):.1%} "
      f"of the test documents")
# --8<-- [end:proba]

# --8<-- [start:figure]
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 2.6))
bottom = np.zeros(len(labels))
for k, label in enumerate(labels):
    mean = np.array([proba[test.y == true, k].mean() for true in labels])  # (3,) by true label
    ax.barh([f"true label {true:g}" for true in labels], mean, left=bottom, label=f"P(y = {label:g})")
    bottom += mean
ax.set_xlabel("mean predicted class probability (test documents)")
ax.legend(frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, 1.3))
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:figure]

# --8<-- [start:table]
from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.classification import fit_relevance_weights, relevance_weights

fitted = fit_relevance_weights(classification.predict_proba(train), train.y)
rankers = {
    "regression (GBRT)": regression.predict(test),
    "McRank, F(c) = c": proba @ relevance_weights(labels, "linear"),
    "McRank, F(c) = c^2": proba @ relevance_weights(labels, "square"),
    "McRank, F(c) = 2^c - 1": proba @ relevance_weights(labels, "exp2"),
    "McRank, F fitted": proba @ fitted,
}
print(f"fitted F: {fitted}")
print(f"{'':24}  NDCG@10    MAP")
for name, scores in rankers.items():
    values = evaluate(["ndcg@10", "map"], test.y, scores, test.query_offsets)
    print(f"{name:24}  {values['ndcg@10']:.4f}  {values['map']:.4f}")

per_query = {name: evaluate("ndcg@10", test.y, scores, test.query_offsets, per_query=True)["ndcg@10"]
             for name, scores in rankers.items()}
gap = per_query["McRank, F(c) = c"] - per_query["regression (GBRT)"]  # (n_queries,) paired
print(f"McRank - GBRT, NDCG@10 per query: {gap.mean():+.4f} +- {gap.std(ddof=1) / np.sqrt(len(gap)):.4f} "
      f"(mean +- standard error, {len(gap)} queries)")
# --8<-- [end:table]

# --8<-- [start:twins]
import tempfile
from pathlib import Path

from twinrank.reference.rankers.classification import McRank as ReferenceMcRank

path = Path(tempfile.mkdtemp(prefix="twinrank-")) / "mcrank.json"
classification.save(path)                      # one JSON file: both classifiers and F
reference = ReferenceMcRank.load(path)         # the NumPy twin scores the fast model
print(f"largest |fast - reference| expected relevance: "
      f"{abs(reference.predict(test) - expected).max():.1e}")
# --8<-- [end:twins]

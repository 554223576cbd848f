"""Transfer learning on MQ2008: Mohan's Ch. 5 in miniature.

Run it with ``python docs/tutorials/transfer.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:setup]
import numpy as np

from twinrank.fast import GBRT, McRank, evaluate, load_mq2008
from twinrank.fast.rankers.transfer import augment, domain_scores, model_features
from twinrank.reference.io.data import Dataset

train, valid, test = load_mq2008(fold=1)           # the target market is tested on `test`
rng = np.random.default_rng(0)
order = rng.permutation(train.n_queries)
target = train.take_queries(np.sort(order[:60]))    # a small market: 60 queries
clean = train.take_queries(np.sort(order[60:]))     # a large one: the other 411


def shifted(data, seed=1):
    """Half of the queries drift: features 1-23 compressed and moved, labels untouched."""
    drift = np.random.default_rng(seed).random(data.n_queries) < 0.5
    rows = np.repeat(drift, data.query_sizes)
    X = data.X.copy()
    X[rows, :23] = 0.5 * X[rows, :23] + 0.4
    return Dataset(X, data.y, data.query_offsets, qids=data.qids), rows


source, drifted = shifted(clean)
print(f"target {target.n_queries} queries, source {source.n_queries} queries "
      f"({drifted.mean():.0%} of its documents drifted)")


def ndcg(train_set, features=lambda d: d):
    """Test NDCG@10 of a GBRT trained on ``train_set`` (features mapped by ``features``)."""
    est = GBRT(n_trees=150, learning_rate=0.05, max_leaves=8, seed=0).fit(train_set)
    data = features(test)
    return evaluate("ndcg@10", data.y, est.predict(data), data.query_offsets)["ndcg@10"]
# --8<-- [end:setup]

# --8<-- [start:augment]
rows = []
for name, src in (("shifted source", source), ("unshifted source", clean)):
    p = domain_scores(src, target, lambda: McRank(n_trees=50, max_leaves=8), n_folds=5)
    if src is source:
        print(f"mean P(target | x): drifted documents {p[drifted].mean():.3f}, "
              f"others {p[~drifted].mean():.3f}")
    row = [name, ndcg(target)]
    for fraction in (0.1, 0.3, 1.0):
        row.append(ndcg(augment(target, src, fraction, scores=p)))
    rows.append(row)
print()
print("| source | target only | + top 10% | + top 30% | + all |")
print("|---|---|---|---|---|")
for name, *values in rows:
    print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in values) + " |")
# --8<-- [end:augment]

# --8<-- [start:features]
rows = []
for name, src in (("shifted source", source), ("unshifted source", clean)):
    h = McRank(n_trees=100, max_leaves=8).fit(src).model_  # the source model H
    row = [name, ndcg(target)]
    for kinds in (("Q",), ("Q", "P", "C")):
        add = lambda d, kinds=kinds: model_features(h, d, kinds)
        row.append(ndcg(add(target), add))
    rows.append(row)
print("| source | target only | + Q | + Q, P, C |")
print("|---|---|---|---|")
for name, *values in rows:
    print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in values) + " |")
# --8<-- [end:features]

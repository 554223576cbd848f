"""Missing values: the strategies of Mohan's thesis (Table 4.2) in miniature on MQ2008.

Run it with ``python docs/tutorials/missing.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:fills]
import numpy as np

from twinrank.fast.rankers.missing import fit_missing

X = np.array([[1.0, np.nan, 4.0],
              [np.nan, 2.0, 5.0],
              [3.0, 6.0, np.nan],
              [8.0, 7.0, 9.0]], dtype=np.float32)
for strategy in ["zero", "mean", "median"]:
    fitted = fit_missing(X, strategy)
    print(f"{strategy:6s} fill = {fitted.fill}  ->  row 1 becomes {fitted.transform(X)[1]}")
# --8<-- [end:fills]

# --8<-- [start:table]
import dataclasses
import time

from twinrank.fast.evaluation.metrics import evaluate
from twinrank.fast.rankers.gbrt import GBRT
from twinrank.reference.io.data import load_mq2008


def blanked(data, rate, seed):
    """``data`` with a fraction ``rate`` of its feature values set to NaN, at random."""
    X = data.X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return dataclasses.replace(data, X=X)


train, valid, test = load_mq2008(fold=1)
train_10, test_10 = blanked(train, 0.1, seed=1), blanked(test, 0.1, seed=2)
rows = []
for strategy in ["learn", "zero", "one", "mean", "median", "iterative"]:
    start = time.perf_counter()
    gbrt = GBRT(n_trees=100, learning_rate=0.1, max_leaves=15, min_samples_leaf=20,
                missing=strategy).fit(train_10)
    seconds = time.perf_counter() - start
    ndcg = evaluate(["ndcg@10", "map"], test_10.y, gbrt.predict(test_10), test_10.query_offsets)
    rows.append((strategy, ndcg["ndcg@10"], ndcg["map"], f"{seconds:.1f} s"))
full = GBRT(n_trees=100, learning_rate=0.1, max_leaves=15, min_samples_leaf=20).fit(train)
ndcg = evaluate(["ndcg@10", "map"], test.y, full.predict(test), test.query_offsets)
rows.append(("no blanks (reference point)", ndcg["ndcg@10"], ndcg["map"], ""))
print(markdown_table(["missing", "test NDCG@10", "test MAP", "fit"], rows))
# --8<-- [end:table]

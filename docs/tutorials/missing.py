"""Missing values: the strategies of Mohan's thesis (Sec. 2.2, Table 2.1) in miniature on MQ2008.

Run it with ``python docs/tutorials/missing.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
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

BLANKED = slice(1, None, 2)  # every other feature (23 of 46) has blanks; the other 23 are complete


def blanked(data, rate, seed):
    """``data`` with a fraction ``rate`` of the values of the ``BLANKED`` features set to NaN, at random."""
    X = data.X.copy()
    part = X[:, BLANKED]
    part[np.random.default_rng(seed).random(part.shape) < rate] = np.nan
    X[:, BLANKED] = part
    return dataclasses.replace(data, X=X)


def gbrt(strategy):
    """The table's GBRT (100 trees of at most 15 leaves) with missing-value strategy ``strategy``."""
    return GBRT(n_trees=100, learning_rate=0.1, max_leaves=15, min_samples_leaf=20, missing=strategy)


train, valid, test = load_mq2008(fold=1)
train_blank, test_blank = blanked(train, 0.3, seed=1), blanked(test, 0.3, seed=2)
gbrt("iterative").fit(test_blank)  # the first fit compiles the kernels: the times below are fits
rows = []
for strategy in ["learn", "separate", "zero", "one", "mean", "median", "iterative"]:
    start = time.perf_counter()
    model = gbrt(strategy).fit(train_blank)
    seconds = time.perf_counter() - start
    scores = evaluate(["ndcg@10", "map"], test_blank.y, model.predict(test_blank), test_blank.query_offsets)
    rows.append((strategy, scores["ndcg@10"], scores["map"], f"{seconds:.1f} s"))
full = gbrt("learn").fit(train)
scores = evaluate(["ndcg@10", "map"], test.y, full.predict(test), test.query_offsets)
rows.append(("no blanks (reference point)", scores["ndcg@10"], scores["map"], ""))
print(markdown_table(["missing", "test NDCG@10", "test MAP", "fit"], rows))
# --8<-- [end:table]

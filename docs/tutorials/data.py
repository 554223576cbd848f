"""Data: the Dataset, the LETOR format, the errors of bad files, folds and subsamples.

Run it with ``python docs/tutorials/data.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:setup]
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np

previous_directory = os.getcwd()
os.chdir(tempfile.mkdtemp(prefix="twinrank-"))   # work in a scratch folder
# --8<-- [end:setup]

# --8<-- [start:load]
from twinrank.reference.io.data import load_mq2008

train, valid, test = load_mq2008(fold=1)
print(f"X {train.X.shape} {train.X.dtype}, y {train.y.shape} {train.y.dtype}")
print(f"{train.n_queries} queries; query_offsets {train.query_offsets[:4]} ...")
start, stop = train.query_offsets[0], train.query_offsets[1]
print(f"query 0 has id {train.qids[0]} and rows {start}:{stop}")
print(f"labels of query 0: {train.y[start:stop]}")
print(f"comment of row 0: {train.comments[0]!r}")
# --8<-- [end:load]

# --8<-- [start:sizes]
sizes = np.concatenate([d.query_sizes for d in (train, valid, test)])  # all
fig, ax = plt.subplots(figsize=(7, 2.8))
ax.hist(sizes, bins=np.arange(0, sizes.max() + 5, 4), color="tab:blue")
ax.axvline(10, color="tab:red", linestyle="--", label="10 documents")
ax.set_xlabel("documents per query")
ax.set_ylabel("queries")
ax.set_title(f"MQ2008: {len(sizes)} queries, {(sizes < 10).sum()} with fewer "
             "than 10 documents", fontsize="medium")
ax.legend(frameon=False)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:sizes]

# --8<-- [start:letor]
from twinrank.reference.io.letor import read_letor, write_letor

text = """\
# a comment line: skipped
2 qid:7 1:0.5 2:NULL 4:1.25 # docid = a
0 qid:7 1:0.1 3:0.2         # docid = b
1 qid:9 2:0.75 4:-1         # docid = c
"""
with open("tiny.txt", "w") as f:
    f.write(text)
tiny = read_letor("tiny.txt")
print(tiny.X)                      # absent features are 0.0, NULL is NaN
print(tiny.y, tiny.query_offsets, tiny.qids, tiny.comments)
# --8<-- [end:letor]

# --8<-- [start:roundtrip]
import gzip

write_letor(tiny, "copy.txt.gz", sparse=True)  # .gz: gzip
with gzip.open("copy.txt.gz", "rt") as f:
    print(f.read(), end="")
again = read_letor("copy.txt.gz", n_features=tiny.n_features)
print("same data back:", np.array_equal(again.X, tiny.X, equal_nan=True),
      np.array_equal(again.y, tiny.y),
      np.array_equal(again.query_offsets, tiny.query_offsets))
# --8<-- [end:roundtrip]

# --8<-- [start:errors]
from twinrank.reference.errors import DataFormatError

bad_files = {
    "label.txt": "2 qid:1 1:0.5\nhigh qid:1 1:0.2\n",
    "token.txt": "2 qid:1 1:0.5 2=0.7\n",
    "order.txt": "1 qid:1 1:0.5 3:0.1 2:0.4\n",
    "qid.txt": "1 qid:1 1:0.5\n0 qid:2 1:0.1\n1 qid:1 1:0.9\n",
    "inf.txt": "1 qid:1 1:0.5\n0 qid:1 1:1e999\n",
    "empty.txt": "# nothing but a comment\n",
}
for name, content in bad_files.items():
    with open(name, "w") as f:
        f.write(content)
    try:
        read_letor(name)
    except DataFormatError as error:
        print(f"{error}\n    line={error.line} token={error.token!r}\n")
# --8<-- [end:errors]

# --8<-- [start:width]
try:
    read_letor("tiny.txt", n_features=3)  # the training data's width
except DataFormatError as error:
    print(error)
# --8<-- [end:width]

# --8<-- [start:arrays]
from twinrank.reference.io.data import Dataset

X = np.array([[0.1, 1.0], [0.4, np.nan], [0.3, 2.0], [0.9, 0.5]])
y = np.array([1, 0, 2, 0])
qid = np.array([10, 10, 20, 20])           # the rows of a query are contiguous
ds = Dataset.from_qid(X, y, qid)
print(ds.query_offsets, ds.qids, ds.query_sizes)
# --8<-- [end:arrays]

# --8<-- [start:folds]
from twinrank.reference.io.data import query_folds, subsample_queries

folds = query_folds(train.n_queries, n_folds=3, seed=0)
for k, (train_q, test_q) in enumerate(folds):
    print(f"fold {k}: train on {len(train_q)} queries, "
          f"test on {len(test_q)}: {test_q[:5]} ...")
cv_train = train.take_queries(train_q)   # whole queries, in file order
half = subsample_queries(train, 0.5, seed=0)
print(f"{cv_train.n_queries} and {half.n_queries} of {train.n_queries} queries")
# --8<-- [end:folds]

# --8<-- [start:teardown]
os.chdir(previous_directory)
# --8<-- [end:teardown]

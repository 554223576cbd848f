"""Metrics tutorial: one worked query under every convention, then MQ2008's NDCG@10 across tools.

Run it with ``python docs/tutorials/metrics.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:helpers]
def markdown_table(header, rows, digits=4):
    """A Markdown table (the docs render it); floats rounded to ``digits``."""
    cell = lambda v: f"{v:.{digits}f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
# --8<-- [end:helpers]


# --8<-- [start:query]
import numpy as np

from twinrank.reference import metrics

y = np.array([0, 2, 1, 0, 1, 0, 0])                        # labels (grades 0, 1, 2)
scores = np.array([0.9, 0.7, 0.7, 0.4, 0.2, 0.1, 0.0])    # d2 and d3 are tied
doc_ids = np.array(["d1", "d2", "d3", "d4", "d5", "d6", "d7"])
query_offsets = np.array([0, 7])                          # one query of 7 documents
# --8<-- [end:query]

# --8<-- [start:ranking]
doc_rank = np.unique(doc_ids, return_inverse=True)[1]     # position of each id in string order
rankings = {"stable (input order)": np.argsort(-scores, kind="stable"),
            "trec (doc id, descending)": np.lexsort((-doc_rank, -scores))}
for rule, order in rankings.items():
    print(f"{rule:>26}: {' '.join(doc_ids[order])}   labels {y[order]}")
# --8<-- [end:ranking]

# --8<-- [start:knobs]
import dataclasses

knobs = [f.name for f in dataclasses.fields(metrics.Convention)]
print(markdown_table(["knob", *metrics.CONVENTIONS],
                     [[k, *(getattr(c, k) for c in metrics.CONVENTIONS.values())] for k in knobs]))
# --8<-- [end:knobs]

# --8<-- [start:conventions]
names = ["ndcg@3", "ndcg@10", "dcg@3", "meanndcg", "map", "p@3", "p@10", "err@3", "rr", "auc"]
presets = ["lightgbm", "ranklib", "letor", "trec"]
values = {c: metrics.evaluate(names, y, scores, query_offsets, convention=c, doc_ids=doc_ids)
          for c in presets}
print(markdown_table(["metric", *presets], [[m, *(values[c][m] for c in presets)] for m in names]))
# --8<-- [end:conventions]

# --8<-- [start:by_hand]
# lightgbm: ranked labels 0, 2, 1 | 0, 1, 0, 0; gain 2^l - 1; discount 1 / log2(1 + r)
by_hand = {"lightgbm": ((2**0 - 1) / np.log2(2) + (2**2 - 1) / np.log2(3) + (2**1 - 1) / np.log2(4))
                       / ((2**2 - 1) / np.log2(2) + (2**1 - 1) / np.log2(3) + (2**1 - 1) / np.log2(4))}
# letor: same ranking; gain table {0: 0, 1: 1, 2: 3}; discount 1 for r <= 2, then 1 / log2(r)
by_hand["letor"] = (0 / 1 + 3 / 1 + 1 / np.log2(3)) / (3 / 1 + 1 / 1 + 1 / np.log2(3))
# trec: d3 before d2 (tie broken by doc id, descending), ranked labels 0, 1, 2; gain l
by_hand["trec"] = (0 / np.log2(2) + 1 / np.log2(3) + 2 / np.log2(4)) / (2 / np.log2(2) + 1 / np.log2(3) + 1 / np.log2(4))
for c, value in by_hand.items():
    print(f"{c:>8}: NDCG@3 by hand {value:.6f}, by twinrank {values[c]['ndcg@3']:.6f}")
    assert np.isclose(value, values[c]["ndcg@3"], rtol=1e-12), c
# --8<-- [end:by_hand]

# --8<-- [start:mq2008]
from twinrank.reference.data import Dataset, load_mq2008

parts = load_mq2008(fold=1)          # train S1-S3, vali S4, test S5: together all of MQ2008
mq = Dataset(np.vstack([p.X for p in parts]), np.concatenate([p.y for p in parts]),
             np.r_[0, np.cumsum(np.concatenate([p.query_sizes for p in parts]))],
             comments=np.concatenate([p.comments for p in parts]))
doc_ids = metrics.doc_ids_from_comments(mq.comments)   # "docid = GX..." (trec's tie rule)

sizes = mq.query_sizes
n_relevant = np.bincount(mq.qid, weights=mq.y > 0, minlength=mq.n_queries)
short, unjudged = sizes < 10, n_relevant == 0
print(f"{mq.n_queries} queries, {mq.n_rows} documents")
print(f"{short.sum()} queries have fewer than 10 documents")
print(f"{unjudged.sum()} queries have no relevant document ({(short & unjudged).sum()} of them are short too)")
# --8<-- [end:mq2008]

# --8<-- [start:one_feature]
# The simple ranker: score every document by one feature, the single best one under NDCG@10.
by_feature = [metrics.evaluate("ndcg@10", mq.y, mq.X[:, f], mq.query_offsets)["ndcg@10"]
              for f in range(mq.n_features)]
best = int(np.argmax(by_feature))
ranker_scores = mq.X[:, best]
ndcg10 = {c: metrics.ndcg(mq.y, ranker_scores, mq.query_offsets, k=10, convention=c, doc_ids=doc_ids)
          for c in presets}    # one value per query
print(f"ranker: feature {best + 1} (1-based, as in the file)\n")
print(markdown_table(["convention", "mean NDCG@10", "ratio to letor"],
                     [[c, ndcg10[c].mean(), ndcg10[c].mean() / ndcg10["letor"].mean()] for c in presets]))
# --8<-- [end:one_feature]

# --8<-- [start:decomposition]
groups = {"10+ documents, some relevant": ~short & ~unjudged,
          "< 10 documents, some relevant": short & ~unjudged,
          "no relevant document": unjudged}
# Each group's share of the mean: sum of its queries' NDCG@10 / number of all queries.
share = {c: {g: ndcg10[c][mask].sum() / mq.n_queries for g, mask in groups.items()} for c in presets}
print(markdown_table(["convention", *groups, "mean"],
                     [[c, *share[c].values(), ndcg10[c].mean()] for c in presets]))
# --8<-- [end:decomposition]

# --8<-- [start:plot]
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3.2))
bottom = np.zeros(len(presets))
for g in groups:
    heights = np.array([share[c][g] for c in presets])
    ax.barh(presets, heights, left=bottom, label=g)
    bottom += heights
ax.invert_yaxis()
ax.set_xlabel(f"mean NDCG@10 over MQ2008's {mq.n_queries} queries (ranker: feature {best + 1})")
ax.legend(loc="lower right", fontsize="small", frameon=False)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:plot]

# --8<-- [start:fast]
from twinrank.fast import metrics as fast_metrics

for c in presets:
    fast = fast_metrics.ndcg(mq.y, ranker_scores, mq.query_offsets, k=10, convention=c, doc_ids=doc_ids)
    print(f"{c:>8}: largest |fast - reference| over {mq.n_queries} queries = {np.abs(fast - ndcg10[c]).max():.1e}")
# --8<-- [end:fast]

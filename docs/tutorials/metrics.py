"""Metrics tutorial: one query under every convention, then MQ2008's NDCG@10 across tools.

Run it with ``python docs/tutorials/metrics.py``; the documentation build runs it
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


# --8<-- [start:query]
import numpy as np

from twinrank.reference.evaluation import metrics

y = np.array([0, 2, 1, 0, 1, 0, 0])                       # grades 0, 1, 2
scores = np.array([0.9, 0.7, 0.7, 0.4, 0.2, 0.1, 0.0])   # d2 and d3 tie
doc_ids = np.array(["d1", "d2", "d3", "d4", "d5", "d6", "d7"])
query_offsets = np.array([0, 7])                         # one query
# --8<-- [end:query]

# --8<-- [start:ranking]
doc_rank = np.unique(doc_ids, return_inverse=True)[1]    # string order
rankings = {
    "stable (input order)": np.argsort(-scores, kind="stable"),
    "trec (doc id, descending)": np.lexsort((-doc_rank, -scores)),
}
for rule, order in rankings.items():
    print(f"{rule:>26}: {' '.join(doc_ids[order])}   labels {y[order]}")
# --8<-- [end:ranking]

# --8<-- [start:knobs]
import dataclasses

knobs = [f.name for f in dataclasses.fields(metrics.Convention)]
conventions = metrics.CONVENTIONS              # name -> Convention
print(markdown_table(
    ["knob", *conventions],
    [[k, *(getattr(c, k) for c in conventions.values())] for k in knobs]))
# --8<-- [end:knobs]

# --8<-- [start:conventions]
names = ["ndcg@3", "ndcg@10", "dcg@3", "meanndcg", "map",
         "p@3", "p@10", "err@3", "rr", "auc"]
presets = ["lightgbm", "ranklib", "letor", "trec"]
values = {c: metrics.evaluate(names, y, scores, query_offsets,
                              convention=c, doc_ids=doc_ids)
          for c in presets}
print(markdown_table(["metric", *presets],
                     [[m, *(values[c][m] for c in presets)] for m in names]))
# --8<-- [end:conventions]

# --8<-- [start:by_hand]
log2 = np.log2
# lightgbm: ranked labels 0, 2, 1 | ...; gain 2^l - 1; discount 1 / log2(1 + r)
dcg = (2**0 - 1) / log2(2) + (2**2 - 1) / log2(3) + (2**1 - 1) / log2(4)
ideal = (2**2 - 1) / log2(2) + (2**1 - 1) / log2(3) + (2**1 - 1) / log2(4)
by_hand = {"lightgbm": dcg / ideal}
# letor: gains {0: 0, 1: 1, 2: 3}; discount 1 for r <= 2, then 1 / log2(r)
by_hand["letor"] = (0 / 1 + 3 / 1 + 1 / log2(3)) / (3 / 1 + 1 / 1 + 1 / log2(3))
# trec: the tie goes to d3 (larger doc id): ranked labels 0, 1, 2; gain l
dcg = 0 / log2(2) + 1 / log2(3) + 2 / log2(4)
ideal = 2 / log2(2) + 1 / log2(3) + 1 / log2(4)
by_hand["trec"] = dcg / ideal
for c, value in by_hand.items():
    library = values[c]["ndcg@3"]
    print(f"{c:>8}: NDCG@3 by hand {value:.6f}, by twinrank {library:.6f}")
    assert np.isclose(value, library, rtol=1e-12), c
# --8<-- [end:by_hand]

# --8<-- [start:mq2008]
from twinrank.reference.io.data import Dataset, load_mq2008

parts = load_mq2008(fold=1)      # S1-S3, S4, S5: together all of MQ2008
mq = Dataset(np.vstack([p.X for p in parts]),
             np.concatenate([p.y for p in parts]),
             np.cumsum([0, *np.concatenate([p.query_sizes for p in parts])]),
             comments=np.concatenate([p.comments for p in parts]))
doc_ids = metrics.doc_ids_from_comments(mq.comments)  # "docid = GX..."

sizes = mq.query_sizes
n_relevant = np.bincount(mq.qid, weights=mq.y > 0, minlength=mq.n_queries)
short, unjudged = sizes < 10, n_relevant == 0
print(f"{mq.n_queries} queries, {mq.n_rows} documents")
print(f"{short.sum()} queries have fewer than 10 documents")
print(f"{unjudged.sum()} queries have no relevant document "
      f"({(short & unjudged).sum()} of them are short too)")
# --8<-- [end:mq2008]

# --8<-- [start:one_feature]
# The ranker: score documents by one feature, the best one under NDCG@10.
by_feature = [metrics.evaluate("ndcg@10", mq.y, mq.X[:, f],
                               mq.query_offsets)["ndcg@10"]
              for f in range(mq.n_features)]
best = int(np.argmax(by_feature))
ranker_scores = mq.X[:, best]
ndcg10 = {c: metrics.ndcg(mq.y, ranker_scores, mq.query_offsets, k=10,
                          convention=c, doc_ids=doc_ids)     # one per query
          for c in presets}
mean = {c: ndcg10[c].mean() for c in presets}
print(f"ranker: feature {best + 1} (1-based, as in the file)\n")
print(markdown_table(["convention", "mean NDCG@10", "ratio to letor"],
                     [[c, mean[c], mean[c] / mean["letor"]] for c in presets]))
# --8<-- [end:one_feature]

# --8<-- [start:decomposition]
groups = {"10+ documents, some relevant": ~short & ~unjudged,
          "< 10 documents, some relevant": short & ~unjudged,
          "no relevant document": unjudged}
# A group's share: the sum of its queries' NDCG@10 / the number of queries.
share = {c: {g: ndcg10[c][mask].sum() / mq.n_queries
             for g, mask in groups.items()}
         for c in presets}
print(markdown_table(["convention", *groups, "mean"],
                     [[c, *share[c].values(), mean[c]] for c in presets]))
# --8<-- [end:decomposition]

# --8<-- [start:plot]
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3.4))
left = np.zeros(len(presets))
for g in groups:
    widths = np.array([share[c][g] for c in presets])
    ax.barh(presets, widths, left=left, label=g)
    left += widths
ax.invert_yaxis()
ax.set_xlabel(f"mean NDCG@10 over MQ2008's {mq.n_queries} queries "
              f"(ranker: feature {best + 1})")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3,
          fontsize="small", frameon=False)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:plot]

# --8<-- [start:by_k]
import dataclasses

# LETOR's rules, but NDCG@k of a short query cut at its n documents
letor_cut = dataclasses.replace(metrics.CONVENTIONS["letor"], ndcg_k_beyond_n="cut")
curves = {c: metrics.CONVENTIONS[c] for c in ("lightgbm", "ranklib", "letor")}
curves["letor, cut at n"] = letor_cut
ks = range(1, 21)
at_k = {name: [metrics.evaluate(f"ndcg@{k}", mq.y, ranker_scores, mq.query_offsets,
                                convention=c)[f"ndcg@{k}"] for k in ks]
        for name, c in curves.items()}
print(f"queries with fewer than 5 documents: {(sizes < 5).sum()}, "
      f"fewer than 10: {(sizes < 10).sum()} of {mq.n_queries}\n")
print(markdown_table(["convention", "mean NDCG@5", "mean NDCG@10"],
                     [[name, v[4], v[9]] for name, v in at_k.items()]))

fig, ax = plt.subplots(figsize=(7, 3.2))
for name, values in at_k.items():
    ax.plot(ks, values, marker="o", markersize=3, label=name,
            linestyle="--" if "cut" in name else "-")
ax.set_xlabel("k")
ax.set_ylabel("mean NDCG@k")
ax.set_xticks([1, 5, 10, 15, 20])
ax2 = ax.twinx()  # how many queries are shorter than k: letor scores them 0
ax2.fill_between(ks, [(sizes < k).mean() for k in ks], step="mid", alpha=0.12, color="gray")
ax2.set_ylabel("share of queries with < k docs", color="gray")
ax2.set_ylim(0, 1)
ax.legend(fontsize="small", frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4)
ax.spines[["top"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:by_k]

# --8<-- [start:refused]
import textwrap

from twinrank.reference.errors import ParameterError

grades = np.array([4, 3, 0, 1])                      # MSLR-WEB's grades 0-4
orders = {"4, 3, 0, 1": np.array([4.0, 3.0, 2.0, 1.0]),   # the two best on top
          "1, 0, 3, 4": np.array([1.0, 2.0, 3.0, 4.0])}   # reversed
one_query = np.array([0, 4])
try:
    metrics.ndcg(grades, orders["4, 3, 0, 1"], one_query, convention="letor")
except ParameterError as refused:
    print(textwrap.fill(str(refused), 88, break_on_hyphens=False))
# --8<-- [end:refused]

# --8<-- [start:tables]
read_as_0 = np.where(grades > 2, 0, grades)   # what Eval-Score-4.0.pl does, silently
rows = [["letor, grades 3 and 4 read as 0",
         *(metrics.ndcg(read_as_0, s, one_query, convention="letor")[0] for s in orders.values())]]
rows += [[c, *(metrics.ndcg(grades, s, one_query, convention=c)[0] for s in orders.values())]
         for c in ("mslr", "lightgbm")]
print(markdown_table(["NDCG of the ranking", *orders], rows))
# --8<-- [end:tables]

# --8<-- [start:pooled]
shown = ["auc", "global_auc", "pauc", "global_pauc_raw", "ndcg@10"]
pooled = {c: metrics.evaluate(shown, mq.y, ranker_scores, mq.query_offsets, convention=c)
          for c in ("lightgbm", "ranklib", "mohan")}
print(markdown_table(["metric", *pooled],
                     [[m, *(pooled[c][m] for c in pooled)] for m in shown]))
# --8<-- [end:pooled]

# --8<-- [start:fast]
from twinrank.fast.evaluation import metrics as fast_metrics

for c in presets:
    fast = fast_metrics.ndcg(mq.y, ranker_scores, mq.query_offsets, k=10,
                             convention=c, doc_ids=doc_ids)
    difference = np.abs(fast - ndcg10[c]).max()
    print(f"{c:>8}: largest |fast - reference| over {mq.n_queries} queries"
          f" = {difference:.1e}")
# --8<-- [end:fast]

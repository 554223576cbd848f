"""Reproducing papers: single-label queries, LETOR's query-level normalisation, rank correlations.

Run it with ``python docs/tutorials/reproducing.py`` from the repository root; the
documentation build runs it section by section (the ``--8<--`` markers), in a few seconds.
"""
# --8<-- [start:drop]
import numpy as np

from twinrank.fast import LambdaMART, drop_single_label_queries, evaluate, load_mq2008

train, valid, test = load_mq2008(fold=1)
kept = drop_single_label_queries(test)
print(f"MQ2008 Fold1 test: {test.n_queries} queries, {kept.n_queries} keep two labels or more "
      f"({test.n_queries - kept.n_queries} dropped, {test.n_rows - kept.n_rows} of {test.n_rows} rows)")

ranker = LambdaMART(n_trees=50, max_leaves=15, learning_rate=0.1).fit(train)
for name, data in (("every query", test), ("single-label dropped", kept)):
    for convention in ("lightgbm", "ranklib"):
        ndcg = evaluate("ndcg@10", data.y, ranker.predict(data), data.query_offsets, convention=convention)
        print(f"{name:<21} {convention:<8} NDCG@10 {ndcg['ndcg@10']:.4f}")
# --8<-- [end:drop]

# --8<-- [start:normalize]
from twinrank.fast import query_level_normalize

X = np.array([[3.0, 10.0, np.nan],   # query 0: three documents
              [5.0, 10.0, 2.0],
              [4.0, 10.0, 6.0],
              [7.0, 1.0, 2.0]])      # query 1: one document
print(query_level_normalize(X, [0, 3, 4]))

again = query_level_normalize(train.X, train.query_offsets)  # MQ2008 is LETOR's QueryLevelNorm version
print("MQ2008 normalised again, largest change:", np.max(np.abs(again - train.X)))
# --8<-- [end:normalize]

# --8<-- [start:correlations]
from twinrank.fast import RandomForest, footrule, kendall_tau, spearman_rho

forest = RandomForest(n_trees=50, max_leaves=15, seed=0).fit(train)
a, b = ranker.predict(test), forest.predict(test)  # two rankers' scores of the same documents
for name, coefficient in (("Kendall tau-b", kendall_tau), ("Spearman rho", spearman_rho),
                          ("footrule", footrule)):
    per_query = coefficient(a, b, test.query_offsets)  # (n_queries,), NaN below two documents
    print(f"{name:<14} mean over queries {np.nanmean(per_query):.4f}, "
          f"range [{np.nanmin(per_query):.3f}, {np.nanmax(per_query):.3f}]")
# --8<-- [end:correlations]

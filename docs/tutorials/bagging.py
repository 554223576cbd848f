"""BL-MART: the combination rules on one query, and the paper in miniature on the bundled MQ2008.

Run it with ``python docs/tutorials/bagging.py`` from the repository root; the documentation
build runs it section by section (the ``--8<--`` markers), in about a minute and a half.
"""
# --8<-- [start:rules]
import numpy as np

from twinrank.fast.bag_rules import combine_scores

# three members score one query of four documents; member 2 is constant there
scores = np.array([[2.0, 1.0, 0.5, 0.5],
                   [40.0, 10.0, 30.0, 20.0],
                   [7.0, 7.0, 7.0, 7.0]])
offsets = np.array([0, 4])
for rule in ("minmax", "mean", "borda"):
    print(f"{rule:>6}: {np.round(combine_scores(scores, offsets, rule), 4)}")
# --8<-- [end:rules]

# --8<-- [start:folds]
import matplotlib.pyplot as plt

from twinrank.fast import LambdaMART, evaluate, load_mq2008
from twinrank.fast.bagging import BLMART
from twinrank.fast.stats import randomization_test

MEMBER = dict(n_trees=100, learning_rate=0.1, max_leaves=31, seed=0)  # LambdaMART's defaults
print("fold  LambdaMART NDCG@10 / MAP   BL-MART (B=10) NDCG@10 / MAP")
per_query = {"lambdamart": [], "bl-mart": []}
for fold in range(1, 6):
    train, valid, test = load_mq2008(fold)
    row = []
    for name, est in (("lambdamart", LambdaMART(**MEMBER)), ("bl-mart", BLMART(n_models=10, **MEMBER))):
        scores = est.fit(train, eval_set=[valid]).predict(test)
        values = evaluate(["ndcg@10", "map"], test.y, scores, test.query_offsets, convention="letor",
                          per_query=True)
        per_query[name].append(values["ndcg@10"])
        row.append(f"{values['ndcg@10'].mean():.4f} / {values['map'].mean():.4f}")
    print(f"{fold:>4}  {row[0]:>26}   {row[1]:>26}")
a, b = (np.concatenate(per_query[k]) for k in ("bl-mart", "lambdamart"))
print(f"all {len(a)} test queries: NDCG@10 {a.mean():.4f} vs {b.mean():.4f}; "
      f"randomization test p = {randomization_test(a, b, seed=0):.3f}")
# --8<-- [end:folds]

# --8<-- [start:variance]
train, valid, test = load_mq2008(1)
samples = 10  # as the paper: 10 samples of 67% of the training queries
rng = np.random.default_rng(0)
results = {"LambdaMART": [], "BL-MART (B=10)": []}
for t in range(samples):
    queries = np.sort(rng.choice(train.n_queries, int(0.67 * train.n_queries), replace=False))
    sample = train.take_queries(queries)
    for name, est in (("LambdaMART", LambdaMART(**dict(MEMBER, seed=t))),
                      ("BL-MART (B=10)", BLMART(n_models=10, **dict(MEMBER, seed=t)))):
        scores = est.fit(sample, eval_set=[valid]).predict(test)
        values = evaluate(["ndcg@1", "ndcg@3", "ndcg@10", "map"], test.y, scores, test.query_offsets,
                          convention="letor")
        results[name].append([values[m] for m in ("ndcg@1", "ndcg@3", "ndcg@10", "map")])
single, bag = (np.array(results[k]) for k in results)
print("metric    LambdaMART mean (var)      BL-MART mean (var)      variance reduction")
for j, metric in enumerate(("NDCG@1", "NDCG@3", "NDCG@10", "MAP")):
    v1, v2 = single[:, j].var(ddof=1), bag[:, j].var(ddof=1)
    print(f"{metric:<8}  {single[:, j].mean():.4f} ({v1:.2e})     {bag[:, j].mean():.4f} ({v2:.2e})     "
          f"{100 * (1 - v2 / v1):5.1f}%")

fig, ax = plt.subplots(figsize=(6, 3))
ax.boxplot([single[:, 2], bag[:, 2]], tick_labels=list(results))
ax.set(ylabel="test NDCG@10 (LETOR)", title=f"{samples} samples of 67% of the training queries")
# --8<-- [end:variance]

"""BL-MART: the combination rules on one query, and the paper in miniature on the bundled MQ2008.

Run it with ``python docs/tutorials/bagging.py`` from the repository root; the documentation
build runs it section by section (the ``--8<--`` markers), in about a minute and a half.
"""
# --8<-- [start:rules]
import numpy as np

from twinrank.fast.combination.bag_rules import combine_scores

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
from twinrank.fast.evaluation.stats import randomization_test
from twinrank.fast.rankers.bagging import BLMART

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
from twinrank.reference.analysis.pools import variance_experiment

train, valid, test = load_mq2008(1)
table = variance_experiment({"LambdaMART": lambda seed: LambdaMART(**dict(MEMBER, seed=seed)),
                             "BL-MART (B=10)": lambda seed: BLMART(n_models=10, **dict(MEMBER, seed=seed))},
                            train, test, valid=valid, samples=10, fraction=0.67)
print(table.to_text())
# --8<-- [end:variance]

# --8<-- [start:pool]
from twinrank.reference.analysis.pools import ModelPool, bag_curve

pool_bag = BLMART(n_models=16, n_trees=300, max_leaves=15, query_subsample=0.7, feature_fraction=0.5,
                  overfit_tolerance=0.02, overfit_extra_trees=50, seed=0).fit(train, eval_set=[valid])
pool = ModelPool.from_bag(pool_bag, valid, test)
sizes = [1, 2, 4, 8, 12, 16]
fig, ax = plt.subplots(figsize=(6.5, 3.4))
for kind, style in (("overfitted", "-"), ("non-overfitted", "--")):
    for rule, colour in (("minmax", "tab:blue"), ("mean", "tab:green"), ("borda", "tab:red")):
        means, _ = bag_curve(pool, sizes, draws=30, metric="map", rule=rule, kind=kind)
        ax.plot(sizes, means, style, color=colour, marker=".", label=f"{rule}, {kind}")
ax.set(xlabel="bag size b", ylabel="validation MAP (LETOR)", title="bags drawn from a pool of 16 members")
ax.legend(fontsize=7, ncol=2)
# --8<-- [end:pool]

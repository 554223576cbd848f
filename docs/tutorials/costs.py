"""Feature costs and early exits on MQ2008: Mohan's Ch. 6 in miniature.

Run it with ``python docs/tutorials/costs.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:setup]
import numpy as np

from twinrank.fast import GBRT, RandomForest, evaluate, load_mq2008
from twinrank.fast.analysis.cost import EarlyExit, metric_cost_curve, model_cost

# five feature groups of growing cost, as in the thesis: MQ2008's 46 features in order
costs = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0], [10, 9, 9, 9, 9])
train, valid, test = load_mq2008(fold=1)
# --8<-- [end:setup]

# --8<-- [start:bar]
rows = []
for fold in (1, 2, 3, 4, 5):
    tr, _, te = load_mq2008(fold=fold)
    row = [fold]
    for cost_lambda in (0.0, 1.0):
        est = GBRT(n_trees=100, max_leaves=8, cost_lambda=cost_lambda, feature_costs=costs).fit(tr)
        ndcg = evaluate("ndcg@10", te.y, est.predict(te), te.query_offsets)["ndcg@10"]
        row += [ndcg, model_cost(est.model_, te, costs).mean_feature_cost]
    rows.append(row)
mean = np.mean(rows, axis=0)
print("| fold | NDCG@10, cost-blind | feature cost | NDCG@10, cost-aware | feature cost |")
print("|---|---|---|---|---|")
for fold, *values in rows + [["mean", *mean[1:]]]:
    print(f"| {fold} | {values[0]:.4f} | {values[1]:.1f} | {values[2]:.4f} | {values[3]:.1f} |")
print(f"\ncost-aware keeps {mean[3] / mean[1]:.1%} of the cost-blind NDCG@10 "
      f"at {mean[4] / mean[2]:.1%} of its mean feature cost")
# --8<-- [end:bar]

# --8<-- [start:curves]
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

models = {
    "GBRT": lambda lam: GBRT(n_trees=300, learning_rate=0.05, max_leaves=8, cost_lambda=lam,
                             feature_costs=costs),
    "RF": lambda lam: RandomForest(n_trees=100, max_leaves=64, min_samples_leaf=20,
                                   feature_fraction=0.3, cost_lambda=lam, feature_costs=costs),
}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
table = []
for name, make in models.items():
    for lam in (0.0, 1.0):
        model = make(lam).fit(train).model_
        for fraction in ((0.0, 0.1, 0.2) if name == "GBRT" else (0.0,)):
            exits = EarlyExit(every=50, fraction=fraction) if fraction else None
            curve = metric_cost_curve(model, test, costs, metric=["p@5", "auc"], exits=exits)
            label = f"{name} λ={lam:g}" + (f", exits {fraction:.0%}" if fraction else "")
            for ax, metric in zip(axes, ("p@5", "auc")):
                ax.plot(curve["cost"], curve[metric], label=label, lw=1.2)
            table.append([label, curve["p@5"][-1], curve["auc"][-1], curve["cost"][-1]])
for ax, metric in zip(axes, ("precision@5", "AUC")):
    ax.set_xscale("log")
    ax.set_xlabel("mean cost per document (trees + features)")
    ax.set_ylabel(metric)
axes[1].legend(fontsize=7)
fig.tight_layout()
print("| model | P@5 | AUC | mean cost |")
print("|---|---|---|---|")
for label, p5, auc, cost in table:
    print(f"| {label} | {p5:.4f} | {auc:.4f} | {cost:.1f} |")
# --8<-- [end:curves]

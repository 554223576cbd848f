"""Bias and variance of rankers, in miniature: RF-point's per-tree sub-sample p on MQ2008, both
sampling methods, and LambdaMART against RF-point (Ibrahim 2021, Figs. 5-7 and Table 5).

Run it with ``python docs/tutorials/bias_variance.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:kernels]
import numpy as np

from twinrank.reference.evaluation.variance import decompose

# three models scoring two queries of three documents (labels 2, 1, 0 and 0, 0, 1)
y = np.array([2.0, 1.0, 0.0, 0.0, 0.0, 1.0])
query_offsets = np.array([0, 3, 6])
P = np.array([[2.1, 0.9, 0.2, 0.5, 0.1, 0.6],    # model 1 ranks query 2 perfectly
              [1.0, 1.5, 0.1, 0.4, 0.3, 0.1],
              [1.8, 0.7, 0.9, 0.3, 0.6, 0.2]])
d = decompose(P, y, query_offsets, metric="ndcg")
for name, value in d.numbers().items():
    print(f"{name:>10}  {value:.6f}" if isinstance(value, float) else f"{name:>10}  {value}")
print("per query: SRE", d.sre_q.round(4), " VRE", d.vre_q.round(4), " signed VRE", d.vre_signed_q.round(4))
print("SRE + signed VRE - error =", d.sre + d.vre_signed - d.error)
# --8<-- [end:kernels]

# --8<-- [start:sweep]
import time

from twinrank.fast import LambdaMART, RandomForest
from twinrank.fast.analysis.diagnostics import bias_variance, sweep
from twinrank.reference.io.data import load_mq2008

train, _, test = load_mq2008(1)  # 471 training queries; 156 test queries, 51 without a relevant document
p_values = [0.05, 0.1, 0.2, 0.5, 1.0]
rf_point = {"n_trees": 50, "bootstrap": False}  # the paper: 500 trees; 50 keep this page's build short
curves = {}
for method in ("bootstrap", "twofold"):  # B = 10 samples of 63% of the queries; J = 5 halvings (10 models)
    start = time.perf_counter()
    curves[method] = sweep(RandomForest, train, test, "query_subsample", p_values, method=method,
                           n_models=10, n_repeats=5, fraction=0.63, params=rf_point, seed=0)
    print(f"{method}: {len(p_values)} values of p x 10 models in {time.perf_counter() - start:.0f} s")
# --8<-- [end:sweep]

# --8<-- [start:table]
print("| method | p | bias² | variance | MSE | SRE | VRE | signed VRE | error |")
print("|---|---|---|---|---|---|---|---|---|")
for method, results in curves.items():
    for p, r in zip(p_values, results):
        print(f"| {method} | {p} | {r.bias2:.5f} | {r.variance:.5f} | {r.mse:.5f} | {r.sre:.4f} | {r.vre:.4f} "
              f"| {r.vre_signed:.4f} | {r.error:.4f} |")
# --8<-- [end:table]

# --8<-- [start:figure]
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
for method, style in (("bootstrap", "-o"), ("twofold", "--s")):
    results = curves[method]
    axes[0].plot(p_values, [r.bias2 for r in results], style, label=method)
    axes[1].plot(p_values, [r.variance for r in results], style, label=method)
    axes[2].plot(p_values, [r.sre for r in results], style, label=f"SRE, {method}")
    axes[2].plot(p_values, [r.vre for r in results], style, label=f"VRE, {method}")
for ax, title in zip(axes, ("pointwise bias²", "pointwise variance", "listwise SRE and VRE")):
    ax.set_xscale("log")
    ax.set_xlabel("per-tree query sub-sample p")
    ax.set_title(title)
    ax.grid(alpha=0.3)
axes[0].legend()
axes[2].legend(fontsize=7)
fig.tight_layout()
# --8<-- [end:figure]

# --8<-- [start:compare]
start = time.perf_counter()
lambdamart = bias_variance(LambdaMART, train, test, method="twofold", n_repeats=5, seed=0,
                           params={"n_trees": 100, "learning_rate": 0.1, "max_leaves": 15})
forest = curves["twofold"][-1]  # RF-point, p = 1, the same halvings and model seeds
print(f"LambdaMART: 10 models in {time.perf_counter() - start:.0f} s\n")
print("| two-fold, J = 5 | SRE | VRE | signed VRE | mean ranking error |")
print("|---|---|---|---|---|")
for name, r in (("LambdaMART (100 trees, 15 leaves)", lambdamart), ("RF-point (50 trees, p = 1)", forest)):
    print(f"| {name} | {r.sre:.4f} | {r.vre:.4f} | {r.vre_signed:.4f} | {r.error:.4f} |")
# --8<-- [end:compare]

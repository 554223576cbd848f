"""Combining rankers exactly: the geometry, expected NDCG under ties, the paper in miniature on MQ2008.

Run it with ``python docs/tutorials/combining.py`` from the repository root; the
documentation build runs it section by section (the ``--8<--`` markers), in about a minute.
"""
# --8<-- [start:geometry]
import matplotlib.pyplot as plt
import numpy as np

from twinrank.fast import LambdaMART, RandomForest, evaluate, load_mq2008
from twinrank.fast.combination.combine import combined_scores, optimal_combination

train, valid, test = load_mq2008(fold=1)
forest = RandomForest(n_trees=50, max_leaves=16, seed=0).fit(train)  # ranker A
lambdamart = LambdaMART(n_trees=50, max_leaves=16).fit(train)  # ranker B
a, b = forest.predict(valid.X), lambdamart.predict(valid.X)  # (n_rows,) each

q = 3  # one validation query: its rows, labels and the two rankers' scores
lo, hi = valid.query_offsets[q], valid.query_offsets[q + 1]
one = optimal_combination(a[lo:hi], b[lo:hi], valid.y[lo:hi], np.array([0, hi - lo]), metric="ndcg@10",
                          return_path=True)
print(f"query {valid.qids[q]}: {hi - lo} documents, labels {np.bincount(valid.y[lo:hi].astype(int))} "
      f"(0, 1, 2), {len(one.path.breakpoints)} breakpoints where NDCG@10 changes; "
      f"best alpha {one.alpha:.4f}, NDCG@10 {one.value:.4f}")

alphas = np.linspace(0, 1, 201)
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
colours = {0: "0.75", 1: "tab:blue", 2: "tab:red"}
for i in range(lo, hi):
    left.plot(alphas, combined_scores(a[i], b[i], alphas), color=colours[int(valid.y[i])], lw=1)
for x in one.path.breakpoints:
    left.axvline(x, color="k", lw=0.3, alpha=0.3)
left.set(xlabel="alpha", ylabel="(1 - alpha) forest + alpha LambdaMART",
         title="score lines (grey 0, blue 1, red 2)")
edges = np.r_[0.0, one.path.breakpoints, 1.0]
right.stairs(one.path.values, edges, color="k")
right.plot(one.path.breakpoints, one.path.values_at_breakpoints, ".", color="tab:orange",
           label="at a crossing (tied: expected)")
right.axvline(one.alpha, color="tab:green", ls="--", label="chosen alpha")
right.set(xlabel="alpha", ylabel="NDCG@10", title="piecewise constant NDCG@10")
right.legend(fontsize=8)
fig.tight_layout()
# --8<-- [end:geometry]

# --8<-- [start:ties]
from twinrank.fast.evaluation.metrics import ndcg  # noqa: E402

y = np.array([2.0, 0.0, 0.0, 1.0])
tied = np.array([1.0, 1.0, 1.0, 0.0])  # the three first documents share one leaf
for ties in (None, "expected"):
    print(f"ties={ties!s:8}  NDCG@2 = {ndcg(y, tied, np.array([0, 4]), k=2, ties=ties)[0]:.4f}")
print(f"reversed input order, stable ties: NDCG@2 = "
      f"{ndcg(y[[2, 1, 0, 3]], tied, np.array([0, 4]), k=2)[0]:.4f}")
# --8<-- [end:ties]

# --8<-- [start:paper]
rows, curves = [], {}
for step in ("newton", "optimal"):
    for seed in (0, 1, 2):
        model = LambdaMART(n_trees=60, max_leaves=31, query_subsample=0.8, seed=seed, step=step,
                           eval_train=True).fit(train, eval_set=[valid])
        history = model.history_
        test_curve = [evaluate("ndcg@10", test.y, model.predict(test.X, n_trees=m), test.query_offsets)["ndcg@10"]
                      for m in range(1, model.model_.n_trees + 1)]
        curves[step, seed] = (history["train:ndcg@10"], history["valid:ndcg@10"], test_curve,
                              history.get("alpha"))
        best = int(np.argmax(history["valid:ndcg@10"]))
        rows.append((step, seed, best + 1, history["valid:ndcg@10"][best], test_curve[best]))

newton_best = {s: max(curves["newton", s][1]) for s in (0, 1, 2)}
print("| step | seed | trees at best valid | valid NDCG@10 | test NDCG@10 there | OC reaches Newton's best - 0.002 at |")
print("|---|---:|---:|---:|---:|---:|")
for step, seed, at, v, t in rows:
    reach = np.flatnonzero(np.array(curves["optimal", seed][1]) >= newton_best[seed] - 0.002)
    reached = (reach[0] + 1) if (step == "optimal" and len(reach)) else ("never" if step == "optimal" else "")
    print(f"| {step} | {seed} | {at} | {v:.4f} | {t:.4f} | {reached} |")

fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
for (step, seed), (tr, va, te, alpha) in curves.items():
    colour = "tab:blue" if step == "newton" else "tab:red"
    label = step if seed == 0 else None
    for ax, curve in zip(axes[:3], (tr, va, te)):
        ax.plot(np.arange(1, len(curve) + 1), curve, color=colour, lw=1, label=label)
    if alpha is not None:
        axes[3].plot(np.arange(1, len(alpha) + 1), alpha, color=colour, lw=1)
for ax, title in zip(axes, ("train NDCG@10", "validation NDCG@10", "test NDCG@10", "OC's alpha per tree")):
    ax.set(title=title, xlabel="trees")
axes[0].legend()
fig.tight_layout()
# --8<-- [end:paper]

# --8<-- [start:mix]
mix = optimal_combination(a, b, valid.y, valid.query_offsets, metric="ndcg@10")
a_test, b_test = forest.predict(test.X), lambdamart.predict(test.X)
for name, scores in (("random forest", a_test), ("LambdaMART", b_test),
                     (f"(1 - {mix.alpha:.3f}) forest + {mix.alpha:.3f} LambdaMART",
                      combined_scores(a_test, b_test, mix.alpha))):
    print(f"{name:45} test NDCG@10 {evaluate('ndcg@10', test.y, scores, test.query_offsets)['ndcg@10']:.4f}")
print(f"(alpha chosen on validation, where the mix scores {mix.value:.4f} in expectation over ties)")
# --8<-- [end:mix]

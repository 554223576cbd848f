"""Experiments at scale, in miniature: a BL-MART-style grid on MQ2008, significance, staged curves.

Run it with ``python docs/tutorials/experiments.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:grid]
import time

from twinrank.fast import LambdaMART
from twinrank.reference.analysis.grid import grid_search
from twinrank.reference.ensembles.runs import Fold
from twinrank.reference.io.data import load_mq2008

folds = [Fold(f"Fold{k}", *load_mq2008(k)) for k in range(1, 6)]   # train, vali, test
param_grid = {"max_leaves": [4, 8, 16], "learning_rate": [0.05, 0.2],
              "feature_fraction": [0.3, 0.7], "min_samples_leaf": [10, 50]}
start = time.perf_counter()
result = grid_search(LambdaMART, folds, param_grid, n_seeds=2, metric="ndcg@10", convention="letor",
                     fixed={"n_trees": 100, "early_stopping_rounds": 10}, seed=0,
                     keep_scores=True)  # in this process; executor=ProcessPool(2) for two processes
table = result.results
print(f"{len(result.configs)} configurations x {len(folds)} folds x 2 seeds = {len(table.rows)} runs "
      f"in {time.perf_counter() - start:.0f} s; {len(table.failed)} failed")
print(table.to_csv().splitlines()[0])
print(table.to_csv().splitlines()[1])
# --8<-- [end:grid]

# --8<-- [start:top]
def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


summary = result.summary()
names = list(param_grid)
print(markdown_table(["rank", *names, "valid NDCG@10", "(std)", "test NDCG@10", "trees"],
                     [[s["rank"], *(s[n] for n in names), f"{s['valid']:.4f}", f"{s['valid_std']:.4f}",
                       f"{s['test']:.4f}", f"{s['n_trees']:.0f}"] for s in summary[:8]]))
print()
print(f"... and the last: rank {summary[-1]['rank']}, valid {summary[-1]['valid']:.4f}, "
      f"test {summary[-1]['test']:.4f}")
# --8<-- [end:top]

# --8<-- [start:curve]
import matplotlib.pyplot as plt

curve = result.overfitting_curve(draws=2000, seed=0)
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(curve["size"], curve["valid"], marker=".", label="validation (chosen on)")
ax.plot(curve["size"], curve["test"], marker=".", label="test")
ax.set_xlabel("configurations tried, n")
ax.set_ylabel("NDCG@10 of the best on validation")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
print(f"n = 1: valid {curve['valid'][0]:.4f}, test {curve['test'][0]:.4f};  "
      f"n = {curve['size'][-1]}: valid {curve['valid'][-1]:.4f}, test {curve['test'][-1]:.4f}")
# --8<-- [end:curve]

# --8<-- [start:significance]
import numpy as np

from twinrank.fast.evaluation.metrics import ndcg
from twinrank.fast.evaluation.stats import compare, randomization_test


def per_query_ndcg(config: int, repeat: int = 0) -> np.ndarray:
    """NDCG@10 of every test query of the five folds (784 queries), one run per fold."""
    values = []
    for f, fold in enumerate(folds):
        matrix = table.score_matrix(f, "test")
        run = next(r.index for r in table.runs if (r.config, r.fold, r.repeat) == (config, f, repeat))
        scores = matrix.scores[list(matrix.runs).index(run)]
        values.append(ndcg(fold.test.y, scores, fold.test.query_offsets, k=10, convention="letor"))
    return np.concatenate(values)


best = summary[0]["config"]
a = per_query_ndcg(best)
print(f"A = rank 1 {result.configs[best]}: mean NDCG@10 {a.mean():.4f} on {len(a)} test queries")
for rank in (len(summary) // 2, len(summary)):
    other = summary[rank - 1]["config"]
    b = per_query_ndcg(other)
    c = compare(a, b, n_permutations=10_000, seed=0)
    print(f"B = rank {rank} {result.configs[other]}: mean {c.mean_b:.4f}, A - B {c.difference:+.4f}, "
          f"{np.sum(a == b)} queries tied")
    print(f"    randomization p = {c.randomization_p:.4f};  t = {c.t_statistic:.3f}, df = {c.df}, "
          f"p = {c.t_p:.4f};  95% interval [{c.ci_low:+.4f}, {c.ci_high:+.4f}]")
for n in (100, 1000, 10_000):
    ps = [randomization_test(a, b, n_permutations=n, seed=s) for s in range(5)]
    print(f"{n:>6} permutations, seeds 0-4: p = " + ", ".join(f"{p:.4f}" for p in ps))
# --8<-- [end:significance]

# --8<-- [start:staged]
from twinrank.fast.analysis.staged import staged_metrics

train, vali, test = load_mq2008(1)
model = LambdaMART(n_trees=300, **result.best(), seed=0).fit(train)
curves = {name: staged_metrics(model.model_, data, "ndcg@10", convention="letor", every=5)
          for name, data in (("train", train), ("validation", vali), ("test", test))}
fig, ax = plt.subplots(figsize=(6.4, 3.4))
for name, values in curves.items():
    ax.plot(values["n_trees"], values["ndcg@10"], label=name)
ax.set_xlabel("trees")
ax.set_ylabel("NDCG@10 (letor)")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
peak = int(np.argmax(curves["validation"]["ndcg@10"]))
print(f"validation peaks at {curves['validation']['n_trees'][peak]} trees "
      f"({curves['validation']['ndcg@10'][peak]:.4f}); test there {curves['test']['ndcg@10'][peak]:.4f}, "
      f"at 300 trees {curves['test']['ndcg@10'][-1]:.4f}")
# --8<-- [end:staged]

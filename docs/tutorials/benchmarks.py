"""Benchmarks: the numbers of benchmarks/RESULTS.json (written by benchmarks/speed.py) as a figure.

Run it from the repository root with ``python docs/tutorials/benchmarks.py``; the
documentation build runs it and shows the figure. It measures nothing: it reads the
last saved run.
"""
# --8<-- [start:plot]
import json
from pathlib import Path

import matplotlib.pyplot as plt

run = json.loads(Path("benchmarks/RESULTS.json").read_text())
tools = ["twinrank", "lightgbm", "xgboost"]
results = {t: run["results"][t] for t in tools}
colors = dict(zip(tools, ["tab:blue", "tab:green", "tab:orange"]))

fig, (train, score, scale) = plt.subplots(1, 3, figsize=(9, 3))
train.bar(tools, [results[t]["ms_per_tree"] for t in tools], color=[colors[t] for t in tools])
train.set_title("training: ms per tree", fontsize="medium")

big = run["score_trees"]
width = 0.4
for i, t in enumerate(tools):
    score.bar(i - width / 2, results[t]["docs_per_s"], width, color=colors[t])
    score.bar(i + width / 2, results[t]["docs_per_s_big"], width, color=colors[t], alpha=0.45, hatch="//")
score.set_xticks(range(len(tools)), tools)
score.set_yscale("log")
score.set_title(f"scoring: docs/s, {run['settings']['trees']} | {big} trees (hatched)", fontsize="medium")

for t in tools:
    rows = [r["rows"] / 1e6 for r in run["scaling_rows"]]
    scale.plot(rows, [r[t] for r in run["scaling_rows"]], marker="o", color=colors[t], label=t)
scale.set_xlabel("training rows (millions)")
scale.set_title(f"ms per tree as rows grow ({run.get('scaling_commit', run['machine']['commit'])})", fontsize="medium")
scale.legend(fontsize="small", frameon=False)
for ax in (train, score, scale):
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize="small")
settings = run["settings"]
fig.suptitle(f"{run['data']['train_rows']:,} MSLR-shaped rows x {run['data']['features']} features, "
             f"{settings['leaves']} leaves, {settings['threads']} threads ({run['machine']['cpu']}, "
             f"{run['machine']['date']})", fontsize="small")
fig.tight_layout()
# --8<-- [end:plot]

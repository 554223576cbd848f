"""LambdaRank normalisation: the held-out evidence behind LambdaMART's default.

Run it with ``python docs/tutorials/normalization.py`` from the repository root; the
documentation build runs it section by section (the ``--8<--`` markers). The numbers are
those of ``benchmarks/normalization.py``, stored in ``benchmarks/normalization.json``
(the commands that made them are in the JSON's ``command`` fields).
"""
# --8<-- [start:tables]
import json
from pathlib import Path

runs = json.loads(Path("benchmarks/normalization.json").read_text())


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    lines += ["| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in rows]
    return "\n".join(lines)


for run in runs:
    print(f"**{run['title']}**  \n`{run['command']}`\n")
    columns = [k for k in next(iter(run["summary"].values())) if k not in ("curve", "trees")]
    print(markdown_table(["ranker"] + columns,
                         [[name] + [row[c] for c in columns] for name, row in run["summary"].items()]))
    print()
# --8<-- [end:tables]

# --8<-- [start:curves]
import matplotlib.pyplot as plt

curves = [run for run in runs if any(row["curve"] for row in run["summary"].values())]
fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 3.6), squeeze=False)
for ax, run in zip(axes[0], curves):
    for name, row in run["summary"].items():
        style = "-" if name.startswith("twinrank") else "--"
        ax.plot(range(1, len(row["curve"]) + 1), row["curve"], style, label=name, linewidth=1.2)
    ax.set_xscale("log")
    ax.set_xlabel("trees")
    ax.set_title(run["label"], fontsize=9)
axes[0][0].set_ylabel("test NDCG@10")
axes[0][-1].legend(fontsize=7)
fig.tight_layout()
# --8<-- [end:curves]

"""LambdaMART's defaults: the held-out evidence behind each, beside LightGBM, XGBoost and CatBoost.

Run it with ``python docs/tutorials/defaults.py`` from the repository root; the documentation
build runs it (the ``--8<--`` markers). The numbers are those of ``benchmarks/defaults.py``, stored
in ``benchmarks/defaults.json`` (each protocol's ``command`` says how it was made).
"""
# --8<-- [start:tables]
import json
from pathlib import Path

runs = json.loads(Path("benchmarks/defaults.json").read_text())
TITLES = {
    "raw": "Raw-feature LETOR-shaped sets (generated, 6 seeds x 5 folds, ~21 test queries a fold), LETOR rules",
    "yahoo": "Yahoo! sample, 251 queries in 5 folds, lightgbm rules",
    "mq2008": "MQ2008, its 5 folds, NDCG@10 by ranklib's rules, MAP by LETOR's",
    "mslr": "MSLR-shaped sets (generated, 2 seeds; 3,000 training / 1,000 test queries, 50 trees)",
}

for protocol in ("raw", "yahoo", "mq2008", "mslr"):
    if protocol not in runs:
        continue
    run = runs[protocol]
    means = run["summary"]
    metrics = [k for k in means["twinrank"] if k != "trees" and not k.startswith("vs ")]
    header = ["ranker"] + metrics + [f"{m.split(' ')[0]} - twinrank" for m in metrics] + ["trees"]
    print(f"**{TITLES[protocol]}**  \n" + "  \n".join(f"`{c}`" for c in run["commands"]) + "\n")
    print("| " + " | ".join(header) + " |")
    print("|---" + "|---:" * (len(header) - 1) + "|")
    for name, row in means.items():
        cells = [f"{row[m]:.4f}" for m in metrics]
        cells += [f"{row[f'vs twinrank: {m}'][0]:+.4f} ± {row[f'vs twinrank: {m}'][1]:.4f}"
                  if f"vs twinrank: {m}" in row else "" for m in metrics]
        print(f"| {name} | " + " | ".join(cells) + f" | {row['trees']:.0f} |")
    print()
# --8<-- [end:tables]

"""Quantized training side by side: twinrank exact and quantized against LightGBM exact and quantized.

    python benchmarks/quantized.py --rows 200000 --trees 50 --json benchmarks/quantized.json
    python benchmarks/quantized.py --bits 2 4 --repeat 2              # several twinrank bit widths
    python benchmarks/quantized.py --from-json benchmarks/quantized.json   # re-render a saved run
    python benchmarks/quantized.py --rows 1000000 --trees 30 --defaults   # each with its own defaults

The same MSLR-WEB10K-shaped data and settings as ``speed.py`` (``generate.py``; 31 leaves,
255 bins, truncation 30, 2 threads), each run in a fresh process (``_measure.py``, mode
``quality``: train, then score the held-out queries), the jobs in rotation, the best of
``--repeat``: twinrank LambdaMART with ``quantized_gradients=False`` and ``True`` (each of
``--bits``), LightGBM lambdarank plain and with ``use_quantized_grad=true,
num_grad_quant_bins=4, quant_train_renew_leaf=true`` (its defaults for quantized
training), also with ``OMP_WAIT_POLICY=PASSIVE`` unless ``--no-passive-peers``. Reports the median ms per tree (rounds 2..), test NDCG@10 (lightgbm
convention) and the ratios the issue asks for: twinrank quantized against LightGBM
exact and LightGBM quantized, and each quantized NDCG@10 minus its exact one. The
machine's load average is recorded before and after: the box is shared.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile

import numpy as np
import scaling
from _frameworks import Settings
from _machine import machine
from _measure import save
from generate import queries_for_rows, train_test
from speed import _ndcg

PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE"}  # the policy twinrank.fast sets for itself


def jobs(bits: list[int], passive_peers: bool, defaults: bool = False) -> list[tuple[str, str, dict, dict]]:
    """``(label, framework, settings changes, environment changes)`` of every run; with ``defaults``
    each framework with its own defaults, exact and with quantized training switched on (no bits)."""
    if defaults:
        out = [("twinrank exact", "twinrank", {}, {}), ("twinrank quantized", "twinrank", {"quantized": True}, {}),
               ("lightgbm exact", "lightgbm", {}, {}), ("lightgbm quantized", "lightgbm", {"quantized": True}, {})]
        if passive_peers:
            out += [("lightgbm exact, passive wait", "lightgbm", {}, PASSIVE),
                    ("lightgbm quantized, passive wait", "lightgbm", {"quantized": True}, PASSIVE)]
        return out
    out = [("twinrank exact", "twinrank", {}, {})]
    out += [(f"twinrank quantized {b} bits", "twinrank", {"quantized": True, "gradient_bits": b}, {})
            for b in bits]
    out += [("lightgbm exact", "lightgbm", {}, {}),
            ("lightgbm quantized (4 bins)", "lightgbm", {"quantized": True}, {})]
    if passive_peers:
        out += [("lightgbm exact, passive wait", "lightgbm", {}, PASSIVE),
                ("lightgbm quantized (4 bins), passive wait", "lightgbm", {"quantized": True}, PASSIVE)]
    return out


def run(args) -> dict:
    settings = Settings(trees=args.trees, threads=args.threads, seed=args.seed, defaults=args.defaults)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    out = {"machine": machine(), "settings": dataclasses.asdict(settings), "command": " ".join(sys.argv),
           "repeat": args.repeat, "load_average_before": os.getloadavg()}
    train, test = train_test(queries_for_rows(args.rows), args.test_queries, seed=args.seed)
    out["data"] = {"train_rows": train.n_rows, "train_queries": train.n_queries, "features": train.n_features,
                   "test_rows": test.n_rows, "test_queries": test.n_queries}
    print(f"data: {train.n_rows:,} training rows x {train.n_features}, {test.n_rows:,} test rows", flush=True)
    runs = {label: [] for label, _, _, _ in jobs(args.bits, not args.no_passive_peers, args.defaults)}
    with tempfile.TemporaryDirectory() as directory:
        save(train, directory, "train")
        save(test, directory, "test")
        for repeat in range(args.repeat):
            for label, name, changes, env_changes in jobs(args.bits, not args.no_passive_peers, args.defaults):
                result = scaling.run_worker(name, directory, "quality", dataclasses.replace(settings, **changes),
                                            env={**env, **env_changes})
                if "error" not in result:
                    result["ndcg@10"] = _ndcg(test, np.load(os.path.join(directory, f"{name}_scores.npy")))
                print(f"  {label} (run {repeat + 1}): {result.get('ms_per_tree_median', float('nan')):.1f} ms/tree, "
                      f"NDCG@10 {result.get('ndcg@10', float('nan')):.4f} {result.get('error', '')}", flush=True)
                runs[label].append(result)
    out["runs"] = runs
    out["results"] = {label: {"ms_per_tree": min(r["ms_per_tree_median"] for r in rs if "error" not in r),
                              "ndcg@10": rs[0].get("ndcg@10"),
                              "leaves_per_tree": rs[0].get("leaves_per_tree")}
                      for label, rs in runs.items() if any("error" not in r for r in rs)}
    out["load_average_after"] = os.getloadavg()
    return out


def render(out: dict) -> str:
    """The results as a markdown table plus the ratios of the issue."""
    res = out["results"]
    quantized = "lightgbm quantized" if out["settings"].get("defaults") else "lightgbm quantized (4 bins)"
    lgb, lgb_q = res["lightgbm exact"], res[quantized]
    if "lightgbm exact, passive wait" in res:  # the faster policy of each, on a loaded machine
        lgb = min(lgb, res["lightgbm exact, passive wait"], key=lambda r: r["ms_per_tree"])
        lgb_q = min(lgb_q, res[f"{quantized}, passive wait"], key=lambda r: r["ms_per_tree"])
    lines = [f"{out['data']['train_rows']:,} training rows x {out['data']['features']} features, "
             f"{out['settings']['trees']} trees, {out['settings']['leaves']} leaves, {out['settings']['threads']} "
             f"threads; best of {out['repeat']}; load average before {_load(out['load_average_before'])}, "
             f"after {_load(out['load_average_after'])}"
             + ("; each framework with its own defaults (quantized: the one switch turned)"
                if out["settings"].get("defaults") else ""), "",
             "Ratios are to LightGBM's faster wait policy of each mode.", "",
             "| run | ms/tree | x LightGBM exact | x LightGBM quantized | test NDCG@10 | minus its exact |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, r in res.items():
        exact = res["twinrank exact" if label.startswith("twinrank") else "lightgbm exact"]
        lines.append(f"| {label} | {r['ms_per_tree']:.1f} | {r['ms_per_tree'] / lgb['ms_per_tree']:.2f} | "
                     f"{r['ms_per_tree'] / lgb_q['ms_per_tree']:.2f} | {r['ndcg@10']:.4f} | "
                     f"{r['ndcg@10'] - exact['ndcg@10']:+.4f} |")
    return "\n".join(lines)


def _load(triple) -> str:
    return " / ".join(f"{x:.2f}" for x in triple)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--test-queries", type=int, default=1000)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bits", type=int, nargs="+", default=[4], help="twinrank gradient_bits to run")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-passive-peers", action="store_true",
                        help="skip LightGBM with OMP_WAIT_POLICY=PASSIVE (twinrank.fast's own policy)")
    parser.add_argument("--defaults", action="store_true",
                        help="each framework with its own defaults, exact and quantized (the issue's bar)")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--from-json", metavar="PATH")
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            out = json.load(f)
    else:
        out = run(args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    print(render(out))


if __name__ == "__main__":
    main()

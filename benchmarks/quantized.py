"""Quantized training side by side: twinrank exact and quantized against LightGBM exact and quantized.

    python benchmarks/quantized.py --rows 200000 --trees 50 --json benchmarks/quantized.json
    python benchmarks/quantized.py --bits 2 4 --repeat 2              # several twinrank bit widths
    python benchmarks/quantized.py --from-json benchmarks/quantized.json   # re-render a saved run
    python benchmarks/quantized.py --rows 1000000 --trees 30 --defaults   # each with its own defaults
    python benchmarks/quantized.py --parts --threads 1 --clock cpu --bits 4 6 8   # where a round's time goes

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

``--parts`` runs in this one process instead: per bit width a twinrank quantized fit with
every kernel of a round behind a stopwatch (LambdaRank's lambdas, the quantization, the
tree grower, the leaf refit, the score update; :func:`timed_parts`) and each round's share
of inactive rows, $(\tilde g, \tilde h) = (0, 0)$, then LightGBM's quantized and exact fits, each
round timed with the same clock. ``--clock cpu`` (the process's CPU time, at ``--threads 1``)
measures work, which a loaded machine's other processes do not stretch as they stretch
the wall clock; at 2 threads only the wall clock tells what the user waits.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np
import scaling
from _frameworks import LightGBM, Settings, Twinrank
from _machine import machine
from _measure import save, warm_up
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


PARTS = ("lambdas", "quantization", "tree grower", "leaf refit", "score update")


def timed_parts(settings: Settings, train, clock) -> dict:
    """One twinrank quantized fit with each kernel of a round timed: ms per tree (median of rounds
    2..) by part, the rest of the round (the loop's own Python) and the inactive share per round."""
    from twinrank.fast.engine import FAST
    from twinrank.fast.trees import tree as fast_tree

    seconds, shares = defaultdict(list), []

    def timed(label, function):
        def run(*args, **kwargs):
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label].append(clock() - start)
        return run

    timed_quantize = timed("quantization", FAST.quantize_gradients)

    def quantize(rng, g, h, bits, rows):  # the share counted outside the stopwatch
        quantized = timed_quantize(rng, g, h, bits, rows)
        shares.append(float(np.mean((quantized.gradients == 0) & (quantized.hessians == 0))))
        return quantized

    class TimedLambdaRank(FAST.lambdarank):
        def gradients(self, *args):
            return timed("lambdas", super().gradients)(*args)

    framework = Twinrank(settings)
    engine = dataclasses.replace(FAST, lambdarank=TimedLambdaRank, quantize_gradients=quantize,
                                 add_leaf_values=timed("score update", FAST.add_leaf_values),
                                 grow_tree=timed("grow_tree", FAST.grow_tree))
    framework.LambdaMART = type("TimedLambdaMART", (framework.LambdaMART,), {"engine": engine})
    refit, grow = fast_tree.refit, fast_tree.grow  # module globals that grow_tree calls
    fast_tree.refit, fast_tree.grow = timed("leaf refit", refit), timed("tree grower", grow)
    try:
        stamps = [clock()]
        framework.train(train, None, settings.trees, on_round=lambda: stamps.append(clock()))
    finally:
        fast_tree.refit, fast_tree.grow = refit, grow
    rounds = 1e3 * np.diff(stamps)[1:]
    out = {"round_ms": float(np.median(rounds)),
           "parts_ms": {label: 1e3 * float(np.median(seconds[label][1:])) for label in PARTS}}
    parts = out["parts_ms"]
    parts["grow_tree's own Python (checks, integer job)"] = (1e3 * float(np.median(seconds["grow_tree"][1:]))
                                                             - parts["tree grower"] - parts["leaf refit"])
    parts["the rest (the boosting loop's Python)"] = out["round_ms"] - sum(parts.values())
    out["inactive_share"] = shares
    return out


def run_parts(args) -> dict:
    """``--parts``: :func:`timed_parts` for each of ``--bits``, then LightGBM quantized and exact, one
    process; ``--repeat`` rounds of them in rotation, each run's fastest fit kept (its parts with it)."""
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    settings = Settings(trees=args.trees, threads=args.threads, seed=args.seed, quantized=True)
    out = {"machine": machine(), "settings": dataclasses.asdict(settings), "command": " ".join(sys.argv),
           "clock": args.clock, "repeat": args.repeat, "load_average_before": os.getloadavg()}
    train, _ = train_test(queries_for_rows(args.rows), args.test_queries, seed=args.seed)  # main mode's rows
    out["data"] = {"train_rows": train.n_rows, "train_queries": train.n_queries, "features": train.n_features}
    for framework in (Twinrank(settings), LightGBM(settings)):  # compilation, library set-up
        warm_up(framework)
    peers = {label: LightGBM(dataclasses.replace(settings, quantized=quantized))
             for label, quantized in (("lightgbm quantized (4 bins)", True), ("lightgbm exact", False))}
    binned = {label: peer.bin(train) for label, peer in peers.items()}
    runs = {}
    for _ in range(args.repeat):
        for bits in args.bits:  # the fit sets numba's thread count from the settings
            label = f"twinrank quantized {bits} bits"
            result = timed_parts(dataclasses.replace(settings, gradient_bits=bits), train, clock)
            print(f"  {bits} bits: {_parts_line(result)}", flush=True)
            runs.setdefault(label, []).append(result)
        for label, peer in peers.items():
            stamps = [clock()]
            peer.train(train, binned[label], settings.trees, on_round=lambda: stamps.append(clock()))
            runs.setdefault(label, []).append({"round_ms": float(np.median(1e3 * np.diff(stamps)[1:]))})
            print(f"  {label}: {runs[label][-1]['round_ms']:.1f} ms/tree", flush=True)
    out["runs"] = runs
    out["parts"] = {label: min(results, key=lambda r: r["round_ms"]) for label, results in runs.items()}
    out["load_average_after"] = os.getloadavg()
    return out


def _parts_line(run: dict) -> str:
    shares = run["inactive_share"][1:]
    return (f"{run['round_ms']:.1f} ms/tree; " + ", ".join(f"{k} {v:.1f}" for k, v in run["parts_ms"].items())
            + f"; inactive rows {min(shares):.0%}-{max(shares):.0%}")


def render_parts(out: dict) -> str:
    """The ``--parts`` results: ms per tree by part, each bit width, against LightGBM quantized."""
    runs = out["parts"]
    labels = [label for label in runs if label.startswith("twinrank")]
    parts = list(runs[labels[0]]["parts_ms"])
    lines = [f"{out['data']['train_rows']:,} training rows x {out['data']['features']} features, "
             f"{out['settings']['trees']} trees, {out['settings']['threads']} thread(s), clock: {out['clock']}; "
             f"median of rounds 2.., the fastest of {out.get('repeat', 1)} fit(s) in rotation; load average before {_load(out['load_average_before'])}, after "
             f"{_load(out['load_average_after'])}", "",
             "| ms / tree | " + " | ".join(label.replace("twinrank quantized ", "") for label in labels) + " |",
             "|---|" + "---:|" * len(labels)]
    lines.append("| inactive rows (rounds 2..) | " + " | ".join(
        f"{min(runs[label]['inactive_share'][1:]):.0%}-{max(runs[label]['inactive_share'][1:]):.0%}"
        for label in labels) + " |")
    for part in parts:
        lines.append(f"| {part} | " + " | ".join(f"{runs[label]['parts_ms'][part]:.1f}" for label in labels) + " |")
    lines.append("| **round** | " + " | ".join(f"**{runs[label]['round_ms']:.1f}**" for label in labels) + " |")
    for peer in ("lightgbm quantized (4 bins)", "lightgbm exact"):
        ms = runs[peer]["round_ms"]
        lines.append(f"| x {peer.replace('lightgbm', 'LightGBM')} ({ms:.1f} ms) | "
                     + " | ".join(f"{runs[label]['round_ms'] / ms:.2f}" for label in labels) + " |")
    return "\n".join(lines)


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
    parser.add_argument("--parts", action="store_true",
                        help="where a quantized round's time goes, by part, for each of --bits, against LightGBM "
                             "quantized (in this process)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="--parts: wall time, or the process's CPU time (use with --threads 1)")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--from-json", metavar="PATH")
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            out = json.load(f)
    else:
        out = run_parts(args) if args.parts else run(args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    print(render_parts(out) if "parts" in out else render(out))


if __name__ == "__main__":
    main()

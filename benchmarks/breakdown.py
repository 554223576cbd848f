"""Where fast LambdaMART's time goes, per tree: lambdas, tree growing, score update (training metric).

``LambdaMART.fit`` of the fast twin runs as it is, through an engine whose kernels
(the objective ``objectives.lambdarank`` it calls with its ranking kept between
rounds, the grower, the score update, the metric) are each wrapped in a stopwatch;
what no stopwatch covers is the boosting loop's own Python work. The grower is timed
as a whole: its inside is compiled code, for a profiler. The training-set metric is
measured only with ``--eval-train`` (the estimator computes it only with
``eval_train=True``)::

    python benchmarks/breakdown.py [--queries 8333 | --data DIR] [--trees 30] [--threads 2] [--truncation 30] [--eval-train]
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import resource
import time
from collections import defaultdict

from _frameworks import Settings
from _measure import load
from generate import generate, queries_for_rows

LOOP_PARTS = (  # (stopwatch label, what it is)
    ("lambdas", "objective: LambdaRank gradients and hessians (`objectives.LambdaRank.gradients`)"),
    ("grow_tree", "tree: histograms, split search, partition (`tree.grow_tree`)"),
    ("score update", "training scores += new tree (`predict.predict_tree_binned`; none in a round of all rows, whose step is `value[leaf_of_row]` in the loop)"),
    ("training metric", "NDCG@10 of the training set after every tree (`metrics.evaluate`, only with `eval_train=True`)"),
)
CHECKS = (  # (label, what is checked), timed again on their own on sampled rounds
    # (LambdaRank's arguments are checked once per fit, when its loss object is made: not per round)
    ("metric", "`metrics.evaluate` (`metrics.prepare`)"),
)


class Stopwatch:
    """Seconds, calls and minor page faults per label; ``wrap(label, f)`` is ``f`` timed under ``label``."""

    def __init__(self):
        self.seconds, self.calls, self.faults = defaultdict(float), defaultdict(int), defaultdict(int)

    def wrap(self, label, function):
        def timed(*args, **kwargs):
            faults, start = _minor_faults(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start
                self.faults[label] += _minor_faults() - faults
                self.calls[label] += 1
        return timed


def _minor_faults() -> int:
    """Minor page faults of this process so far (first touches of freshly mapped memory)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def profile_fit(train, settings: Settings, *, eval_train: bool = False, sample_every: int = 5) -> dict:
    """Time every part of one fast ``LambdaMART.fit`` of ``settings.trees`` trees on ``train``.

    Every ``sample_every``-th round (the first included) the argument checks of the
    objective and (with ``eval_train``) of the metric are also timed once more on
    their own; that extra work is excluded from the loop's total.
    """
    from twinrank.fast.engine import FAST
    from twinrank.fast.evaluation import metrics
    from twinrank.fast.rankers.lambdamart import LambdaMART
    from twinrank.reference.evaluation.metrics import prepare

    watch, checks = Stopwatch(), Stopwatch()
    rounds, boost_seconds = [0], [0.0]  # the objective is the first kernel of every round

    def sampled():
        return (rounds[0] - 1) % sample_every == 0

    timed_evaluate = watch.wrap("training metric", metrics.evaluate)

    class TimedLambdaRank(FAST.lambdarank):  # its arguments are checked once, when it is made
        def gradients(self, *args):
            rounds[0] += 1
            return watch.wrap("lambdas", super().gradients)(*args)

    def evaluate(*args, **kwargs):
        if sampled():
            bound = inspect.signature(metrics.evaluate).bind(*args, **kwargs)
            bound.apply_defaults()
            a = bound.arguments
            checks.wrap("metric", prepare)(a["y"], a["scores"], a["query_offsets"], a["convention"], a["doc_ids"])
        return timed_evaluate(*args, **kwargs)

    engine = dataclasses.replace(
        FAST, grow_tree=watch.wrap("grow_tree", FAST.grow_tree),
        bin_thresholds=watch.wrap("binning", FAST.bin_thresholds),
        apply_bins=watch.wrap("binning", FAST.apply_bins),
        predict_tree_binned=watch.wrap("score update", FAST.predict_tree_binned),
        evaluate=evaluate, lambdarank=TimedLambdaRank)

    class TimedLambdaMART(LambdaMART):  # the fast estimator on the wrapped kernels
        def fit_model(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return super().fit_model(*args, **kwargs)
            finally:
                boost_seconds[0] = time.perf_counter() - start

    TimedLambdaMART.engine = engine

    est = TimedLambdaMART(n_trees=settings.trees, learning_rate=settings.learning_rate, max_leaves=settings.leaves,
                          min_samples_leaf=settings.min_leaf, max_bins=settings.bins, truncation=settings.truncation,
                          target="ndcg", metric="ndcg@10", eval_train=eval_train, n_threads=settings.threads,
                          seed=settings.seed, quantized_gradients=settings.quantized,
                          gradient_bits=settings.gradient_bits)
    model = est.fit(train).model_
    total = boost_seconds[0] - sum(checks.seconds.values())
    return _summary(watch, checks, total, model.n_trees, train, eval_train)


def _summary(watch, checks, total, n_trees, train, eval_train) -> dict:
    """Milliseconds per tree of every part of the loop; of the argument checks, per sampled round."""
    parts = [label for label, _ in LOOP_PARTS if eval_train or label != "training metric"]
    loop = {label: 1e3 * watch.seconds[label] / n_trees for label in parts}
    faults = {label: watch.faults[label] / n_trees for label in parts}
    round_ms = 1e3 * (total - watch.seconds["binning"]) / n_trees
    loop["other loop work"] = round_ms - sum(loop.values())
    n_sampled = checks.calls["metric"]
    return {"rows": train.n_rows, "queries": train.n_queries, "features": train.n_features,
            "trees": n_trees, "eval_train": eval_train, "binning_s": watch.seconds["binning"], "round_ms": round_ms,
            "loop_ms": loop, "loop_page_faults": faults, "sampled_rounds": n_sampled,
            "checks_ms": {label: 1e3 * checks.seconds[label] / max(n_sampled, 1)
                          for label, _ in CHECKS if checks.calls[label]}}


def warm_up(settings: Settings, *, eval_train: bool = False) -> float:
    """A tiny profiled fit: numba compilation or cache load of every kernel involved."""
    start = time.perf_counter()
    profile_fit(generate(8, seed=12345), dataclasses.replace(settings, trees=3), eval_train=eval_train,
                sample_every=1)
    return time.perf_counter() - start


def report(result: dict) -> str:
    """The breakdown as Markdown: the table of the round's parts, then the argument checks."""
    lines = [f"Fast LambdaMART, {result['rows']:,} rows x {result['features']} features, "
             f"{result['trees']} trees: **{result['round_ms']:.0f} ms per tree** "
             f"(binning once per fit: {result['binning_s']:.2f} s).", "",
             "| part of a boosting round | ms / tree | share | minor page faults / tree |", "|---|---:|---:|---:|"]
    descriptions = dict(LOOP_PARTS, **{"other loop work": "the loop's own Python (sampling, model assembly)"})
    for label, ms in result["loop_ms"].items():
        faults = result.get("loop_page_faults", {}).get(label)
        lines.append(f"| {descriptions[label]} | {ms:.1f} | {ms / result['round_ms']:.0%} | "
                     + ("" if faults is None else f"{faults:,.0f}") + " |")
    if result.get("checks_ms"):
        names = dict(CHECKS)
        lines += ["", f"Argument checks inside those rows, timed again on their own on {result['sampled_rounds']} "
                      "sampled round(s): " + ", ".join(f"{names[label]} {ms:.1f} ms" for label, ms in
                                                 result["checks_ms"].items()) + " per round."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=queries_for_rows(1_000_000))
    parser.add_argument("--data", metavar="DIR", help="train on DIR/train_*.npy (speed.py's data) instead")
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--truncation", type=lambda v: None if v == "none" else int(v), default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quantized-bits", type=int, metavar="B",
                        help="quantized training with gradient_bits=B (benchmarks/quantized.py)")
    parser.add_argument("--eval-train", action="store_true",
                        help="fit with eval_train=True and time the training-set metric too")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    settings = Settings(trees=args.trees, leaves=args.leaves, threads=args.threads,
                        truncation=args.truncation, seed=args.seed,
                        **({"quantized": True, "gradient_bits": args.quantized_bits} if args.quantized_bits else {}))
    train = load(args.data, "train") if args.data else generate(args.queries, seed=args.seed)
    warm_up_s = warm_up(settings, eval_train=args.eval_train)
    result = {**profile_fit(train, settings, eval_train=args.eval_train), "warmup_s": warm_up_s}
    print(json.dumps(result) if args.json else f"warm-up {warm_up_s:.1f} s\n" + report(result))


if __name__ == "__main__":
    main()

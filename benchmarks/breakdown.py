"""Where fast LambdaMART's time goes, per tree: lambdas, tree growing, score update, training metric.

The boosting loop timed is the library's own (``twinrank.reference.boosting.run_boosting``,
the loop ``LambdaMART.fit`` runs) on the fast twin's kernels, each kernel wrapped in
a stopwatch; what no stopwatch covers is the loop's own Python work. The tree
grower is then taken apart by ``_grower_breakdown`` (its compiled kernels replayed
one by one on the same gradients, checked to grow the same tree)::

    python benchmarks/breakdown.py [--queries 8333 | --data DIR] [--trees 30] [--threads 2] [--truncation 30]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import time
from collections import defaultdict
from types import SimpleNamespace

from _frameworks import Settings
from _measure import load
from generate import generate, queries_for_rows

LOOP_PARTS = (  # (stopwatch label, what it is)
    ("lambdas", "objective: LambdaRank gradients and hessians (`objectives.lambdarank`)"),
    ("grow_tree", "tree: histograms, split search, partition (`tree.grow_tree`)"),
    ("score update", "training scores += new tree (`predict.predict_tree_binned`)"),
    ("training metric", "NDCG@10 of the training set after every tree (`metrics.evaluate`)"),
)


EXTRA_WORK = ("(excluded) replay", "argument checks (lambdarank)", "argument checks (metric)")


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


def profile_fit(train, settings: Settings, *, sample_every: int = 5) -> dict:
    """Time every part of one fast LambdaMART fit of ``settings.trees`` trees on ``train``.

    Every ``sample_every``-th round (the first included) is also taken apart: the
    grower's kernels replayed (``_grower_breakdown``) and the argument checks of the
    objective and the metric timed once more on their own. That extra work is
    excluded from the loop's total.
    """
    import _grower_breakdown
    from twinrank.fast import boosting, objectives
    from twinrank.fast._threads import threads
    from twinrank.fast.lambdamart import LambdaMART
    from twinrank.reference.metrics import prepare
    from twinrank.reference.objectives import _check_lambdarank

    est = LambdaMART(n_trees=settings.trees, learning_rate=settings.learning_rate, max_leaves=settings.leaves,
                     min_samples_leaf=settings.min_leaf, max_bins=settings.bins, truncation=settings.truncation,
                     target="ndcg", metric="ndcg@10", n_threads=settings.threads, seed=settings.seed)
    watch, detail = Stopwatch(), Stopwatch()
    k = vars(boosting.KERNELS)
    replay = detail.wrap("(excluded) replay", _grower_breakdown.replay)

    rounds = [0]  # the objective is the first kernel of every round

    def sampled():
        return (rounds[0] - 1) % sample_every == 0

    def lambdas(scores, queries):
        rounds[0] += 1
        if sampled():
            detail.wrap("argument checks (lambdarank)", replay_checks)(scores, queries)
        return objectives.lambdarank(train.y, scores, train.query_offsets, metric="ndcg",
                                     truncation=settings.truncation, queries=queries)

    def replay_checks(scores, queries):
        _check_lambdarank(train.y, scores, train.query_offsets, "ndcg", None, 1.0, settings.truncation,
                          "exp2", False, queries)

    def grow_tree(binned, g, h, thresholds, params, **kwargs):
        faults, start = _minor_faults(), time.perf_counter()
        tree = k["grow_tree"](binned, g, h, thresholds, params, **kwargs)
        seconds = time.perf_counter() - start
        watch.seconds["grow_tree"] += seconds
        watch.faults["grow_tree"] += _minor_faults() - faults
        if sampled():
            detail.seconds["grow_tree as a whole"] += seconds
            replay(detail, tree, binned, g, h, thresholds, params, **kwargs)
        return tree

    def evaluate(metric_names, y, scores, query_offsets, **kwargs):
        if sampled():
            detail.wrap("argument checks (metric)", prepare)(y, scores, query_offsets, kwargs["convention"])
        return k["evaluate"](metric_names, y, scores, query_offsets, **kwargs)

    kernels = SimpleNamespace(**{**k, "grow_tree": grow_tree,
                                 "bin_thresholds": watch.wrap("binning", k["bin_thresholds"]),
                                 "apply_bins": watch.wrap("binning", k["apply_bins"]),
                                 "predict_tree_binned": watch.wrap("score update", k["predict_tree_binned"]),
                                 "evaluate": watch.wrap("training metric", evaluate)})
    with threads(settings.threads):
        start = time.perf_counter()
        model = boosting.run_boosting(kernels, train, watch.wrap("lambdas", lambdas), est.boost_params(),
                                      valid=None, init_model=None, init_scores=None, valid_init_scores=None,
                                      algorithm="lambdamart", model_params={}, base_score=0.0, callback=None)
        total = time.perf_counter() - start - sum(detail.seconds[label] for label in EXTRA_WORK)
    return _summary(watch, detail, total, model.n_trees, train)


def _summary(watch, detail, total, n_trees, train) -> dict:
    """Milliseconds per tree of every part of the loop; of the grower's parts, per sampled tree."""
    loop = {label: 1e3 * watch.seconds[label] / n_trees for label, _ in LOOP_PARTS}
    faults = {label: watch.faults[label] / n_trees for label, _ in LOOP_PARTS}
    round_ms = 1e3 * (total - watch.seconds["binning"]) / n_trees
    loop["other loop work"] = round_ms - sum(loop.values())
    n_sampled = max(detail.calls["replayed trees"], 1)
    sampled = {label: 1e3 * seconds / n_sampled for label, seconds in detail.seconds.items()
               if label != EXTRA_WORK[0]}
    whole = sampled.pop("grow_tree as a whole", 0.0)
    checks = {label: sampled.pop(label) for label in EXTRA_WORK[1:] if label in sampled}
    grower = {"grow_tree as a whole": whole, **{f"  {label}": ms for label, ms in sampled.items()},
              "  rest (compiled bookkeeping between kernels, Tree assembly)": whole - sum(sampled.values()),
              **checks}
    return {"rows": train.n_rows, "queries": train.n_queries, "features": train.n_features,
            "trees": n_trees, "binning_s": watch.seconds["binning"], "round_ms": round_ms,
            "loop_ms": loop, "loop_page_faults": faults, "grower_ms": grower, "sampled_trees": detail.calls["replayed trees"],
            "grower_check": detail.calls.get("replay mismatches", 0) == 0,
            "replay_errors": sorted(set(getattr(detail, "errors", [])))}


def warm_up(settings: Settings) -> float:
    """A tiny profiled fit: numba compilation or cache load of every kernel involved."""
    start = time.perf_counter()
    profile_fit(generate(8, seed=12345), dataclasses.replace(settings, trees=3), sample_every=1)
    return time.perf_counter() - start


def report(result: dict) -> str:
    """The breakdown as Markdown tables."""
    lines = [f"Fast LambdaMART, {result['rows']:,} rows x {result['features']} features, "
             f"{result['trees']} trees: **{result['round_ms']:.0f} ms per tree** "
             f"(binning once per fit: {result['binning_s']:.2f} s).", "",
             "| part of a boosting round | ms / tree | share | minor page faults / tree |", "|---|---:|---:|---:|"]
    descriptions = dict(LOOP_PARTS, **{"other loop work": "the loop's own Python (sampling, model assembly)"})
    for label, ms in result["loop_ms"].items():
        faults = result.get("loop_page_faults", {}).get(label)
        lines.append(f"| {descriptions[label]} | {ms:.1f} | {ms / result['round_ms']:.0%} | "
                     + ("" if faults is None else f"{faults:,.0f}") + " |")
    grower = result["grower_ms"]
    if result.get("replay_errors"):
        lines += ["", f"The grower's kernels could not be replayed ({result['replay_errors'][0]}): "
                      "`_grower_breakdown.py` no longer mirrors `twinrank.fast._grower.grow`."]
    if result["sampled_trees"]:
        status = "same tree as `grow_tree`" if result["grower_check"] else "**replay grew a different tree**"
        lines += ["", f"Inside `grow_tree`, and the argument checks, on {result['sampled_trees']} sampled tree(s) "
                      f"(kernels replayed one by one; {status}):", "",
                  "| part | ms / tree |", "|---|---:|"]
        lines += [f"| {label} | {ms:.1f} |" for label, ms in grower.items()]
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
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    settings = Settings(trees=args.trees, leaves=args.leaves, threads=args.threads,
                        truncation=args.truncation, seed=args.seed)
    train = load(args.data, "train") if args.data else generate(args.queries, seed=args.seed)
    warm_up_s = warm_up(settings)
    result = {**profile_fit(train, settings), "warmup_s": warm_up_s}
    print(json.dumps(result) if args.json else f"warm-up {warm_up_s:.1f} s\n" + report(result))


if __name__ == "__main__":
    main()

"""The results page of ``speed.py``: machine, setup, the side-by-side table, notes, breakdown, scaling, and
the sections of ``predict_latency.py`` (``SCORING``) and ``ten_million.py`` (``TEN_MILLION``): their own
runs, kept when the page is regenerated."""
from __future__ import annotations

from pathlib import Path

import breakdown
import scaling
from _frameworks import DEFAULTS, PARAMETER_MAP

SCORING = Path(__file__).resolve().parent / "predict_latency.md"  # written by predict_latency.py --markdown
TEN_MILLION = Path(__file__).resolve().parent / "ten_million.md"  # ten_million.py --markdown

COLUMNS = (  # (result key, header, format)
    ("warmup_s", "warm-up (s)", "{:.1f}"),
    ("bin_s", "binning (s)", "{:.2f}"),
    ("ms_per_tree_median", "ms / tree", "{:.0f}"),
    ("docs_per_s", "scoring, {trees} trees (docs/s)", "{:,.0f}"),
    ("docs_per_s_big", "scoring, {score_trees} trees (docs/s)", "{:,.0f}"),
    ("peak_rss_mb", "peak RSS (MB)", "{:,.0f}"),
    ("rss_increase_mb", "peak RSS - RSS at start (MB)", "{:,.0f}"),
    ("ndcg@10", "test NDCG@10", "{:.4f}"),
)


def markdown(out: dict) -> str:
    """The whole results page (``benchmarks/RESULTS.md``)."""
    m, s, d = out["machine"], out["settings"], out["data"]
    source = d.get("source", f"`benchmarks/generate.py`, seed {s['seed']}")  # older JSON: generated
    lines = ["# Benchmark results", "",
             f"Regenerate with `{_command(out)}` (from the repository root). Shared, noisy machine: "
             "**compare the ratios, not the absolute times.**", "",
             "## Machine", "",
             f"{m['cpu']}, {m['usable_cores']} usable cores ({m['logical_cores']} logical), {m['memory_gb']} GB; "
             f"Linux {m['kernel']}; Python {m['python']}; numpy {m['numpy']}, numba {m['numba']}, "
             f"lightgbm {m['lightgbm']}, xgboost {m['xgboost']}; twinrank commit {m.get('commit', 'unknown')}; "
             f"{m['date']}. Load average (1, 5, 15 min) "
             f"{_load(m['load_average'])} before, {_load(out['load_average_after'])} after"
             + (f"; worker environment {out['env']}" if out["env"] else "") + ".", "",
             "## Setup", "",
             f"Training: {d['train_rows']:,} rows, {d['train_queries']:,} queries, {d['features']} features "
             f"({source}); test: {d['test_rows']:,} rows, "
             f"{d['test_queries']:,} other queries. {s['trees']} trees, {s['leaves']} leaves, {s['bins']} bins, "
             f"learning rate {s['learning_rate']}, minimum leaf size {s['min_leaf']}, truncation "
             f"{s['truncation'] or 'none (all pairs)'}, {s['threads']} threads.", "",
             "| setting | twinrank.fast `LambdaMART` | LightGBM `lambdarank` | XGBoost `rank:ndcg` |",
             "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in PARAMETER_MAP]
    lines += ["", "## Side by side", "", _main_table(out), "", _notes(out)]
    if SCORING.exists():
        lines += ["", "## Scoring: one call, and throughput", "",
                  f"Written by `benchmarks/predict_latency.py` in a run of its own (`{SCORING.name}`): the same "
                  "settings' models loaded from files, one call of 1 and of 20 rows, and throughput; the scoring "
                  "columns of the table above are this page's own run (commit "
                  f"{m.get('commit', 'unknown')}: the test set, float32, right after training, median of 3 calls). "
                  "`predict_latency.py --queries 8333 --big-queries 250 --test-queries 2000 --test-rows 233394 "
                  "--no-latency` scores the same models' test set without training them again.", "",
                  SCORING.read_text().strip()]
    if "breakdown" in out:
        lines += ["", "## Where fast LambdaMART spends its time", ""]
        lines += [f"Breakdown failed: {out['breakdown']['error']}"] if "error" in out["breakdown"] else \
            [breakdown.report(out["breakdown"])]
    if "scaling_rows" in out:
        lines += ["", "## Scaling", ""]
        if out.get("scaling_commit", m.get("commit")) != m.get("commit"):
            lines += [f"Measured at commit {out['scaling_commit']}, before this page's run: `--scaling` was not "
                      "rerun (it takes about as long again); the code may have changed since.", ""]
        lines += [f"Median ms per tree ({out['settings']['threads']} threads, "
                  f"OMP_WAIT_POLICY {out.get('scaling_policy', 'library defaults')} for every framework, "
                  f"the first rows of the training set, {_scaling_trees(out)} trees, best of {out.get('scaling_repeat', 1)} "
                  "run(s) each):", "",
                  scaling.report(out["scaling_rows"], [], [k for k in out["scaling_rows"][0] if k in ("twinrank", "lightgbm", "xgboost")]), "",
                  "Cost of one `twinrank.fast.losses.objectives.lambdarank` call (NDCG, no cutoff) on about 240,000 "
                  "rows, against the documents per query, with all pairs and with truncation 20:", "",
                  scaling.report([], out["lambda_cost"], [])]
    if TEN_MILLION.exists():
        lines += ["", "## 10M rows", "", TEN_MILLION.read_text().strip()]
    return "\n".join(lines) + "\n"


README_START, README_END = "<!-- speed.py results: start -->", "<!-- speed.py results: end -->"


def readme_block(out: dict) -> str:
    """The side-by-side table with one line of machine and setup, for the README."""
    m, s, d = out["machine"], out["settings"], out["data"]
    return "\n".join([
        README_START,
        f"{d['train_rows']:,} training rows x {d['features']} features, {s['trees']} trees of {s['leaves']} "
        f"leaves, {s['bins']} bins, truncation {s['truncation'] or 'none'}, {s['threads']} threads; "
        f"{m['cpu']}, {m['usable_cores']} cores; twinrank commit {m.get('commit', 'unknown')}, {m['date']}. "
        "Ratios to LightGBM in parentheses (times: below 1 is faster; throughput: above 1 is faster)"
        + ("; the \"defaults\" rows set nothing but trees, threads and seed, each tool with its own "
           "defaults, ratios to LightGBM's defaults row" if any(n.endswith(", defaults") for n in out["results"])
           else "")
        + f". Regenerate with `{_command(out)}`.", "",
        _main_table(out),
        README_END])


def with_readme_block(text: str, out: dict) -> str:
    """``text`` (the README) with its block between the markers replaced by :func:`readme_block`."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"the README has no '{README_START}' ... '{README_END}' block to replace")
    return text[:start] + readme_block(out) + text[end + len(README_END):]


def _main_table(out) -> str:
    results = out["results"]
    trees = {"trees": out["settings"]["trees"], "score_trees": out.get("score_trees", 1000)}
    header = "| | " + " | ".join(title.format(**trees) for _, title, _ in COLUMNS) + " |"
    lines = [header, "|---|" + "---:|" * len(COLUMNS)]
    for name, result in results.items():
        if "error" in result:
            lines.append(f"| {name} | failed: {result['error']} |" + " |" * (len(COLUMNS) - 1))
            continue
        cells = []
        peer = _peer(name)  # the LightGBM row it is compared with
        reference = results.get(peer, {})
        for key, _, fmt in COLUMNS:
            value = result.get(key, float("nan"))
            cell = fmt.format(value)
            if name != peer and reference.get(key) and key != "warmup_s":
                cell += f" ({value / reference[key]:.2f}x)"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _peer(name: str) -> str:
    """The row a result is a ratio to: LightGBM's defaults row for a defaults run, else LightGBM's."""
    return "lightgbm, defaults" if name.endswith(", defaults") else "lightgbm"


def _notes(out) -> str:
    r, d = out["results"], out["data"]
    twin = r.get("twinrank", {})
    bullets = [
        "Ratios in parentheses are value / LightGBM's value: below 1 is better for times and memory, "
        "above 1 for throughput and NDCG."
        + (f" Every framework ran {out['repeat']} times, in rotation; each cell is its best run "
           "(fastest, highest throughput, least memory)." if out.get("repeat", 1) > 1 else ""),
        f"Test NDCG@10 uses the LightGBM convention (a query without relevant documents scores 1); random "
        f"scores get {d['random_ndcg@10']:.4f}.",
        "ms / tree is the median wall time of boosting rounds 2..N (robust to the other jobs of a shared "
        "machine; the mean and round 1 are in the JSON: "
        + ", ".join(f"{name} mean {res['ms_per_tree']:.0f} ms" for name, res in r.items() if "ms_per_tree" in res)
        + "); "
        "no framework evaluates a metric while training (twinrank's `eval_train` is off, its default).",
        "Binning: twinrank `bin_thresholds` (from a 200,000-row sample, `subsample_for_bin`, as in `fit`) "
        "+ `apply_bins` of every row; LightGBM `Dataset.construct()` "
        "(edges from a 200,000-row sample); XGBoost `QuantileDMatrix`. twinrank's `fit` bins again inside "
        "its first round.",
    ]
    if any(name.endswith(", defaults") for name in r):
        defaults = "; ".join(f"{setting}: twinrank {ours}, LightGBM {theirs}" for setting, ours, theirs in DEFAULTS)
        bullets.append("The \"defaults\" rows: each framework with nothing set but the trees, threads and seed, "
                       f"its ratios to LightGBM's defaults row. The defaults: {defaults}.")
    policies = ", ".join(f"{name}: {res['omp_wait_policy']}" for name, res in r.items() if "omp_wait_policy" in res)
    bullets.append("Threads wait in OpenMP between parallel regions. `import twinrank.fast` sets "
                   "`OMP_WAIT_POLICY=PASSIVE` (sleep, do not spin) unless it is set; LightGBM and XGBoost run "
                   "with the OpenMP default (spin a while, then sleep) and again with PASSIVE (the "
                   "\"passive wait\" rows, ratios still to the default LightGBM row). On a busy machine the "
                   f"wait policy can matter more than the kernels. Policies: {policies}"
                   + (f"; twinrank's numba threading layer: {twin['numba_threading_layer']}."
                      if "numba_threading_layer" in twin else "."))
    if twin.get("cold_warmup_s") is not None:
        bullets.append(f"Warm-up is a tiny fit + predict in the same process before any timing: for twinrank "
                       f"{twin.get('warmup_s', float('nan')):.1f} s with numba's on-disk cache, "
                       f"{twin['cold_warmup_s']:.1f} s with an empty cache (compiling every kernel).")
    big = [f"{name} {res['big_trees']} trees of {res['big_leaves_per_tree']:.1f} leaves"
           for name, res in r.items() if "big_trees" in res]
    if big:
        first = next(res for res in r.values() if "big_train_rows" in res)
        bullets.append(f"Scoring throughput: the held-out test set ({d['test_rows']:,} rows, float32) scored by "
                       "each framework's own predict on raw features (median of 3 runs; XGBoost "
                       "`inplace_predict`). The 1000-tree models are real models of each framework, trained "
                       f"on the first {first['big_train_rows']:,} training rows (a smaller set so that 1000 "
                       f"trees train quickly): {', '.join(big)}.")
    bullets.append("Peak RSS: the high-water mark of the framework's own process (`VmHWM`, reset after the "
                   "training data are loaded and the warm-up is done) through binning, training and scoring. "
                   "RSS at start is what was resident then: the training data, the interpreter and the "
                   "framework's libraries ("
                   + ", ".join(f"{name} {res['rss_before_mb']:,.0f} MB"
                               for name, res in r.items() if "rss_before_mb" in res) + ").")
    return "\n".join(f"- {b}" for b in bullets)


def _command(out) -> str:
    argv = out["command"].split()
    return "python benchmarks/speed.py " + " ".join(argv[1:])


def _load(values) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def _scaling_trees(out) -> int:
    return out.get("scaling_trees", out["settings"]["trees"])


def terminal(out) -> str:
    """A short plain-text summary for the console."""
    return _main_table(out) + "\n\n" + (breakdown.report(out["breakdown"]) if "loop_ms" in out.get("breakdown", {})
                                         else "")

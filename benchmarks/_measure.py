"""One framework's measurements, run in a process of its own (so its memory peak is its own).

    python benchmarks/_measure.py FRAMEWORK DATA_DIR MODE SETTINGS_JSON

prints one JSON line. ``DATA_DIR`` holds ``train_*.npy`` and ``test_*.npy`` (see
:func:`save`). Modes:

* ``warmup``: only the warm-up (run with an empty ``NUMBA_CACHE_DIR`` it measures
  numba's compilation);
* ``train``: warm-up, binning, ``trees`` rounds timed one by one;
* ``full``: ``train``, then scoring the test set, the memory peak, and a
  ``score_trees``-tree model (trained on the first ``score_queries`` training
  queries) scoring the test set. Test scores are saved as ``{framework}_scores.npy``.

Timing: ms per tree is the mean wall time of rounds 2..N (round 1 of twinrank also
bins the data inside ``fit``); warm-up (numba's compilation or cache load, a tiny
fit in the same process) comes before every timing and is reported apart.
Memory: the peak resident set (``VmHWM``) from after the data are loaded and
warmed up (the peak is reset through ``/proc/self/clear_refs``) to after scoring.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
from _frameworks import FRAMEWORKS, Settings
from generate import generate

from twinrank.reference.io.data import Dataset

PREDICT_REPEATS = 3


def save(data: Dataset, directory, name: str) -> None:
    """Write ``data``'s arrays as ``{name}_X.npy`` etc. for the workers."""
    for field in ("X", "y", "query_offsets"):
        np.save(Path(directory) / f"{name}_{field}.npy", getattr(data, field))


def load(directory, name: str) -> Dataset:
    return Dataset(*(np.load(Path(directory) / f"{name}_{field}.npy") for field in ("X", "y", "query_offsets")))


def memory_mb() -> dict:
    """Current and peak resident set of this process, MB (Linux ``/proc/self/status``)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}


def reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0); False if not permitted."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def warm_up(framework) -> float:
    """Seconds of a tiny bin + fit + predict: numba's compilation (or cache load), library set-up."""
    tiny = generate(8, seed=12345)
    start = time.perf_counter()
    model = framework.train(tiny, framework.bin(tiny), 3)
    framework.predict(model, tiny.X)
    return time.perf_counter() - start


def timed_training(framework, data, n_trees) -> dict:
    """Bin, then train ``n_trees`` rounds, timing each round."""
    start = time.perf_counter()
    binned = framework.bin(data)
    bin_s = time.perf_counter() - start
    if framework.name.startswith("twinrank"):  # twinrank, twinrank_lean (ten_million.py)
        del binned  # fit bins again: do not hold two copies
        binned = None
    stamps, cpu = [time.perf_counter()], [time.process_time()]  # wall and this process's CPU (every thread)

    def on_round():
        stamps.append(time.perf_counter())
        cpu.append(time.process_time())

    model = framework.train(data, binned, n_trees, on_round=on_round)
    rounds, cpu_rounds = np.diff(stamps), np.diff(cpu)  # (n_rounds,) seconds
    return {"model": model, "bin_s": bin_s, "train_s": stamps[-1] - stamps[0], "n_rounds": len(rounds),
            "first_round_s": float(rounds[0]),
            "ms_per_tree": 1e3 * float(rounds[1:].mean() if len(rounds) > 1 else rounds[0]),
            "ms_per_tree_median": 1e3 * float(np.median(rounds[1:] if len(rounds) > 1 else rounds)),
            "cpu_ms_per_tree_median": 1e3 * float(np.median(cpu_rounds[1:] if len(rounds) > 1 else cpu_rounds))}


def scoring_rate(framework, model, X) -> tuple[float, np.ndarray]:
    """Documents per second scoring ``X`` (median of ``PREDICT_REPEATS`` runs) and the scores."""
    times = []
    for _ in range(PREDICT_REPEATS):
        start = time.perf_counter()
        scores = framework.predict(model, X)
        times.append(time.perf_counter() - start)
    return len(X) / float(np.median(times)), np.asarray(scores, dtype=np.float64)


def run(name: str, directory, mode: str, settings: Settings, score_trees=1000, score_queries=250) -> dict:
    framework = FRAMEWORKS[name](settings)  # twinrank.fast's import sets OMP_WAIT_POLICY=PASSIVE if unset
    result = {"framework": name, "warmup_s": warm_up(framework),
              "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "unset")}
    if name == "twinrank":
        import numba

        result["numba_threading_layer"] = numba.threading_layer()
    if mode == "warmup":
        return result
    train = load(directory, "train")
    result["peak_reset"] = reset_peak()
    result["rss_before_mb"] = memory_mb()["VmRSS"]
    trained = timed_training(framework, train, settings.trees)
    model = trained.pop("model")
    result.update(trained)
    if mode == "train":  # the scaling curves: time, and the peak memory of loading + binning + training
        result["peak_rss_mb"] = memory_mb()["VmHWM"]
        return result
    test = load(directory, "test")
    result["docs_per_s"], scores = scoring_rate(framework, model, test.X)
    if mode == "quality":  # training time and the test scores only (benchmarks/quantized.py)
        result["leaves_per_tree"] = float(np.mean(framework.tree_shapes(model)))
        np.save(Path(directory) / f"{name}_scores.npy", scores)
        return result
    result["peak_rss_mb"] = memory_mb()["VmHWM"]
    result["leaves_per_tree"] = float(np.mean(framework.tree_shapes(model)))
    np.save(Path(directory) / f"{name}_scores.npy", scores)
    small = train.take_queries(np.arange(min(score_queries, train.n_queries)))
    big_model = framework.train(small, framework.bin(small), score_trees)
    result["docs_per_s_big"], _ = scoring_rate(framework, big_model, test.X)
    shapes = framework.tree_shapes(big_model)
    result.update(big_trees=len(shapes), big_leaves_per_tree=float(np.mean(shapes)), big_train_rows=small.n_rows)
    return result


def main(argv=None):
    name, directory, mode, settings = (argv or sys.argv[1:])[:4]
    options = json.loads(settings)
    extra = {key: options.pop(key) for key in ("score_trees", "score_queries") if key in options}
    print(json.dumps(run(name, directory, mode, Settings(**options), **extra)))


def settings_json(settings: Settings, **extra) -> str:
    return json.dumps({**asdict(settings), **extra})


if __name__ == "__main__":
    main()

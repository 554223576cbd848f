"""Cold start: ``twinrank demo`` in a new process with an empty numba cache, then warm.

Cold means a fresh, empty ``NUMBA_CACHE_DIR`` (a new temporary directory) and a new
Python process, so every kernel the demo calls is compiled; warm is the same
command again on the cache the cold run wrote. Each run is timed as a whole
process: wall clock, and the CPU time (user + system) of the child from
``os.wait4``, which other load on a shared machine inflates far less than wall.

``--profile`` adds one more cold run in-process, with no compile helper (every
kernel, the tree grower's too, compiles in that one process), with a listener on
numba's ``numba:compile`` events: per kernel (each compiled signature) its exclusive
compile time (thread CPU time and wall; a kernel's compile includes compiling
the kernels it calls the first time, and those are subtracted), per entry
point (a kernel called from Python: inclusive time), per group of the compile
notice (``tree``, ``lambdarank``, ...: its entry points' CPU), and per stage of
numba (typing, lowering, LLVM's passes, machine code: exclusive process CPU).

    python benchmarks/cold_start.py --runs 3 --profile --json benchmarks/cold_start.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from numba.core.event import Listener, register

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _machine import machine  # noqa: E402

COMMAND = ["-m", "twinrank.cli", "demo", "--quiet"]


def timed_run(args: list[str], cache_dir: str, threads: int | None) -> dict:
    """Run ``python ARGS`` with ``NUMBA_CACHE_DIR=cache_dir``: its wall time and output."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    stdout, stderr = child.communicate()
    wall = time.perf_counter() - start
    if child.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{stderr}")
    return {"wall_s": wall, "stdout": stdout, "stderr": stderr}


def run_pair(threads: int | None) -> dict:
    """One cold run then one warm run on the cache it wrote."""
    with tempfile.TemporaryDirectory(prefix="twinrank-cold-") as cache:
        return {"cold": _cpu_run(COMMAND, cache, threads), "warm": _cpu_run(COMMAND, cache, threads)}


def _cpu_run(args, cache, threads) -> dict:
    before = os.times()
    out = timed_run(args, cache, threads)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    compiling = [line for line in out["stderr"].splitlines() if "compiling" in line]
    return {"wall_s": round(out["wall_s"], 2), "cpu_s": round(cpu, 2), "compiling_lines": compiling}


# ----------------------------------------------------------------------------- profile (child)


class CompileProfile(Listener):
    """A ``numba:compile`` listener: exclusive compile time per (kernel, signature)."""

    def __init__(self):
        self.stack, self.rows = [], []

    def on_start(self, event):
        d = event.data["dispatcher"]
        name = f"{d.py_func.__module__.rsplit('.', 1)[-1]}.{d.py_func.__qualname__}"
        self.stack.append([name, event.data["args"], time.perf_counter(), time.thread_time(), 0.0, 0.0])

    def on_end(self, event):
        name, args, wall0, cpu0, child_wall, child_cpu = self.stack.pop()
        wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
        if self.stack:
            self.stack[-1][4] += wall
            self.stack[-1][5] += cpu
        self.rows.append({"kernel": name, "signature": _short(args), "depth": len(self.stack),
                          "cpu_s": cpu - child_cpu, "wall_s": wall - child_wall,
                          "inclusive_cpu_s": cpu, "inclusive_wall_s": wall})


class StageClock:
    """Exclusive process CPU time per stage of numba's compiler: each pass of its pipeline, LLVM's
    function and module passes, machine code, the cache's load and save."""

    def __init__(self):
        self.seconds, self.stack = {}, []

    def install(self) -> None:
        from numba.core import caching, codegen, compiler_machinery

        self._wrap(compiler_machinery.PassManager, "_runPass", lambda args: "numba: " + args[2].name())
        self._wrap(codegen.CPUCodeLibrary, "_optimize_functions", "llvm: function passes")
        self._wrap(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm: module passes")
        self._wrap(codegen.JITCodeLibrary, "_finalize_specific", "llvm: machine code")
        self._wrap(codegen.CPUCodeLibrary, "add_ir_module", "llvm: parse IR")
        self._wrap(caching.Cache, "save_overload", "cache: save")
        self._wrap(caching.Cache, "load_overload", "cache: load")

    def _wrap(self, owner, name, label) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            self.stack.append([label(args) if callable(label) else label, time.process_time(), 0.0])
            try:
                return original(*args, **kwargs)
            finally:
                stage, start, inner = self.stack.pop()
                spent = time.process_time() - start
                self.seconds[stage] = self.seconds.get(stage, 0.0) + spent - inner
                if self.stack:
                    self.stack[-1][2] += spent

        setattr(owner, name, timed)


def _short(args) -> str:
    return ", ".join(str(a).replace("Array(", "(").replace(", aligned=True", "") for a in args)


def profile_child(out_path: str) -> None:
    """Run the demo in this process under the listener; write the per-kernel rows as JSON."""
    import contextlib
    import io

    listener, stages = CompileProfile(), StageClock()
    register("numba:compile", listener)
    stages.install()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    from twinrank.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        main(COMMAND[2:])
    total = {"cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0}
    Path(out_path).write_text(json.dumps({"rows": listener.rows, "process": total, "stages": stages.seconds}))


# ----------------------------------------------------------------------------- timeline (child)

TIMELINE_LISTENER = """
import os, time
from numba.core.event import Listener, register
class _Timeline(Listener):
    depth = 0
    def _log(self, what, event):
        d = event.data["dispatcher"]
        with open(os.environ["TWINRANK_TIMELINE"], "a") as f:
            f.write(f"{time.time():.3f} {os.getpid()} {time.process_time():.3f} {what} "
                    f"{d.py_func.__module__.rsplit('.', 1)[-1]}.{d.py_func.__qualname__}\\n")
    def on_start(self, event):
        if self.depth == 0:
            self._log("start", event)
        self.depth += 1
    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            self._log("end", event)
register("numba:compile", _Timeline())
"""


def timeline_child(out_path: str) -> None:
    """Run the demo in this process, both processes' compilations logged (the helper's too: its code
    starts with the same listener), and when the fit waits for the helper."""
    import contextlib
    import io

    os.environ["TWINRANK_TIMELINE"] = out_path
    log = Path(out_path)
    log.write_text(f"{time.time():.3f} {os.getpid()} {time.process_time():.3f} process start\n")
    exec(TIMELINE_LISTENER, {})
    from twinrank.fast.trees import _warm

    _warm.HELPER_CODE = TIMELINE_LISTENER + _warm.HELPER_CODE
    scorers, waiting = _warm.compile_scorers, _warm.wait_for_helper

    def note(what):
        with log.open("a") as f:
            f.write(f"{time.time():.3f} {os.getpid()} {time.process_time():.3f} {what} -\n")

    def compile_scorers(*args):
        scorers(*args)
        note("idle")

    def wait_for_helper():  # before every tree; a helper only before the first
        running = bool(_warm._helper)
        waiting()
        if running:
            note("resume")

    _warm.compile_scorers, _warm.wait_for_helper = compile_scorers, wait_for_helper
    from twinrank.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        main(COMMAND[2:])
    note("exit")


def timeline(threads: int | None) -> dict:
    """One cold demo, both processes: each compilation's start and end (seconds from the demo's start)
    and process CPU, the fit's wait for its helper, each process's end."""
    with tempfile.TemporaryDirectory(prefix="twinrank-cold-") as cache:
        out = Path(cache) / "timeline.txt"
        run = _cpu_run([str(Path(__file__).resolve()), "--child-timeline", str(out)], cache, threads)
        lines = [line.split() for line in out.read_text().splitlines()]
    t0, fit = float(lines[0][0]), lines[0][1]
    events, started = [], {}
    for at, pid, cpu, what, name in lines:
        who = "fit" if pid == fit else "helper"
        at, cpu = round(float(at) - t0, 2), float(cpu)
        if what == "start":
            started[pid, name] = at, cpu
        elif what == "end":
            begin, cpu0 = started.pop((pid, name))
            events.append({"process": who, "start_s": begin, "end_s": at, "cpu_s": round(cpu - cpu0, 2),
                           "kernel": name})
        elif what != "process":
            events.append({"process": who, "at_s": at, "event": what})
    helper_end = max((e["end_s"] for e in events if e["process"] == "helper" and "end_s" in e), default=None)
    return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "helper_last_compile_end_s": helper_end,
            "events": sorted(events, key=lambda e: e.get("start_s", e.get("at_s")))}


def profile(threads: int | None) -> dict:
    """Per-kernel, per-entry-point, per-group and per-stage compile times of one cold demo, every
    kernel compiled in the one process (no compile helper)."""
    from twinrank.fast.runtime._compile_notice import GROUPS

    with tempfile.TemporaryDirectory(prefix="twinrank-cold-") as cache:
        out = Path(cache) / "profile.json"
        os.environ["TWINRANK_COMPILE_HELPER"] = "0"
        try:
            timed_run([str(Path(__file__).resolve()), "--child-profile", str(out)], cache, threads)
        finally:
            del os.environ["TWINRANK_COMPILE_HELPER"]
        data = json.loads(out.read_text())
    rows = data["rows"]
    kernels = sorted(rows, key=lambda r: -r["cpu_s"])
    entry = sorted((r for r in rows if r["depth"] == 0), key=lambda r: -r["inclusive_cpu_s"])
    groups: dict[str, float] = {}
    for r in entry:
        group = GROUPS.get(r["kernel"].split(".")[0], "kernels")
        groups[group] = groups.get(group, 0.0) + r["inclusive_cpu_s"]
    return {"process": data["process"], "n_compiled": len(rows),
            "compile_cpu_s": sum(r["cpu_s"] for r in rows),
            "groups_cpu_s": {g: round(t, 2) for g, t in sorted(groups.items(), key=lambda kv: -kv[1])},
            "stages_cpu_s": {k: round(t, 2) for k, t in sorted(data["stages"].items(), key=lambda kv: -kv[1])
                             if t >= 0.01},
            "kernels": [_rounded(r) for r in kernels],
            "entry_points": [{"kernel": r["kernel"], "signature": r["signature"],
                              "cpu_s": round(r["inclusive_cpu_s"], 2),
                              "wall_s": round(r["inclusive_wall_s"], 2)} for r in entry]}


def _rounded(r: dict) -> dict:
    return {"kernel": r["kernel"], "signature": r["signature"], "cpu_s": round(r["cpu_s"], 3),
            "wall_s": round(r["wall_s"], 3)}


def table(rows: list[dict], n: int) -> str:
    lines = [f"{'cpu s':>7} {'wall s':>7}  kernel (signature)"]
    lines += [f"{r['cpu_s']:7.2f} {r['wall_s']:7.2f}  {r['kernel']} ({r['signature'][:90]})" for r in rows[:n]]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold + warm pairs (default 3; 0: profile only)")
    parser.add_argument("--threads", type=int, default=2, help="NUMBA_NUM_THREADS of the runs (default 2)")
    parser.add_argument("--profile", action="store_true", help="also the per-kernel compile table")
    parser.add_argument("--top", type=int, default=30, help="kernels shown in the table (default 30)")
    parser.add_argument("--json", metavar="PATH", help="write every number here")
    parser.add_argument("--timeline", action="store_true", help="also one cold run's timeline of both "
                        "processes")
    parser.add_argument("--child-profile", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--child-timeline", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_profile:
        profile_child(args.child_profile)
        return
    if args.child_timeline:
        timeline_child(args.child_timeline)
        return
    out = {"machine": machine(), "command": "python " + " ".join(COMMAND), "threads": args.threads,
           "runs": []}
    for i in range(args.runs):
        pair = run_pair(args.threads)
        out["runs"].append(pair)
        print(f"run {i + 1}: cold {pair['cold']['wall_s']:.1f} s wall, {pair['cold']['cpu_s']:.1f} s cpu; "
              f"warm {pair['warm']['wall_s']:.1f} s wall, {pair['warm']['cpu_s']:.1f} s cpu", flush=True)
    for kind in ("cold", "warm"):
        out[f"{kind}_min"] = {k: min((r[kind][k] for r in out["runs"]), default=None) for k in ("wall_s", "cpu_s")}
    if args.runs:
        print(f"best of {args.runs}: cold {out['cold_min']['wall_s']:.1f} s wall / "
              f"{out['cold_min']['cpu_s']:.1f} s cpu; warm {out['warm_min']['wall_s']:.1f} s wall / "
              f"{out['warm_min']['cpu_s']:.1f} s cpu")
    if args.profile:
        out["profile"] = profile(args.threads)
        p = out["profile"]
        print(f"\n{p['n_compiled']} kernel signatures compiled, {p['compile_cpu_s']:.1f} s cpu in all "
              f"(process {p['process']['cpu_s']:.1f} s cpu, {p['process']['wall_s']:.1f} s wall)")
        print("per group (its entry points): " + ", ".join(f"{g} {t:.1f} s" for g, t in p["groups_cpu_s"].items()))
        print("per stage of numba: " + ", ".join(f"{g} {t:.1f} s" for g, t in list(p["stages_cpu_s"].items())[:12]))
        print("\nper kernel (exclusive):\n" + table(p["kernels"], args.top))
        print("\nper entry point (inclusive):\n" + table(p["entry_points"], args.top))
    if args.timeline:
        out["timeline"] = t = timeline(args.threads)
        print(f"\ntimeline of one cold run ({t['wall_s']:.1f} s wall, {t['cpu_s']:.1f} s cpu), seconds from "
              "its start:")
        for e in t["events"]:
            if "kernel" in e:
                print(f"{e['process']:>6} {e['start_s']:6.2f} - {e['end_s']:6.2f} ({e['cpu_s']:5.2f} s cpu) "
                      f"{e['kernel']}")
            else:
                print(f"{e['process']:>6} {e['at_s']:6.2f} {e['event']}")
    out["load_average_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

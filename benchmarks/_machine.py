"""What the benchmark ran on: CPU, cores, memory, load, library versions, date."""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("numpy", "numba", "lightgbm", "xgboost", "twinrank")


def machine() -> dict:
    info = {"cpu": _cpu_model(), "logical_cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "memory_gb": _memory_gb(), "load_average": os.getloadavg(), "python": platform.python_version(),
            "kernel": platform.release(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    info["commit"] = _commit()
    for package in PACKAGES:
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = "not installed"
    return info


def _commit() -> str:
    """The twinrank commit measured, and whether its twins' sources differ from it."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "fast", "reference"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" with uncommitted changes in fast/ or reference/" if dirty else "")


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            return round(int(line.split()[1]) / 2**20, 1)
    return float("nan")

"""A cold cache: the tree grower compiles in a helper process (``twinrank.fast.trees._warm``) whose cache
this process then loads, and no helper outlives its parent.

Each test runs fresh Python processes on their own empty numba cache. No timing is
asserted (``benchmarks/cold_start.py`` times); waits for a process to end are bounded.
"""
import os
import subprocess
import sys
import time

import pytest

COMPILES = """
from numba.core.event import Listener, register
class Count(Listener):
    def __init__(self): self.names = []
    def on_start(self, event): self.names.append(event.data["dispatcher"].py_func.__name__)
    def on_end(self, event): pass
"""


def run(code: str, cache, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_NUM_THREADS": "2",
                   "TWINRANK_COMPILE_NOTICE": "0", **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=environment)


def gone(pid: int, within: float = 120.0) -> bool:
    """Whether process ``pid`` ends (or is a zombie nobody waits for) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.2)
    return False


pytestmark = pytest.mark.skipif(not os.path.isdir("/proc") or (os.cpu_count() or 1) < 2,
                                reason="needs /proc and two cores")


@pytest.mark.slow
@pytest.mark.parametrize("big", [False, True])  # the grower without or with big nodes (_grower.big_nodes)
def test_the_helper_fills_the_cache_this_process_loads_and_then_ends(tmp_path, big):
    out = run(COMPILES + f"""
from twinrank.fast import _warm
_warm.start_grower_helper({big})
print(_warm._helper["process"].pid)
_warm.wait_for_helper()
count = Count(); register("numba:compile", count)
_warm.compile_grower({big})  # the fit's own call: loads grow from the helper's cache
print(_warm.grower_is_cached({big}), "grow" in count.names, _warm.grower_is_cached({not big}))
""", tmp_path)
    pid, state = out.stdout.split("\n", 1)
    assert state.split() == ["True", "False", "False"], out.stdout  # cached, this process compiled no grow
    assert gone(int(pid))
    warm = run(f"from twinrank.fast import _warm; _warm.start_grower_helper({big}); print(bool(_warm._helper))",
               tmp_path)
    assert warm.stdout.strip() == "False"  # a warm cache starts no helper


def test_one_thread_starts_no_helper(tmp_path):
    out = run("from twinrank.fast import _warm; _warm.start_grower_helper(); print(bool(_warm._helper))",
              tmp_path, NUMBA_NUM_THREADS="1")
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)"])  # atexit; the helper's own watch
def test_no_helper_outlives_its_parent(tmp_path, exit_call):
    out = run(f"""import os, sys
from twinrank.fast import _warm
_warm.start_grower_helper()
print(_warm._helper["process"].pid, flush=True)
{exit_call}
""", tmp_path)
    assert gone(int(out.stdout))


@pytest.mark.slow
@pytest.mark.parametrize("big", [False, True])
def test_the_split_search_a_fit_compiles_for_its_helper_is_the_one_the_grower_calls(tmp_path, big):
    """``_warm.compile_split_search`` (a fit's process, while its helper compiles the rest of the grower)
    compiles ``_evaluate_nodes`` with the signature ``grow`` calls it with: the grower compiled next, in
    the same process, compiles no second one."""
    out = run(COMPILES + f"""
from twinrank.fast import _warm
from twinrank.fast.trees._grower import _evaluate_nodes
_warm.compile_split_search({big})
count = Count(); register("numba:compile", count)
_warm.compile_grower({big})
print("grow" in count.names, "_evaluate_nodes" in count.names, len(_evaluate_nodes.overloads))
""", tmp_path, TWINRANK_COMPILE_HELPER="0")
    assert out.stdout.split() == ["True", "False", "1"], out.stdout


@pytest.mark.slow
def test_a_small_data_sets_grower_compiles_no_parallel_loop(tmp_path):
    """Without big nodes (``_grower.big_nodes``: no node can use threads) the exact and the quantized
    grower with their callees are compiled without any numba parallel loop (``_kernel_cache.serial``,
    pruned branches): a cold start on a small data set compiles none. The listener that sees them
    sees a parallel kernel compiled next (``control``)."""
    out = run(COMPILES + """
import numba
import numpy as np
count = Count(); register("numba:compile", count)
parallel = []
class Parallel(Listener):
    def on_start(self, event):
        if event.data["dispatcher"].targetoptions.get("parallel"):
            parallel.append(event.data["dispatcher"].py_func.__name__)
    def on_end(self, event): pass
register("numba:compile", Parallel())
from twinrank.fast.trees import _warm
from twinrank.fast.trees.tree import grow_tree
from twinrank.reference.trees.tree import quantize_gradients
binned, g, h, thresholds, params = _warm._tiny_tree(False)
grow_tree(binned, g, h, thresholds, params)
grow_tree(binned, g, h, thresholds, params, quantized=quantize_gradients(np.random.default_rng(0), g, h, 4, None))
print(count.names.count("grow"), sorted(set(parallel)))
@numba.njit(parallel=True)
def control(a):
    for i in numba.prange(len(a)):
        a[i] = i
control(np.zeros(3))
print(sorted(set(parallel)))
""", tmp_path, TWINRANK_COMPILE_HELPER="0")
    growers, control = out.stdout.splitlines()
    assert growers == "2 []", out.stdout  # the exact and the quantized grower, no parallel loop
    assert control == "['control']", out.stdout


def test_a_promised_kernel_is_waited_for_until_its_compiler_lets_go(tmp_path):
    """``wait_for_promise`` returns at once when nobody holds the promise, and otherwise once the
    process (here: this thread) that holds it (``promised``) has let go."""
    import threading

    from twinrank.fast.runtime._compile_lock import promised, wait_for_promise

    wait_for_promise(tmp_path, "nothing.lock")  # no such file: nothing to wait for
    waiter = threading.Thread(target=wait_for_promise, args=(tmp_path, "kernel.lock"))
    with promised(tmp_path, "kernel.lock"):
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive()  # still waiting while the promise is held
    waiter.join(timeout=60.0)
    assert not waiter.is_alive()
    wait_for_promise(tmp_path, "kernel.lock")  # let go: at once


def test_the_fit_and_its_helper_claim_each_scoring_job_once(tmp_path, monkeypatch):
    """``_warm._claimed``: the jobs claimed by a fit's process and by its helper (another process
    claiming in the same kernels folder for the same parent) are every job, none twice; the claims
    are removed once the helper has ended (``_unclaim``)."""
    from twinrank.fast.runtime import _numba_cache
    from twinrank.fast.trees import _warm

    monkeypatch.setattr(_numba_cache, "FOLDER", tmp_path)
    parent = os.getpid()
    fit = _warm._claimed(parent)
    first = [next(fit)]  # the fit claims one job, then the helper claims the rest as it goes
    helper = list(_warm._claimed(parent))
    rest = list(fit)
    assert sorted(map(_warm.SCORING.index, first + helper + rest)) == list(range(len(_warm.SCORING)))
    assert first and helper and not rest
    _warm._unclaim(parent)
    assert not list(tmp_path.iterdir())


def test_claims_of_ended_processes_are_swept_before_a_helper_starts(tmp_path, monkeypatch):
    """``_warm._sweep_claims``: the claim files of a process that ended without removing them (killed),
    and those of this process's id (a reused id), are removed; a live process's claims stay."""
    import subprocess
    import sys

    from twinrank.fast.runtime import _numba_cache
    from twinrank.fast.trees import _warm

    monkeypatch.setattr(_numba_cache, "FOLDER", tmp_path)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for owner in (ended.pid, os.getpid(), alive.pid):
            (tmp_path / f"warm-{owner}-0").touch()
        (tmp_path / "warm-unreadable-0").touch()
        _warm._sweep_claims()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"warm-{alive.pid}-0", "warm-unreadable-0"])
    finally:
        alive.kill()
        alive.wait()

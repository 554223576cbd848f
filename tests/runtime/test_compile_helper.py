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

"""Test configuration: hypothesis profiles and the twin registry.

``ci`` (used when CI=true) is deterministic and bounded; ``dev`` explores more.
Select one with ``HYPOTHESIS_PROFILE``.

The twin registry (``twinrank.testing.registry.REGISTRY``) names every twinned
component with its tolerance and input builder: a test that takes the argument
``twin_component`` runs once per registry row (``tests/testing/test_registry.py``).
"""
import os
import sys
from pathlib import Path

# The tests sit in the folders of the code they test; a test module may import a table of another
# folder's (``from test_tree import grow_with``), whichever folders a run selects.
sys.path[:0] = [str(folder) for folder in sorted(Path(__file__).parent.iterdir())
                if folder.is_dir() and any(folder.glob("test_*.py"))]

# OpenMP threads that spin after each parallel region starve the main thread on a busy
# 2-core machine; tests measure correctness, not speed. Must be set before numba starts.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_generate_tests(metafunc):
    """Parametrize ``twin_component`` over the twin registry, one test per component."""
    if "twin_component" in metafunc.fixturenames:
        from twinrank.testing.registry import REGISTRY

        metafunc.parametrize("twin_component", REGISTRY, ids=[row.name for row in REGISTRY])

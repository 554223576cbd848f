"""speed.py's results page keeps its scaling section across a run without ``--scaling``: the docs'
benchmark figure plots ``scaling_rows`` from benchmarks/RESULTS.json, so a run that dropped them
broke the docs build."""
import importlib
import json
from pathlib import Path

import pytest

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def speed(monkeypatch):
    monkeypatch.syspath_prepend(str(_BENCHMARKS))  # the benchmark imports its siblings by name
    return importlib.import_module("speed")


def test_a_run_without_scaling_carries_the_previous_section(speed):
    previous = json.loads((_BENCHMARKS / "RESULTS.json").read_text())
    carried = speed.carried_scaling(previous)
    assert carried["scaling_rows"] == previous["scaling_rows"]
    assert carried["lambda_cost"] == previous["lambda_cost"]
    assert carried["scaling_commit"] == previous.get("scaling_commit", previous["machine"]["commit"])


def test_the_page_names_the_commit_of_a_carried_section(speed):
    out = json.loads((_BENCHMARKS / "RESULTS.json").read_text())
    out["scaling_commit"] = "abc1234"
    assert "Measured at commit abc1234, before this page's run" in speed.markdown(out)
    out["scaling_commit"] = out["machine"]["commit"]
    assert "before this page's run" not in speed.markdown(out)


def test_nothing_to_carry_from_a_file_without_scaling(speed):
    assert speed.carried_scaling({"machine": {"commit": "abc1234"}}) == {}

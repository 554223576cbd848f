"""Every code block of the README runs as written, in order, in one empty folder.

The bash blocks run line by line (a trailing ``\\`` continues a line) and the Python blocks as
scripts, all in the same temporary folder, so each command finds the files the earlier ones
wrote, as a user's would. A command succeeds with status 0 unless its comment starts with
``exit N``; the Python block prints what the README says it prints. What is not run is listed in ``NOT_RUN`` with the reason; the ``pip install``
steps are not run (the test runs in the environment they made), and the grid runs in this
process instead of on the Dask cluster of ``--workers N``.
"""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from twinrank.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
INSTALL = re.compile(r'pip install -e (?:\.|"\.\[(\w+)\]")')
HANG = 900  # seconds: a hung command, not a slow one (verify takes ~10 s quiet, >300 s was seen at load 16)
DASK = re.compile(r" --(?:workers|scheduler) \S+")  # a Dask cluster: the command runs in process instead
NOT_RUN = {  # a README command this test does not run: why
    "python -m pytest -q": "the test suite, this test among them",
    "mkdocs serve": "a server, running until it is stopped",
    "mkdocs build --strict": "the documentation build, CI's docs job",
}


def readme_blocks() -> list:
    """The README's bash and Python blocks, in order, as ``(language, text)``."""
    return BLOCK.findall(README.read_text())


def bash_commands(text: str) -> list:
    """A bash block's commands as ``(command, comment)``, continued lines joined."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        command, _, comment = line.partition("#")
        if command.strip():
            commands.append((" ".join(command.split()), comment.strip()))
    return commands


def without_installs(command: str) -> str:
    """``command`` without its ``pip install ... &&`` steps."""
    return " && ".join(step.strip() for step in command.split("&&") if not INSTALL.fullmatch(step.strip()))


def expected_status(comment: str) -> int:
    """The exit status a command's comment promises (``# exit 1 ...``); 0 without one."""
    promised = re.match(r"exit (\d+)\b", comment)
    return int(promised.group(1)) if promised else 0


@pytest.mark.slow
def test_every_readme_block_runs_as_written_in_order(tmp_path):
    bin_dir = os.path.dirname(sys.executable)
    if shutil.which("twinrank", path=bin_dir) is None:
        pytest.skip("the twinrank command is not installed beside this Python")
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    ran, printed, skipped = [], [], set()
    for language, text in readme_blocks():
        if language == "python":
            result = subprocess.run([sys.executable, "-c", text], cwd=tmp_path, env=env,
                                    capture_output=True, text=True, timeout=HANG)
            assert result.returncode == 0, (text, result.stderr)
            printed.append(result.stdout.strip())
            continue
        for command, comment in bash_commands(text):
            command = DASK.sub("", without_installs(command))
            if command in NOT_RUN:
                skipped.add(command)
                continue
            result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                                    capture_output=True, text=True, timeout=HANG)
            assert result.returncode == expected_status(comment), (command, result.stderr[-2000:])
            assert "Traceback" not in result.stderr, (command, result.stderr[-2000:])
            ran.append(command)
    assert skipped == set(NOT_RUN), "NOT_RUN names a command the README no longer has"
    assert (tmp_path / "overfit.png").is_file() and (tmp_path / "mq2008.json").is_file()
    assert len(ran) > 20
    claim = re.search(r"It prints `(.*?)`", README.read_text()).group(1)  # "0.48..": digits follow
    assert any(re.fullmatch(r"\d*".join(map(re.escape, claim.split("..."))), out) for out in printed), printed


def test_every_extra_the_readme_installs_exists():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = {m.group(1) for m in INSTALL.finditer(README.read_text()) if m.group(1)}
    assert named and named <= set(extras), named - set(extras)
    experiments = README.read_text().split("Experiments, after", 1)[1]
    assert INSTALL.search(experiments).group(1) == "distributed"
    assert any(requirement.startswith("matplotlib") for requirement in extras["distributed"])


def test_grid_plot_without_matplotlib_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    code = main(["grid", "--folds", str(tmp_path), "--param", "max_leaves=7,15", "--output",
                 str(tmp_path / "results.csv"), "--plot", str(tmp_path / "overfit.png")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("twinrank grid: error: --plot needs matplotlib") and '".[distributed]"' in err

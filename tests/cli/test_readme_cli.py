"""The README's command-line example runs as written, from an empty folder."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SKIPPED = ("verify", "demo")  # long runs, each tested by its own test file


def readme_commands() -> list:
    section = README.read_text().split("## Command line", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_readme_cli_example_runs_as_written(tmp_path):
    commands = readme_commands()
    assert commands[0].startswith("twinrank data mq2008")  # the files the others read come first
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "twinrank"
        if words[1] in SKIPPED:
            continue
        result = subprocess.run([sys.executable, "-m", "twinrank.cli", *words[1:]], cwd=tmp_path,
                                capture_output=True, text=True)
        assert result.returncode == 0, (command, result.stderr)
    assert "ndcg@10" in result.stdout or "feature importance" in result.stdout

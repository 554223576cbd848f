"""Where a benchmark's results go: its report on stdout, and the JSON and markdown files asked for."""
from __future__ import annotations

import json
import os
from pathlib import Path


def save(result: dict, text: str, json_path: str | None, markdown_path: str | None, indent: int = 1) -> None:
    """Print ``text``; write ``result`` as JSON to ``json_path`` and ``text`` to ``markdown_path`` (each if
    given), each file written whole to a temporary beside it and then renamed into place."""
    print(text)
    if json_path:
        _write(json_path, json.dumps(result, indent=indent))
    if markdown_path:
        _write(markdown_path, text)


def _write(path: str, text: str) -> None:
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, target)

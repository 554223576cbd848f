"""MkDocs hook for the API reference of both twins.

1. Let mkdocstrings read ``twinrank`` from source. pyproject.toml maps the folders
   ``_twinrank/``, ``reference/``, ``fast/`` and ``testing/`` onto ``twinrank``,
   ``twinrank.reference``, ``twinrank.fast`` and ``twinrank.testing``; there is no
   ``twinrank/`` folder, so griffe (mkdocstrings' loader, which reads source files without
   importing them) cannot find the packages. This hook copies the folders' Python files into a
   temporary ``twinrank/`` folder before the build, puts it on the Python handler's search
   path, and removes it after the build. ``mkdocs serve`` watches those folders (``watch:`` in
   mkdocs.yml); every rebuild copies them again.
2. Keep the reference complete: every public module (no part of its path starts with ``_``)
   ``twinrank.<package>.<folder>.<name>`` must have a page
   ``docs/api/<package>/<folder>/<name>.md`` that renders ``::: twinrank.<package>.<folder>.<name>``,
   or the build warns (and ``strict: true`` makes the warning an error). The command modules
   of ``twinrank.cli`` are documented by their help, which ``docs/api/cli.md`` prints.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority, get_plugin_logger

PACKAGES = {"_twinrank": "", "reference": "reference", "fast": "fast", "testing": "testing"}  # folder: package
# (testing is not a twin: the twin registry and the tools that compare the two twins)
log = get_plugin_logger(__name__)
_tmp: tempfile.TemporaryDirectory | None = None


@event_priority(100)  # before mkdocstrings reads its handler configuration
def on_config(config):
    global _tmp
    _tmp = tempfile.TemporaryDirectory(prefix="twinrank-griffe-")
    for folder, package in PACKAGES.items():
        shutil.copytree(_root(config) / folder, Path(_tmp.name, "twinrank", package), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "datasets", "*.pyc"))
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [_tmp.name]
    return config


def on_files(files, config):
    for folder, package in PACKAGES.items():
        for module in sorted((_root(config) / folder).rglob("*.py")):
            parts = [*filter(None, [package]), *module.relative_to(_root(config) / folder).with_suffix("").parts]
            if any(part.startswith("_") for part in parts) or "__pycache__" in module.parts:
                continue
            if parts[0] == "cli":  # the commands: docs/api/cli.md prints each one's --help
                continue
            page, directive = f"api/{'/'.join(parts)}.md", f"::: twinrank.{'.'.join(parts)}"
            found = files.get_file_from_path(page)
            if found is None:
                log.warning(f"{module.relative_to(_root(config))} is public but has no API page docs/{page}")
            elif directive not in found.content_string:
                log.warning(f"docs/{page} does not render {directive}")
    return files


def on_post_build(config):
    if _tmp is not None:
        _tmp.cleanup()


def _root(config) -> Path:
    return Path(config.config_file_path).parent

"""MkDocs hook for the API reference of both twins.

1. Let mkdocstrings read ``twinrank.reference``, ``twinrank.fast`` and ``twinrank.testing``
   from source. pyproject.toml maps the folders ``reference/``, ``fast/`` and ``testing/``
   onto those package names; there is no ``twinrank/`` folder, so griffe (mkdocstrings' loader,
   which reads source files without importing them) cannot find the packages. This hook
   copies the folders' Python files into a temporary ``twinrank/`` folder before
   the build, puts it on the Python handler's search path, and removes it after
   the build. ``mkdocs serve`` watches those folders (``watch:`` in mkdocs.yml);
   every rebuild copies them again.
2. Keep the reference complete: every public module ``<package>/<name>.py`` must have
   a page ``docs/api/<package>/<name>.md`` that renders ``::: twinrank.<package>.<name>``,
   or the build warns (and ``strict: true`` makes the warning an error).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority, get_plugin_logger

TWINS = ("reference", "fast", "testing")  # twinrank.<package> lives in the folder <package>/
# (testing is not a twin: the twin registry and the tools that compare the two twins)
log = get_plugin_logger(__name__)
_tmp: tempfile.TemporaryDirectory | None = None


@event_priority(100)  # before mkdocstrings reads its handler configuration
def on_config(config):
    global _tmp
    _tmp = tempfile.TemporaryDirectory(prefix="twinrank-griffe-")
    for twin in TWINS:
        shutil.copytree(_root(config) / twin, Path(_tmp.name, "twinrank", twin),
                        ignore=shutil.ignore_patterns("__pycache__", "datasets", "*.pyc"))
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [_tmp.name]
    return config


def on_files(files, config):
    for twin in TWINS:
        for module in sorted((_root(config) / twin).glob("[!_]*.py")):
            page, directive = f"api/{twin}/{module.stem}.md", f"::: twinrank.{twin}.{module.stem}"
            found = files.get_file_from_path(page)
            if found is None:
                log.warning(f"{twin}/{module.name} is public but has no API page docs/{page}")
            elif directive not in found.content_string:
                log.warning(f"docs/{page} does not render {directive}")
    return files


def on_post_build(config):
    if _tmp is not None:
        _tmp.cleanup()


def _root(config) -> Path:
    return Path(config.config_file_path).parent

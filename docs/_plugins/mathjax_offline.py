"""MkDocs hook: MathJax served by the site itself, so formulas render offline.

The formulas (``pymdownx.arithmatex``, generic mode) are typeset in the browser by
MathJax 3.2.2. Rather than loading it from a CDN, which leaves every formula as raw
TeX for a reader without network access (or behind a proxy that blocks it), the
build copies MathJax into the site under ``javascripts/mathjax/``: the combined
``tex-mml-chtml.js`` component, the fonts of its CommonHTML output and the
components it loads on demand (TeX extensions, the menu, accessibility). The files
come from the PyPI package ``django-static-mathjax`` (MathJax's own release,
unchanged, as package data; pinned in the ``docs`` extra; Django is not needed to
read them). ``tests/project/test_docs_offline.py`` checks that the site loads no script,
style sheet or font from another host.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ENTRY = "tex-mml-chtml.js"  # the component mkdocs.yml's extra_javascript names
TARGET = "javascripts/mathjax"
SKIPPED_OUTPUT = "output/svg"  # tex-mml-chtml renders with CommonHTML only


def mathjax_root() -> Path:
    """The ``es5/`` folder of the installed MathJax release."""
    spec = importlib.util.find_spec("mathjax")
    root = None if spec is None or spec.origin is None else Path(spec.origin).parent / "static" / "mathjax" / "es5"
    if root is None or not (root / ENTRY).is_file():
        raise PluginError("the docs serve MathJax from the pip package django-static-mathjax; "
                          "install the docs extra: pip install -e '.[docs]'")
    return root


def on_files(files, config):
    root = mathjax_root()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if not path.is_file() or relative.startswith(SKIPPED_OUTPUT):
            continue
        if "/" not in relative and relative != ENTRY:
            continue  # the other combined components (tex-svg.js, mml-chtml.js, ...)
        files.append(File.generated(config, f"{TARGET}/{relative}", abs_src_path=str(path)))
    return files

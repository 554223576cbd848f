"""The documentation site reads offline: no script, style sheet or font from another host.

MathJax is served by the site itself (``docs/_plugins/mathjax_offline.py`` copies it from the
pinned ``django-static-mathjax`` package), and the theme uses system fonts. The built site is
checked too when a ``site/`` folder exists (``mkdocs build``); the configuration always.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = (ROOT / "mkdocs.yml").read_text()
REMOTE = re.compile(r"""(?:src|href)=["']?(?:https?:)?//[^"' >]+""")


def _uncommented(text: str) -> str:
    return "\n".join(line.split(" #")[0] for line in text.splitlines() if not line.lstrip().startswith("#"))


def test_the_configuration_loads_nothing_from_another_host():
    config = _uncommented(CONFIG)
    assert not re.search(r"https?://", config), "mkdocs.yml names a remote URL (a CDN?)"
    assert re.search(r"^\s+font: false", config, re.M), "the theme would load Google Fonts"
    assert "javascripts/mathjax/tex-mml-chtml.js" in config
    assert "docs/_plugins/mathjax_offline.py" in config


def test_the_renderer_is_pinned_in_the_docs_extra():
    pyproject = (ROOT / "pyproject.toml").read_text()
    docs_extra = pyproject[pyproject.index("docs = ["):]
    docs_extra = docs_extra[:docs_extra.index("]")]
    assert re.search(r'"django-static-mathjax==[\d.]+"', docs_extra)


def test_the_built_site_loads_nothing_from_another_host():
    site = ROOT / "site"
    if not (site / "index.html").exists():
        pytest.skip("no built site (run mkdocs build)")
    remote = {str(page.relative_to(site)): REMOTE.findall(re.sub(r"<a\s[^>]*>", "", page.read_text()))
              for page in site.rglob("*.html")}
    assert {page: urls for page, urls in remote.items() if urls} == {}
    assert (site / "javascripts" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert (site / "javascripts" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()

"""The "Read with the papers" pages: every excerpt's anchor resolves to lines of the reference."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# by its path: docs/tutorials on sys.path would shadow packages (its lightgbm.py is a tutorial)
_spec = importlib.util.spec_from_file_location("_papers", ROOT / "docs" / "tutorials" / "_papers.py")
_papers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_papers)
box, excerpt = _papers.box, _papers.excerpt

ANCHOR = re.compile(r'"(twinrank\.reference\.[\w.]+:[^"]+)"')
ANCHORS = sorted({(page.name, anchor) for page in (ROOT / "docs" / "papers").glob("*.md")
                  for anchor in ANCHOR.findall(page.read_text())})


def test_every_paper_has_a_page_with_anchors():
    assert {page for page, _ in ANCHORS} == {"wu2010.md", "lucchese2017.md", "mohan.md", "ganjisaffar2011.md",
                                             "ibrahim2021.md"}


@pytest.mark.parametrize("page, anchor", ANCHORS)
def test_each_anchor_resolves_to_reference_code(page, anchor):
    lines = excerpt(anchor).splitlines()
    assert lines and not lines[0].startswith(" ")
    if "@" in anchor:
        start, _, end = anchor.split("@", 1)[1].partition("..")
        assert start in lines[0] and end in lines[-1]


def test_a_vanished_anchor_stops_the_page():
    with pytest.raises(ValueError, match="no lines from 'for m in range' to 'no such line'"):
        excerpt("twinrank.reference.ensembles.boosting:run_boosting@for m in range..no such line")
    with pytest.raises(ValueError, match="has no gone_function"):
        box("x", [("a line", "twinrank.reference.ensembles.boosting:gone_function")])

"""docs/lambdas.md quotes the reference line by line: every quoted line must still be there."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "lambdas.md"
QUOTE = re.compile(r'```python title="reference/objectives.py"\n(.*?)```', re.DOTALL)


def test_every_quoted_line_is_in_the_reference():
    source = {line.strip() for line in (ROOT / "reference" / "objectives.py").read_text().splitlines()}
    quotes = QUOTE.findall(PAGE.read_text())
    assert len(quotes) >= 10
    quoted = [line.strip() for quote in quotes for line in quote.splitlines() if line.strip()]
    stale = [line for line in quoted if line not in source]
    assert not stale, f"docs/lambdas.md quotes lines that reference/objectives.py no longer has: {stale}"

"""docs/lambdas.md quotes the reference line by line: every quoted line must still be in the file it names."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "lambdas.md"
QUOTE = re.compile(r'```python title="(reference/[\w/]+\.py)"\n(.*?)```', re.DOTALL)


def test_every_quoted_line_is_in_the_reference():
    quotes = QUOTE.findall(PAGE.read_text())
    assert len(quotes) >= 10
    for path in {path for path, _ in quotes}:
        source = {line.strip() for line in (ROOT / path).read_text().splitlines()}
        quoted = [line.strip() for p, quote in quotes if p == path for line in quote.splitlines() if line.strip()]
        stale = [line for line in quoted if line not in source]
        assert not stale, f"docs/lambdas.md quotes lines that {path} no longer has: {stale}"

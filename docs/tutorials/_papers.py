"""Read with the papers: an algorithm box beside the reference code that does each of its lines.

The code is pulled from the source when the page is built, so it cannot drift from the package.
An *anchor* names it: ``"twinrank.reference.ensembles.boosting:run_boosting"`` (a function, class
or method, whole) or ``"...:run_boosting@for m in..run.add("`` (from the first line holding
``for m in`` to the next line holding ``run.add(``, both included). An anchor that no longer
resolves stops the build (and tests/project/test_papers.py names it).
"""
import html
import importlib
import inspect
import textwrap


def excerpt(anchor: str) -> str:
    """The source lines ``anchor`` names, dedented; a ``ValueError`` naming the anchor when it is gone."""
    target, _, lines = anchor.partition("@")
    module_name, _, qualname = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ValueError(f"anchor {anchor!r}: {module_name} has no {qualname}")
    source = inspect.getsource(obj).splitlines()
    if lines:
        start, _, end = lines.partition("..")
        first = next((i for i, line in enumerate(source) if start in line), None)
        last = next((i for i, line in enumerate(source) if i >= (first or 0) and end in line), None)
        if first is None or last is None:
            raise ValueError(f"anchor {anchor!r}: no lines from {start!r} to {end!r} in {qualname}")
        source = source[first:last + 1]
    return textwrap.dedent("\n".join(source))


def box(title: str, rows: list) -> str:
    """An HTML table: each line of the algorithm box (left) beside the code that does it (right).

    ``rows``: ``(line of the box, anchor or None)``; a line without an anchor belongs to the code of
    the line above it (a loop header, say).
    """
    cells = []
    for line, anchor in rows:
        code = "" if anchor is None else (
            f'<div class="twinrank-anchor">{html.escape(anchor.split("@")[0])}</div>'
            f"<pre><code>{html.escape(excerpt(anchor))}</code></pre>")
        cells.append(f"<tr><td><code>{html.escape(line)}</code></td><td>{code}</td></tr>")
    return (f'<table class="twinrank-papers"><thead><tr><th>{html.escape(title)}</th>'
            "<th>the reference</th></tr></thead><tbody>" + "".join(cells) + "</tbody></table>")

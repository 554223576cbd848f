"""The floor plan has no circles: no module of a twin imports itself through others.

Every import in every module of ``reference/`` and ``fast/`` counts, wherever it stands:
at the top, inside a function (the late import that hides a circle from Python but not
from a reader) or under ``if TYPE_CHECKING``. Relative imports and absolute
``twinrank.reference`` / ``twinrank.fast`` imports both make edges; a cycle in the graph
of either twin, or one through both, fails. And the modules split to remove circles
still offer every public name at the import path it had.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TWINS = ("reference", "fast")  # twinrank.<twin> lives in the folder <twin>/

def modules() -> dict[str, Path]:
    """``{"reference.metrics": path, ..., "reference": path of __init__.py, ...}``."""
    found = {}
    for twin in TWINS:
        for path in sorted((ROOT / twin).glob("*.py")):
            found[twin if path.stem == "__init__" else f"{twin}.{path.stem}"] = path
    return found


def imported(node: ast.AST, twin: str, known: dict) -> list[str]:
    """The twinrank modules an ``import`` / ``from ... import`` statement of ``twin`` loads."""
    if isinstance(node, ast.Import):
        targets = [alias.name.removeprefix("twinrank.") for alias in node.names
                   if alias.name.startswith("twinrank.")]
        return [t for t in targets if t in known]
    if node.level > 1 or node.level == 0 and not (node.module or "").startswith("twinrank."):
        return []
    base = twin if node.level == 1 else node.module.removeprefix("twinrank.").split(".")[0]
    module = node.module.removeprefix("twinrank.") if node.level == 0 else \
        (f"{twin}.{node.module}" if node.module else twin)
    if module not in known:
        return []
    if module != base:
        return [module]
    # "from . import a, b" loads the submodules a and b (or names of the package)
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` over both twins, every import statement counted."""
    known = modules()
    graph = {name: set() for name in known}
    for name, path in known.items():
        twin = name.split(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(t for t in imported(node, twin, known) if t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_graph_sees_function_level_and_absolute_imports():
    graph = import_graph()
    assert "reference.errors" in graph["reference.data"]  # top level, relative
    assert "reference.conventions" in graph["fast.metrics"]  # top level, absolute
    assert "fast._threads" in graph["fast._cli_evaluate"]  # inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_cycles():
    """Not within a twin, and not through both (fast imports reference, never the reverse)."""
    assert cycles(import_graph()) == []


# Every public name of the modules split into private siblings, at the import path it had before.
NAMES_BEFORE_THE_SPLIT = {
    "metrics": ["Convention", "CONVENTIONS", "DEFAULT_CONVENTION", "get_convention", "gain", "discount", "relevant",
                "err_grades", "doc_ids_from_comments", "Prepared", "prepare", "check_k", "dcg", "ndcg", "mean_ndcg",
                "average_precision", "precision", "err", "reciprocal_rank", "auc", "pauc", "rmse", "rmse_per_query",
                "parse_metric", "Metric", "metric_by_name", "evaluate"],
    "letor": ["read_letor", "write_letor", "read_scores", "write_scores"],
    "data": ["Dataset", "load_mq2008", "query_folds", "query_rows", "subsample_queries"],
}


FAST_OWN = {"dcg", "ndcg", "mean_ndcg", "average_precision", "precision", "err", "reciprocal_rank", "auc", "pauc",
            "rmse", "rmse_per_query", "metric_by_name", "evaluate"}  # the metric functions fast computes itself


@pytest.mark.parametrize("module", sorted(NAMES_BEFORE_THE_SPLIT))
def test_public_names_keep_their_import_paths(module):
    reference = importlib.import_module(f"twinrank.reference.{module}")
    fast = importlib.import_module(f"twinrank.fast.{module}")
    for name in NAMES_BEFORE_THE_SPLIT[module]:
        assert hasattr(reference, name) and hasattr(fast, name), name
        if name not in FAST_OWN:  # data, not algorithm: the same object in both twins
            assert getattr(fast, name) is getattr(reference, name), name

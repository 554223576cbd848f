"""The floor plan (docs/architecture.md), as a rule on folders.

Every module of twinrank sits in a folder, and every folder on a floor: the shared data model at
the bottom, then the kernels (each concern a folder), the engine (the seam between the twins), the
loops, the rankers, the analyses, and the layers that are not twinned on top. A module imports only
modules of its own folder and of folders on its floor or below, counting imports written inside
functions; no two folders import each other, and no module imports itself through others.
The folders of the fast twin are the reference's (plus ``runtime``), with the same module names.
"""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from twinrank import _layout

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"reference": "reference", "fast": "fast", "testing": "testing", "_twinrank": ""}  # folder: name

FLOOR = _layout.FLOOR  # {folder: floor}, bottom 0


def modules() -> dict[str, Path]:
    """``{"reference.evaluation.metrics": path, "reference.io": path of its __init__.py, ...}``."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts]).strip(".") or "twinrank"] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The twinrank modules ``name`` imports anywhere (top level, in a function, under TYPE_CHECKING)."""
    found = set()
    package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".")
            elif (node.module or "").startswith("twinrank"):
                base = node.module.removeprefix("twinrank").lstrip(".") or "twinrank"
            else:
                continue
            submodules = {f"{base}.{a.name}".removeprefix("twinrank.") for a in node.names} & set(known)
            found |= submodules
            if len(submodules) < len(node.names) and base in known:
                found.add(base)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("twinrank.") for a in node.names} & set(known)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found |= {node.args[0].value.removeprefix("twinrank.")} & set(known)
    return found - {name}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def folder_of(name: str, known: dict) -> str | None:
    """A module's folder; a twin's root modules are the data model, but for the engine; None: a package's face."""
    if known[name].stem == "__init__" or name == "twinrank":
        return None
    parts = name.split(".")
    if parts[0] == "cli":
        return "cli"
    if parts[0] in ("reference", "fast") and len(parts) == 2:
        return f"{parts[0]}.engine" if parts[1] == "engine" else f"{parts[0]}.<root>"
    return ".".join(parts[:-1]) or "twinrank"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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


def folder_graph() -> dict[str, dict[str, str]]:
    """``{folder: {folder it imports: one import that does it}}``."""
    known = modules()
    edges: dict[str, dict[str, str]] = {}
    for name, children in import_graph().items():
        source = folder_of(name, known)
        for child in children:
            target = folder_of(child, known)
            if source and target and source != target:
                edges.setdefault(source, {}).setdefault(target, f"{name} -> {child}")
    return edges


def test_the_graph_sees_function_level_absolute_and_relative_imports():
    graph = import_graph()
    assert "reference.errors" in graph["reference.io.data"]
    assert "reference.evaluation.conventions" in graph["fast.evaluation.metrics"]
    assert "fast.runtime._threads" in graph["cli.evaluation.evaluate"]  # inside a function
    assert "cli._common" in graph["cli"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others():
    assert cycles(import_graph()) == []


def test_no_two_folders_import_each_other():
    assert cycles({a: set(b) for a, b in folder_graph().items()}) == []


def test_every_folder_has_a_floor():
    known = modules()
    assert sorted({folder_of(name, known) for name in known} - {None} - set(FLOOR)) == []


def test_each_folder_imports_only_its_floor_and_below():
    upward = [f"{example} (floor {FLOOR[source]} -> {FLOOR[target]})"
              for source, targets in folder_graph().items() for target, example in targets.items()
              if FLOOR[target] > FLOOR[source]]
    assert not upward, upward


def test_the_fast_twin_has_the_reference_folders_and_names():
    for folder in sorted(set(_layout.FAST_FOLDERS) - {"", "runtime"}):
        assert folder in _layout.REFERENCE_FOLDERS, folder
        public = [name for name in _layout.FAST_FOLDERS[folder] if not name.startswith("_")]
        assert set(public) <= set(_layout.REFERENCE_FOLDERS[folder]), folder


@pytest.mark.parametrize("twin", ["reference", "fast"])
def test_the_layout_table_is_the_folders(twin):
    on_disk = {str(p.relative_to(ROOT / twin).with_suffix("")).replace("/", ".")
               for p in (ROOT / twin).rglob("*.py") if "__pycache__" not in p.parts and p.stem != "__init__"}
    assert on_disk == set(_layout.PATHS[twin].values())


def test_no_folder_holds_more_than_15_modules():
    for folder in PACKAGES:
        for directory in [ROOT / folder, *(p.parent for p in (ROOT / folder).rglob("__init__.py"))]:
            assert len(list(directory.glob("*.py"))) <= 15, directory


def test_no_fast_module_only_re_exports():
    """A fast module computes something (a kernel, an engine, an estimator bound to it), or it goes."""
    for path in sorted((ROOT / "fast").rglob("*.py")):
        if path.stem == "__init__" or "__pycache__" in path.parts:
            continue
        body = ast.parse(path.read_text()).body
        own = [node for node in body if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr))
               and not (isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"])]
        assert own, f"{path.relative_to(ROOT)} only re-exports"


def test_a_shared_folder_is_only_a_face_in_the_fast_twin():
    """A folder of shared modules (``_layout.SHARED_FOLDERS``) holds, in the fast twin, one ``__init__.py``
    importing the reference's folder; every other fast folder is in the layout table."""
    for init in sorted((ROOT / "fast").glob("*/__init__.py")):
        folder = init.parent.name
        if folder in _layout.SHARED_FOLDERS:
            assert folder in _layout.REFERENCE_FOLDERS and folder not in _layout.FAST_FOLDERS, folder
            assert [p.name for p in init.parent.glob("*.py")] == ["__init__.py"], folder
            imported = {node.module for node in ast.walk(ast.parse(init.read_text()))
                        if isinstance(node, (ast.ImportFrom))}
            assert imported == {f"twinrank.reference.{folder}"}, folder
        else:
            assert folder in _layout.FAST_FOLDERS, folder


def test_no_command_line_inside_an_algorithm_folder():
    for twin in ("reference", "fast", "testing"):
        for path in (ROOT / twin).rglob("*.py"):
            assert not re.search(r"^\s*(import argparse|from argparse)", path.read_text(), re.M), path


def test_pyproject_lists_every_package():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(["twinrank", *filter(None, [PACKAGES[folder]]), *init.parent.relative_to(ROOT / folder).parts])
             for folder in PACKAGES for init in (ROOT / folder).rglob("__init__.py")}
    assert listed == found


def _functions(folder: str):
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "__pycache__" not in path.parts:
            source = path.read_text()
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield path, source, node


def test_no_function_takes_more_than_16_positional_arguments():
    """Estimator constructors aside (one keyword per parameter), 16 positional and 24 arguments in
    all at most: a kernel takes named tuples of what belongs together (``_grower.GrowerData``)."""
    crowded = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
               for folder in PACKAGES for path, _, node in _functions(folder) if node.name != "__init__"
               for positional in [len(node.args.posonlyargs) + len(node.args.args)]
               if positional > 16 or positional + len(node.args.kwonlyargs) > 24]
    assert not crowded, crowded


def test_every_reference_function_reads_in_one_screen():
    """At most 60 lines of code (no docstring, blank or comment line) per function of the reference."""
    long = []
    for path, source, node in _functions("reference"):
        body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
        start = body[0].lineno if body else node.end_lineno
        code = [line for line in source.splitlines()[start - 1:node.end_lineno]
                if line.strip() and not line.strip().startswith("#")]
        if len(code) > 60:
            long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({len(code)} lines)")
    assert not long, long

"""The floor plan (docs/architecture.md): no import circle in either twin, and each module imports
only its own floor and the floors below, counting imports written inside functions."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TWINS = ("reference", "fast")


DATA_MODEL, KERNELS, SEAM, LOOPS, ESTIMATORS, CLI = range(1, 7)
FLOORS = {
    **dict.fromkeys(["errors", "constants", "_atomic", "params", "sampling", "data", "letor",
                     "_letor_reader", "_letor_tokens", "_letor_queries", "model", "conventions",
                     "_param_checks", "_tree_params", "_algorithm_params", "_model_json", "_ensemble",
                     "_mcrank_model", "_missing_values", "explain", "lightgbm_text", "_lightgbm_reader",
                     "_lightgbm_writer", "_numba_cache", "_feature_costs", "_model_fields", "_tree_structure",
                     "_bag_model", "_dart_params", "_quantize"],
                    DATA_MODEL),
    **dict.fromkeys(["binning", "tree", "predict", "objectives", "metrics", "metric_names",
                     "_grower", "_histogram", "_layout", "_partition", "_split", "_lambdarank",
                     "_ranking", "_quickscorer", "_graded_kernels", "_binary_kernels", "_threads",
                     "_losses", "_objective_checks", "_tree_checks", "_compile_notice", "_combine_setup",
                     "_combine_kernels", "combine", "exits",
                     "cost", "stats", "_warm",
                     "_diagnostics_kernels", "bag_rules", "_bag_kernels", "_packed_histogram",
                     "_quantize_kernels", "_simd", "_query_pairs", "_workspace", "_skipped_bins", "_counts"],
                    KERNELS),
    "engine": SEAM,
    **dict.fromkeys(["boosting", "missing", "_forest_loop", "reweight", "runs", "staged", "grid"], LOOPS),
    **dict.fromkeys(["diagnostics", "dropout"], LOOPS),
    **dict.fromkeys(["_estimator", "_sklearn_protocol", "lambdamart", "gbrt", "forest", "classification",
                     "sklearn", "transfer", "bagging", "pools", "dart"], ESTIMATORS),
    **dict.fromkeys(["cli", "_cli_common", "_progress", "_cli_train", "_cli_predict", "_cli_evaluate",
                     "_cli_demo", "_cli_verify", "_cli_inspect", "_cli_data", "_cli_export", "_cli_import",
                     "_cli_combine", "_cli_cost", "_cli_compare",
                     "_cli_grid"], CLI),
    "_cli_diagnose": CLI,
    "_cli_experiment": CLI,
    "_cli_exercise": CLI,
}


def modules(twin: str) -> dict:
    return {path.stem: path for path in sorted((ROOT / twin).glob("*.py")) if path.stem != "__init__"}


def imports(twin: str, path: Path, names: set) -> set:
    """The sibling modules ``path`` imports anywhere (top level or inside a function)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 or base.startswith(f"twinrank.{twin}"):
                base = base.removeprefix(f"twinrank.{twin}").lstrip(".")
                if base:
                    found.add(base.split(".")[0])
                else:
                    found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith(f"twinrank.{twin}.")}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args:
            found |= {name for name in names if name.startswith(_literal_prefix(node.args[0], twin))}
    return found & names


def _literal_prefix(arg, twin: str) -> str:
    """The module-name prefix of an ``import_module`` argument within ``twin`` ("\\0": none)."""
    text = arg.value if isinstance(arg, ast.Constant) else (
        arg.values[0].value if isinstance(arg, ast.JoinedStr) and arg.values
        and isinstance(arg.values[0], ast.Constant) else "")
    prefix = f"twinrank.{twin}."
    return text[len(prefix):] if isinstance(text, str) and text.startswith(prefix) else "\0"


def graph(twin: str) -> dict:
    found = modules(twin)
    return {name: {m for m in imports(twin, path, set(found)) if m != name}
            for name, path in found.items()}


@pytest.mark.parametrize("twin", TWINS)
def test_no_import_circle(twin):
    edges = graph(twin)
    state, stack = {}, []

    def visit(name):
        state[name] = "open"
        stack.append(name)
        for child in sorted(edges[name]):
            if state.get(child) == "open":
                raise AssertionError(f"{twin}: import circle {' -> '.join(stack[stack.index(child):] + [child])}")
            if child not in state:
                visit(child)
        stack.pop()
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name)


@pytest.mark.parametrize("twin", TWINS)
def test_every_module_has_a_floor(twin):
    assert not sorted(set(modules(twin)) - set(FLOORS))


@pytest.mark.parametrize("twin", TWINS)
def test_each_floor_imports_only_the_floors_below(twin):
    upward = [f"{name} (floor {FLOORS[name]}) imports {m} (floor {FLOORS[m]})"
              for name, children in graph(twin).items() if name in FLOORS
              for m in children if m in FLOORS and FLOORS[m] > FLOORS[name]]
    assert not upward, upward

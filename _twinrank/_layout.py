"""Where each module of the twins lives, and the flat paths of release 0.1 kept as import aliases.

Both twins group their modules in the same folders, one concern each (docs/architecture.md):
``io`` (data and model files), ``evaluation``, ``features``, ``trees``, ``attribution`` (what each
feature adds to a score), ``losses``, ``ensembles`` (the loops),
``rankers`` (the papers' estimators), ``combination``, ``costs``, ``analysis``; the fast twin adds
``runtime`` (what numba needs to run). A module's *short name* is its file's name
(``"metrics"``, ``"objectives"``): the twin registry, :func:`twinrank.testing.assert_twins_agree`
and the command line name modules that way, and :func:`twin_module` finds the twin's module.
A module only the reference has (the shared data model: ``data``, ``model``, ``params`` ...) is
the reference's in both twins. A folder whose every module is shared (``plot``: drawings of a fitted
model, which read nothing else) has in the fast twin only its package face, an ``__init__.py``
that imports the reference's (``SHARED_FOLDERS``), so ``twinrank.fast.plot`` is an import path too.

Release 0.1 kept every module in one flat folder per twin. Its import paths
(``twinrank.reference.metrics``, ``twinrank.fast.cli``, ``twinrank.testing.exercises``) keep
working for one release: :class:`MovedModules`, installed by ``import twinrank``, answers them
with the module's new home and a ``DeprecationWarning`` naming it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

REFERENCE_FOLDERS = {
    "": ["constants", "errors", "params", "sampling", "_algorithm_params", "_dart_params", "_feature_costs",
         "_param_checks", "_tree_params", "_streams", "engine"],
    "io": ["data", "letor", "_letor_queries", "_letor_reader", "_letor_tokens", "model", "_ensemble",
           "_model_fields", "_model_json", "_tree_structure", "_atomic", "_missing_values", "_mcrank_model",
           "_bag_model"],
    "evaluation": ["metrics", "conventions", "metric_names", "_ranking", "stats", "rank_correlation", "variance"],
    "features": ["query_norm"],
    "trees": ["tree", "_histogram", "_split", "_checks", "_quantize", "binning", "predict", "explain"],
    "attribution": ["contributions"],
    "losses": ["objectives", "_loss", "_objective_checks", "_query_pairs"],
    "costs": ["cumulative", "exits"],
    "combination": ["combine", "_combine_setup", "bag_rules"],
    "ensembles": ["boosting", "dropout", "_forest_loop", "reweight", "runs", "run_record"],
    "rankers": ["_estimator", "_fit_data", "gbrt", "lambdamart", "dart", "forest", "classification", "bagging",
                "transfer",
                "missing"],
    "analysis": ["diagnostics", "staged", "pools", "grid", "cost"],
    "plot": ["_fitted", "importance", "metric_history", "tree_diagram"],
}
FAST_FOLDERS = {
    "": ["engine"],
    "runtime": ["_threads", "_numba_cache", "_cache_manifest", "_compile_lock", "_kernel_cache", "_compile_notice",
                "_simd", "_workspace"],
    "evaluation": ["metrics", "_binary_kernels", "_graded_kernels", "_ranking", "stats", "rank_correlation", "variance",
                   "_variance_kernels"],
    "features": ["query_norm"],
    "trees": ["tree", "_grower", "_histogram", "_split", "_counts", "_layout", "_packed_histogram", "_partition",
              "_skipped_bins", "_quantize_kernels", "_warm", "binning", "predict", "_quickscorer"],
    "attribution": ["contributions"],
    "losses": ["objectives", "_lambdarank"],
    "costs": ["exits"],
    "combination": ["combine", "_combine_kernels", "bag_rules", "_bag_kernels"],
    "ensembles": ["boosting", "reweight"],
    "rankers": ["gbrt", "lambdamart", "dart", "forest", "classification", "bagging", "transfer", "missing"],
    "analysis": ["diagnostics", "staged", "cost"],
}
FOLDERS = {"reference": REFERENCE_FOLDERS, "fast": FAST_FOLDERS}
SHARED_FOLDERS = ["plot"]  # the reference's modules; the fast twin's folder holds their face only

# The floors (docs/architecture.md; tests/project/test_floors.py holds the code to them): a module imports
# only its own folder and folders on its floor or below. A twin's root modules are the shared data
# model ("<root>"), but for its engine, the seam; the ``twinrank.cli`` folders are one floor.
FLOORS = [
    ("data model", ["reference.<root>", "reference.io", "twinrank"]),
    ("support", ["fast.runtime", "interop"]),
    ("kernels", [f"{twin}.{folder}" for twin in ("reference", "fast")
                 for folder in ("evaluation", "features", "trees", "attribution", "losses", "costs", "combination")]
     + ["sklearn"]),  # sklearn: its scorer computes metrics; the rankers inherit its estimator protocol
    ("the seam", ["reference.engine", "fast.engine"]),
    ("loops", ["reference.ensembles", "fast.ensembles", "executors"]),
    ("rankers", ["reference.rankers", "fast.rankers"]),
    ("analysis", ["reference.analysis", "fast.analysis", "reference.plot"]),  # plot: reads a fitted model
    ("tools", ["testing", "grading"]),
    ("command line", ["cli"]),
]
FLOOR = {folder: floor for floor, (_, folders) in enumerate(FLOORS) for folder in folders}
RENAMED = {"_tree_checks": "_checks", "_losses": "_loss"}  # 0.1's name -> the name in its folder


def _paths(folders: dict) -> dict:
    return {name: f"{folder}.{name}" if folder else name for folder, names in folders.items() for name in names}


PATHS = {twin: _paths(folders) for twin, folders in FOLDERS.items()}


def twin_module(twin: str, name: str) -> str:
    """The full name of module ``name`` of ``twin`` ("reference" or "fast").

    ``twin_module("fast", "metrics")`` is ``"twinrank.fast.evaluation.metrics"``; a module the fast
    twin does not have (the shared data model) is the reference's: ``twin_module("fast", "data")``
    is ``"twinrank.reference.io.data"``. A name with a dot is already a path within the twin.
    """
    if "." in name:
        return f"twinrank.{twin}.{name}"
    for owner in (twin, "reference"):
        if name in PATHS[owner]:
            return f"twinrank.{owner}.{PATHS[owner][name]}"
    raise ModuleNotFoundError(f"twinrank has no module {name!r} (modules: {sorted(PATHS['reference'])})")


def _old_paths() -> dict:
    """``{path of 0.1: path now}`` for every module that moved."""
    moved = {}
    for twin in FOLDERS:
        for name in {**PATHS["reference"], **PATHS[twin]}:
            new = twin_module(twin, name)
            moved[f"twinrank.{twin}.{name}"] = new
    for old, new in RENAMED.items():
        moved[f"twinrank.reference.{old}"] = twin_module("reference", new)
    cli = {"cli": "", "_cli_common": "._common", "_progress": "._progress", "_cli_demo": ".demo",
           "_cli_data": ".data", "_cli_verify": ".verify", "_cli_exercise": ".exercise",
           "_cli_train": ".training.train", "_cli_predict": ".training.predict", "_cli_grid": ".training.grid",
           "_cli_experiment": ".training.experiment", "_cli_evaluate": ".evaluation.evaluate",
           "_cli_compare": ".evaluation.compare", "_cli_diagnose": ".evaluation.diagnose",
           "_cli_cost": ".evaluation.cost", "_cli_combine": ".evaluation.combine",
           "_cli_inspect": ".model_files.inspect", "_cli_export": ".model_files.export",
           "_cli_import": ".model_files.import_model"}
    moved.update({f"twinrank.fast.{old}": f"twinrank.cli{new}" for old, new in cli.items()})
    grading = {"exercises": "exercises", "_grading": "_grader", "_exercise_solutions": "_solutions",
               "_exercise_mistakes": "_mistakes", "_exercise_oracles": "_oracles",
               "_exercise_strategies": "_strategies"}
    moved.update({f"twinrank.testing.{old}": f"twinrank.grading.{new}" for old, new in grading.items()})
    outside = {"sklearn": "twinrank.sklearn.glue", "_sklearn_protocol": "twinrank.sklearn.protocol",
               "lightgbm_text": "twinrank.interop.lightgbm_text",
               "_lightgbm_reader": "twinrank.interop._lightgbm_reader",
               "_lightgbm_writer": "twinrank.interop._lightgbm_writer"}
    for twin in FOLDERS:
        moved.update({f"twinrank.{twin}.{old}": new for old, new in outside.items()})
    return {old: new for old, new in moved.items() if old != new}


MOVED = _old_paths()


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an import of a 0.1 path with a module that forwards to the module's new home.

    The alias is a module of its own (so the real module keeps its name and ``__spec__``) whose
    every attribute is the new module's: ``from twinrank.reference.metrics import ndcg`` gives the
    very function ``twinrank.reference.evaluation.metrics.ndcg``.
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; the old path works until twinrank 0.3",
                      DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        alias = types.ModuleType(spec.name, target.__doc__)
        alias.__getattr__ = lambda name: getattr(target, name)
        alias.__dir__ = lambda: dir(target)
        alias.__all__ = getattr(target, "__all__", [n for n in dir(target) if not n.startswith("_")])
        return alias

    def exec_module(self, module):
        """Nothing to run: the alias forwards every attribute to the moved module."""


def install() -> None:
    """Put :class:`MovedModules` on ``sys.meta_path`` once (``import twinrank`` calls this)."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())

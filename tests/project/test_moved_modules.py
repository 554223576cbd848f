"""Release 0.1's import paths keep working for one release: each answers with its module's new home."""
import importlib
import sys
import warnings

import pytest

from twinrank import _layout

# Every public name of the modules split into private siblings in 0.1, at the import path it had.
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


def old_module(path: str):
    """Import ``path`` afresh (as a user's first import would) and return it with its warnings."""
    sys.modules.pop(path, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(path)
    return module, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("old", sorted(_layout.MOVED))
def test_every_old_path_answers_with_the_new_module(old):
    module, said = old_module(old)
    new = importlib.import_module(_layout.MOVED[old])
    assert said == [f"{old} moved to {new.__name__}; the old path works until twinrank 0.3"]
    public = getattr(new, "__all__", [n for n in vars(new) if not n.startswith("_")])
    assert all(getattr(module, name) is getattr(new, name) for name in public)


@pytest.mark.parametrize("module", sorted(NAMES_BEFORE_THE_SPLIT))
def test_public_names_keep_their_import_paths(module):
    reference, _ = old_module(f"twinrank.reference.{module}")
    fast, _ = old_module(f"twinrank.fast.{module}")
    for name in NAMES_BEFORE_THE_SPLIT[module]:
        assert hasattr(reference, name) and hasattr(fast, name), name
        if name not in FAST_OWN:  # data, not algorithm: the same object in both twins
            assert getattr(fast, name) is getattr(reference, name), name


def test_from_import_of_an_old_module_name_and_the_command():
    sys.modules.pop("twinrank.fast.cli", None)
    with pytest.warns(DeprecationWarning, match="twinrank.cli"):
        from twinrank.fast.cli import main
    assert main is importlib.import_module("twinrank.cli").main
    assert _layout.twin_module("fast", "data") == "twinrank.reference.io.data"  # shared: the reference's
    assert _layout.twin_module("fast", "metrics") == "twinrank.fast.evaluation.metrics"
    with pytest.raises(ModuleNotFoundError, match="no module 'nonsense'"):
        _layout.twin_module("reference", "nonsense")

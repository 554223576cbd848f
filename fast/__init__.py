"""twinrank.fast: the numba-parallel twin of ``twinrank.reference``.

Same modules, same public names, same signatures, same results (within the
tolerances the agreement tests document). Shared data structures (Dataset,
Tree, Ensemble, parameters, errors, sampling) live once, in
``twinrank.reference``; the everyday ones are importable from here too.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment
already sets it: numba's OpenMP threads otherwise spin between the many short
parallel regions of tree growing and, on a busy machine, starve the thread that
drives them (on a loaded 2-core machine a fit ran ten times slower).

Importing it also chooses where numba caches the compiled kernels
(:mod:`twinrank.fast.runtime._numba_cache`: a private folder named by a hash of the twins' sources, in
``NUMBA_CACHE_DIR`` if set, else beside them, or in a per-user directory when they are read-only;
``CACHE_DIR`` names it, and is None when no folder can be written and the kernels run uncached).

The everyday names are importable from the package itself, as in
``from twinrank.fast import LambdaMART, load_mq2008, evaluate`` (the same names as
``twinrank.reference``). They are loaded on first use (PEP 562 ``__getattr__``), so
``from twinrank.fast import Dataset`` does not pay for numba's import; the ``TYPE_CHECKING``
block names the same imports for readers, type checkers and the import-graph test.
"""
import importlib
import os
from typing import TYPE_CHECKING

from twinrank._layout import twin_module
from twinrank.fast.runtime import _numba_cache
from twinrank.reference import __version__

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
CACHE_DIR = _numba_cache.choose()  # before any kernel module imports numba (``_numba_cache``)

if TYPE_CHECKING:
    from twinrank.fast.evaluation.metrics import evaluate
    from twinrank.fast.evaluation.rank_correlation import footrule, kendall_tau, spearman_rho
    from twinrank.fast.features.query_norm import query_level_normalize
    from twinrank.fast.rankers.classification import McRank
    from twinrank.fast.rankers.forest import IGBRT, RandomForest
    from twinrank.fast.rankers.gbrt import GBRT
    from twinrank.fast.rankers.lambdamart import LambdaMART
    from twinrank.reference.io.data import Dataset, drop_single_label_queries, load_mq2008
    from twinrank.reference.io.letor import read_letor
    from twinrank.reference.io.model import load_model
    from twinrank.reference.trees.explain import dump_tree, feature_importances

_MODULE_OF = {"LambdaMART": "lambdamart", "GBRT": "gbrt", "RandomForest": "forest",
              "IGBRT": "forest", "McRank": "classification", "Dataset": "data",
              "load_mq2008": "data", "read_letor": "letor", "evaluate": "metrics",
              "load_model": "model", "feature_importances": "explain", "dump_tree": "explain",
              "drop_single_label_queries": "data", "query_level_normalize": "query_norm",
              "kendall_tau": "rank_correlation", "spearman_rho": "rank_correlation",
              "footrule": "rank_correlation"}

__all__ = [*_MODULE_OF, "__version__"]


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(twin_module("fast", _MODULE_OF[name])), name)
    globals()[name] = value  # the next look-up is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""twinrank.reference: the readable NumPy specification of every twinrank algorithm.

It never imports numba. ``twinrank.fast`` has the same modules, names and
signatures, and the agreement tests pin the two together.

The everyday names are importable from the package itself, as in
``from twinrank.reference import LambdaMART, load_mq2008, evaluate``; everything
else from its module (``twinrank.reference.metrics.ndcg``). scikit-learn glue:
:mod:`twinrank.reference.sklearn` (imported only on request).
"""
from importlib.metadata import PackageNotFoundError, version

from .classification import McRank
from .data import Dataset, load_mq2008
from .explain import dump_tree, feature_importances
from .forest import IGBRT, RandomForest
from .gbrt import GBRT
from .lambdamart import LambdaMART
from .letor import read_letor
from .metrics import evaluate
from .model import load_model

try:
    __version__ = version("twinrank")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["LambdaMART", "GBRT", "RandomForest", "IGBRT", "McRank", "Dataset", "load_mq2008",
           "read_letor", "evaluate", "load_model", "feature_importances", "dump_tree",
           "__version__"]

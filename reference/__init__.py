"""twinrank.reference: the readable NumPy specification of every twinrank algorithm.

It never imports numba. ``twinrank.fast`` has the same modules, names and
signatures, and the agreement tests pin the two together.

The everyday names are importable from the package itself, as in
``from twinrank.reference import LambdaMART, load_mq2008, evaluate``; everything
else from its module (``twinrank.reference.evaluation.metrics.ndcg``). scikit-learn glue:
:mod:`twinrank.sklearn.glue` (imported only on request).
"""
from importlib.metadata import PackageNotFoundError, version

from twinrank.reference.evaluation.metrics import evaluate
from twinrank.reference.evaluation.rank_correlation import footrule, kendall_tau, spearman_rho
from twinrank.reference.features.query_norm import query_level_normalize
from twinrank.reference.io.data import Dataset, drop_single_label_queries, load_mq2008
from twinrank.reference.io.letor import read_letor
from twinrank.reference.io.model import load_model
from twinrank.reference.rankers.classification import McRank
from twinrank.reference.rankers.forest import IGBRT, RandomForest
from twinrank.reference.rankers.gbrt import GBRT
from twinrank.reference.rankers.lambdamart import LambdaMART
from twinrank.reference.trees.explain import dump_tree, feature_importances

try:
    __version__ = version("twinrank")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["LambdaMART", "GBRT", "RandomForest", "IGBRT", "McRank", "Dataset", "load_mq2008",
           "read_letor", "evaluate", "load_model", "feature_importances", "dump_tree",
           "drop_single_label_queries", "query_level_normalize", "kendall_tau", "spearman_rho", "footrule",
           "__version__"]

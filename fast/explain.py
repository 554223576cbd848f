"""Feature importances and tree dumps (defined once, in ``twinrank.reference.explain``).

They read only the shared model format, so both twins use the same code and a model
from either twin gives the same answer.
"""
from twinrank.reference.explain import (KINDS, dump_model, dump_tree, feature_importances,
                                        tree_importances)

__all__ = ["feature_importances", "tree_importances", "dump_tree", "dump_model", "KINDS"]

"""The model format (shared data model, defined once in ``twinrank.reference.model``)."""
from twinrank.reference.model import BagModel, Ensemble, McRankModel, MissingValues, Tree, load_model

__all__ = ["Tree", "Ensemble", "McRankModel", "BagModel", "MissingValues", "load_model"]

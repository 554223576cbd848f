"""The model format (shared data model, defined once in ``twinrank.reference.model``)."""
from twinrank.reference.model import Ensemble, McRankModel, MissingValues, Tree, load_model

__all__ = ["Tree", "Ensemble", "McRankModel", "MissingValues", "load_model"]

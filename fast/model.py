"""The model format (shared data model, defined once in ``twinrank.reference.model``)."""
from twinrank.reference.model import Ensemble, Tree

__all__ = ["Tree", "Ensemble"]

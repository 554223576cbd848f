"""Parameter objects (shared data model, defined once in ``twinrank.reference.params``)."""
from twinrank.reference.params import BoostParams, ForestParams, TreeParams

__all__ = ["TreeParams", "BoostParams", "ForestParams"]

"""Parameter objects (shared data model, defined once in ``twinrank.reference.params``)."""
from twinrank.reference.params import TreeParams

__all__ = ["TreeParams"]

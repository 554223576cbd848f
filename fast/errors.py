"""The error types (shared data model, defined once in ``twinrank.reference.errors``)."""
from twinrank.reference.errors import DataFormatError, ModelFormatError, ParameterError, TwinrankError

__all__ = ["TwinrankError", "ParameterError", "DataFormatError", "ModelFormatError"]

"""Data sets and readers (shared data model, defined once in ``twinrank.reference.data``)."""
from twinrank.reference.data import Dataset

__all__ = ["Dataset"]

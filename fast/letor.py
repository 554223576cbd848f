"""LETOR / SVMlight files (shared, defined once in ``twinrank.reference.letor``).

Reading and writing files is data, not algorithm: both twins use the same
NumPy parser (not a numba kernel), so a file reads to the same :class:`Dataset`
whichever twin reads it.
"""
from twinrank.reference.letor import read_letor, read_scores, write_letor, write_scores

__all__ = ["read_letor", "write_letor", "read_scores", "write_scores"]

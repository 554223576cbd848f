"""Evaluation conventions (shared, defined once in ``twinrank.reference.conventions``).

What a label is worth, how ranks discount it and how ties and edge cases count is
data, not algorithm: both twins use the same :class:`Convention` objects, presets
and input checks, so a metric means the same thing whichever twin computes it.
"""
from twinrank.reference.conventions import (
    CONVENTIONS, DEFAULT_CONVENTION, Convention, Prepared, check_k, discount, doc_ids_from_comments, err_grades,
    gain, get_convention, prepare, relevant,
)

__all__ = ["Convention", "CONVENTIONS", "DEFAULT_CONVENTION", "Prepared", "get_convention", "gain", "discount",
           "relevant", "err_grades", "doc_ids_from_comments", "prepare", "check_k"]

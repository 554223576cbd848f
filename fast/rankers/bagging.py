"""Numba-parallel twin of `twinrank.reference.rankers.bagging`: the same bag, members on the fast LambdaMART."""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers import bagging as _reference
from twinrank.reference.rankers.bagging import (
    ALGORITHM,
    BagModel,
    member_queries,
    member_seeds,
    run_bag_scores,
)

__all__ = ["BLMART", "BagModel", "bag_scores", "member_seeds", "member_queries", "ALGORITHM"]


def bag_scores(model: BagModel, X, query_offsets):
    """The bag's score of every row of ``X`` (queries by ``query_offsets``), on this twin."""
    return run_bag_scores(FAST, model, X, query_offsets)


class BLMART(_reference.BLMART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.bagging.BLMART`.\n" + (_reference.BLMART.__doc__ or "")
    engine = FAST

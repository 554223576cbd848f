"""Numba-parallel twin of `twinrank.reference.rankers.gbrt`: the same estimator on the engine ``FAST``.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers import gbrt as _reference
from twinrank.reference.rankers.gbrt import averaged, counting_from

__all__ = ["GBRT", "averaged", "counting_from"]


class GBRT(_reference.GBRT):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.gbrt.GBRT`.\n" + (
        _reference.GBRT.__doc__ or "")
    engine = FAST

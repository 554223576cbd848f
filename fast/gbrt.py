"""Numba-parallel twin of `twinrank.reference.gbrt`: the same estimator on the engine ``FAST``.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from twinrank.reference import gbrt as _reference
from twinrank.reference.gbrt import averaged, counting_from

from .engine import FAST

__all__ = ["GBRT", "averaged", "counting_from"]


class GBRT(_reference.GBRT):
    __doc__ = "Numba-parallel twin of `twinrank.reference.gbrt.GBRT`.\n" + (
        _reference.GBRT.__doc__ or "")
    engine = FAST

"""Numba-parallel twin of `twinrank.reference.gbrt`: the same estimator on the fast kernels.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference import gbrt as _reference
from twinrank.reference.gbrt import averaged, counting_from

from . import boosting, objectives, predict
from . import missing as missing_strategies
from ._threads import threads

__all__ = ["GBRT", "averaged", "counting_from"]


class GBRT(_reference.GBRT):
    __doc__ = "Numba-parallel twin of `twinrank.reference.gbrt.GBRT`.\n" + (
        _reference.GBRT.__doc__ or "")

    _engine = SimpleNamespace(boosting=boosting, objectives=objectives, predict=predict,
                              missing=missing_strategies)

    def _threads(self):
        return threads(self.n_threads)

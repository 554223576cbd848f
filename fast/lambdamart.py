"""Numba-parallel twin of `twinrank.reference.lambdamart`: the same estimator on the fast kernels.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference import lambdamart as _reference
from twinrank.reference.lambdamart import TARGETS, parse_target

from . import boosting, objectives, predict
from . import missing as missing_strategies
from ._threads import threads

__all__ = ["LambdaMART", "parse_target", "TARGETS"]


class LambdaMART(_reference.LambdaMART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.lambdamart.LambdaMART`.\n" + (
        _reference.LambdaMART.__doc__ or "")

    _engine = SimpleNamespace(boosting=boosting, objectives=objectives, predict=predict,
                              missing=missing_strategies)

    def _threads(self):
        return threads(self.n_threads)

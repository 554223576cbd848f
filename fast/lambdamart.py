"""Numba-parallel twin of `twinrank.reference.lambdamart`: the same estimator on the engine ``FAST``.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from twinrank.reference import lambdamart as _reference
from twinrank.reference.lambdamart import TARGETS, parse_target

from .engine import FAST

__all__ = ["LambdaMART", "parse_target", "TARGETS"]


class LambdaMART(_reference.LambdaMART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.lambdamart.LambdaMART`.\n" + (
        _reference.LambdaMART.__doc__ or "")
    engine = FAST

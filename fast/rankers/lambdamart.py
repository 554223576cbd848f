"""Numba-parallel twin of `twinrank.reference.rankers.lambdamart`: the same estimator on the engine ``FAST``.

``n_threads`` sets numba's thread count during ``fit`` and ``predict``; the
model does not depend on it.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers import lambdamart as _reference
from twinrank.reference.rankers.lambdamart import TARGETS, parse_target

__all__ = ["LambdaMART", "parse_target", "TARGETS"]


class LambdaMART(_reference.LambdaMART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.lambdamart.LambdaMART`.\n" + (
        _reference.LambdaMART.__doc__ or "")
    engine = FAST

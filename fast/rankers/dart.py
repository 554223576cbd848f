"""Numba-parallel twin of `twinrank.reference.rankers.dart`: DART and X-DART on the engine ``FAST``.

The loop (drop counts, dropout draws, normalisation, pruning, snapshots) is the reference's
:func:`twinrank.reference.ensembles.dropout.run_dart`; here it runs on the fast kernels. ``n_threads``
sets numba's thread count; the model does not depend on it.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.rankers import dart as _reference
from twinrank.reference.rankers.dart import DROP_STRATEGIES, DARTParams

__all__ = ["DART", "XDART", "DARTParams", "DROP_STRATEGIES"]


class DART(_reference.DART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.dart.DART`.\n" + (_reference.DART.__doc__ or "")
    engine = FAST


class XDART(_reference.XDART):
    __doc__ = "Numba-parallel twin of `twinrank.reference.rankers.dart.XDART`.\n" + (_reference.XDART.__doc__ or "")
    engine = FAST

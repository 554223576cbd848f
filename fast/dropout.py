"""Numba-parallel twin of `twinrank.reference.dropout`: the same DART / X-DART loop on the fast kernels.

The loop is the reference's :func:`twinrank.reference.dropout.run_dart`; it takes the engine
whose kernels it runs on (the fast estimators pass :data:`twinrank.fast.engine.FAST`).
"""
from __future__ import annotations

from twinrank.reference.dropout import TIE_GRID, DropCount, normalisation, on_grid, run_dart

__all__ = ["run_dart", "DropCount", "normalisation", "on_grid", "TIE_GRID"]

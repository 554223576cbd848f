"""Numba twins of :mod:`twinrank.reference.attribution`: TreeSHAP contributions, parallel over rows."""

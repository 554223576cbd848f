"""Numba twins of :mod:`twinrank.reference.evaluation`: the metrics, one thread per query."""

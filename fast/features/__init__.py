"""Numba twins of :mod:`twinrank.reference.features`: the query-level normalisation, one thread per range of queries."""

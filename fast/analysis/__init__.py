"""Numba twins of :mod:`twinrank.reference.analysis`: the bias-variance terms."""

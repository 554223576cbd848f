"""Numba twins of :mod:`twinrank.reference.combination`: the exact line search in bounded memory."""

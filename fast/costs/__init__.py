"""Numba twins of :mod:`twinrank.reference.costs`: model cost and early exits inside the fast scorer."""

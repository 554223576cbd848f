"""Numba twins of :mod:`twinrank.reference.trees`: binning, the compiled tree grower and its histogram,
split and partition kernels, and scoring (QuickScorer)."""

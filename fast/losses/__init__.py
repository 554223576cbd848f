"""Numba twins of :mod:`twinrank.reference.losses`: the LambdaRank kernel and quantized gradients."""

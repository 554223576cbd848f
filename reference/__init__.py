"""twinrank.reference: the readable NumPy specification of every twinrank algorithm.

It never imports numba. ``twinrank.fast`` has the same modules, names and
signatures, and the agreement tests pin the two together.
"""

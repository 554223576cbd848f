"""twinrank.fast: the numba-parallel twin of ``twinrank.reference``.

Same modules, same public names, same signatures, same results (within the
tolerances the agreement tests document). Shared data structures (Dataset,
Tree, Ensemble, parameters, errors, sampling) live once, in
``twinrank.reference``, and are re-exported here.
"""

"""twinrank.fast: the numba-parallel twin of ``twinrank.reference``.

Same modules, same public names, same signatures, same results (within the
tolerances the agreement tests document). Shared data structures (Dataset,
Tree, Ensemble, parameters, errors, sampling) live once, in
``twinrank.reference``, and are re-exported here.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment
already sets it: numba's OpenMP threads otherwise spin between the many short
parallel regions of tree growing and, on a busy machine, starve the thread that
drives them (measured: 100 LambdaMART trees on MQ2008 took 12.5 s instead of 1.1 s
on 2 threads of a loaded 2-core machine).
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

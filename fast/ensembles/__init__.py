"""The boosting loop of :mod:`twinrank.reference.ensembles` on the fast kernels."""

"""Numba-parallel twin of `twinrank.reference.ensembles.boosting`: the same loop on the fast kernels.

The loop (sampling order, stopping rules, model assembly) is the reference's
:func:`twinrank.reference.ensembles.boosting.run_boosting`; it runs here on the engine
:data:`twinrank.fast.engine.FAST`.
"""
from __future__ import annotations

from twinrank.fast.engine import FAST
from twinrank.reference.ensembles.boosting import Objective, StoppingRule, run_boosting

__all__ = ["boost", "run_boosting", "StoppingRule", "Objective"]


def boost(train, objective, params, *, valid=None, init_model=None, init_scores=None,
          valid_init_scores=None, algorithm="gbrt", model_params=None, base_score=0.0,
          callback=None, costs=None):
    """Numba-parallel twin of `twinrank.reference.ensembles.boosting.boost` (same loop, engine ``FAST``)."""
    return run_boosting(FAST, train, objective, params, valid=valid, init_model=init_model,
                        init_scores=init_scores, valid_init_scores=valid_init_scores,
                        algorithm=algorithm, model_params=model_params, base_score=base_score,
                        callback=callback, costs=costs)

"""Numba-parallel twin of `twinrank.reference.boosting`: the same loop on the fast kernels.

The loop (sampling order, stopping rules, model assembly) is the reference's
:func:`twinrank.reference.boosting.run_boosting`; only the kernels it calls differ.
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference.boosting import Objective, StoppingRule, run_boosting

from . import binning, metrics, predict, tree

KERNELS = SimpleNamespace(
    bin_thresholds=binning.bin_thresholds, apply_bins=binning.apply_bins,
    grow_tree=tree.grow_tree, predict_tree_binned=predict.predict_tree_binned,
    predict_ensemble=predict.predict_ensemble, evaluate=metrics.evaluate,
)

__all__ = ["boost", "run_boosting", "StoppingRule", "Objective", "KERNELS"]


def boost(train, objective, params, *, valid=None, init_model=None, init_scores=None,
          valid_init_scores=None, algorithm="gbrt", model_params=None, base_score=0.0,
          callback=None):
    """Numba-parallel twin of `twinrank.reference.boosting.boost` (same loop, fast kernels)."""
    return run_boosting(KERNELS, train, objective, params, valid=valid, init_model=init_model,
                        init_scores=init_scores, valid_init_scores=valid_init_scores,
                        algorithm=algorithm, model_params=model_params, base_score=base_score,
                        callback=callback)

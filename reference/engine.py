"""The one seam between the twins: an :class:`Engine` names the kernels a twin supplies.

Every shared loop (boosting, forest, imputation) takes an engine and calls only
its fields; nothing else chooses between ``reference`` and ``fast``. There is one
engine per twin: :data:`REFERENCE` here, ``twinrank.fast.engine.FAST`` in the fast
twin, and a fast estimator is the reference's class with ``engine = FAST``.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

from twinrank.reference._param_checks import check_bool, check_n_threads
from twinrank.reference.attribution import contributions
from twinrank.reference.combination import bag_rules, combine
from twinrank.reference.costs import exits
from twinrank.reference.evaluation import metrics, variance
from twinrank.reference.losses import objectives
from twinrank.reference.trees import binning, predict, tree


@dataclass(frozen=True)
class Engine:
    """The kernels of one twin (each field: the function or loss class of that name).

    Attributes
    ----------
    name : ``"reference"`` or ``"fast"``
    bin_thresholds, apply_bins : :mod:`binning`
    grow_tree, grow_trees : :mod:`tree` (one tree; a forest's batch of trees)
    quantize_gradients : :func:`tree.quantize_gradients` (a round's stochastic rounding, quantized training)
    predict_tree, predict_tree_binned, predict_ensemble : :mod:`predict`
    add_leaf_values : :func:`predict.add_leaf_values` (a round's step on rows whose leaves are known)
    predict_contributions : :func:`contributions.predict_contributions` (per-feature contributions, TreeSHAP)
    predict_exits, frozen_now : :mod:`exits` (scoring with early exits; the documents a checkpoint stops)
    squared_error, logistic, lambdarank : :mod:`objectives`' loss classes
    evaluate : :func:`metrics.evaluate`
    decompose : :func:`variance.decompose` (a score matrix's bias and variance terms)
    optimal_combination : :func:`combine.optimal_combination` (the exact line search of ``step="optimal"``)
    combine_scores : :func:`bag_rules.combine_scores` (a bag's members' scores, combined per query)
    threads : ``threads(n_threads)``, the context the kernels run in
    low_memory : ``low_memory(on)``, the context a fit's trees grow in (``FitParams.low_memory``)
    """

    name: str
    bin_thresholds: Callable
    apply_bins: Callable
    grow_tree: Callable
    grow_trees: Callable
    quantize_gradients: Callable
    predict_tree: Callable
    predict_tree_binned: Callable
    add_leaf_values: Callable
    predict_ensemble: Callable
    predict_contributions: Callable
    predict_exits: Callable
    frozen_now: Callable
    squared_error: type
    logistic: type
    lambdarank: type
    evaluate: Callable
    decompose: Callable
    optimal_combination: Callable
    combine_scores: Callable
    threads: Callable
    low_memory: Callable


def no_threads(n_threads):
    """The reference runs on the calling thread: ``n_threads`` is checked as the fast twin checks it, then ignored."""
    check_n_threads("n_threads", n_threads)
    return contextlib.nullcontext()


def one_layout(low_memory):
    """The reference keeps no second layout of the bins: ``low_memory`` is checked as the fast twin checks it,
    then ignored."""
    check_bool("low_memory", low_memory)
    return contextlib.nullcontext()


REFERENCE = Engine(
    name="reference",
    bin_thresholds=binning.bin_thresholds, apply_bins=binning.apply_bins,
    grow_tree=tree.grow_tree, grow_trees=tree.grow_trees, quantize_gradients=tree.quantize_gradients,
    predict_tree=predict.predict_tree, predict_tree_binned=predict.predict_tree_binned,
    add_leaf_values=predict.add_leaf_values,
    predict_ensemble=predict.predict_ensemble,
    predict_contributions=contributions.predict_contributions,
    predict_exits=exits.predict_exits, frozen_now=exits.frozen_now,
    squared_error=objectives.SquaredError, logistic=objectives.Logistic,
    lambdarank=objectives.LambdaRank,
    evaluate=metrics.evaluate, decompose=variance.decompose,
    optimal_combination=combine.optimal_combination,
    combine_scores=bag_rules.combine_scores,
    threads=no_threads,
    low_memory=one_layout,
)

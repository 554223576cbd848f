r"""DART and X-DART rankers: LambdaMART with dropout, and with dropout and pruning.

DART (Vinayak & Gilad-Bachrach, AISTATS 2015) mutes $k$ random trees of the ensemble
while it fits the next one, then rescales so the new tree does not overshoot; X-DART
(Lucchese, Nardini, Orlando, Perego & Trani, SIGIR 2017) removes the muted trees for good
whenever the model without them, plus the new tree, has a lower validation loss than any
model before: a smaller ensemble of about the same quality. The loop, its normalisation
rule and the order of the random draws: :mod:`~twinrank.reference.ensembles.dropout`.

Every LambdaMART tree and lambda parameter applies; a model keeps snapshots of itself at
the ``snapshot_sizes`` it passed, scored by ``predict(X, n_trees=size)``.
"""
from __future__ import annotations

from types import SimpleNamespace

from twinrank.reference._dart_params import DROP_STRATEGIES, DARTParams
from twinrank.reference.ensembles.dropout import run_dart
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metric_names import parse_metric
from twinrank.reference.params import BoostParams, FitParams, LambdaRankParams, TreeParams, from_names
from twinrank.reference.rankers.lambdamart import LambdaMART

__all__ = ["DART", "XDART", "DARTParams", "DROP_STRATEGIES"]


class DART(LambdaMART):
    r"""LambdaMART with dropout: each iteration mutes $k$ trees, fits a tree, and normalises.

    Parameters
    ----------
    n_trees : the target size $N$ of the ensemble.
    learning_rate : $\eta$: a new tree enters at $\eta / (k + \eta)$ of its Newton values and
        the $k$ dropped trees are scaled by $k / (k + \eta)$ ($\eta$ when $k = 0$).
    drop, drop_rate, drop_k, drop_step, drop_max, drop_max_rate : the number $k$ of trees
        each iteration drops: ``"ratio"`` $\lfloor r |E| \rfloor$, ``"fixed"``, or ``"adaptive"``
        (:class:`~twinrank.reference.params.DARTParams`).
    max_iterations : the iteration cap (None: ``3 * n_trees``).
    prune_metric : X-DART's validation metric $M$; the loss is $1 - M$. DART records it
        in the history when given validation data.
    snapshot_sizes : ensemble sizes whose model is kept in the model file (``predict(X, n_trees=size)``).
    max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2, min_gain_to_split,
    split_gain, query_subsample, feature_fraction, max_bins, subsample_for_bin, sigma, truncation, normalize,
    target, metric, convention, init_model, missing, seed, n_threads, low_memory, verbose :
        as :class:`~twinrank.reference.rankers.lambdamart.LambdaMART`'s. Feature costs, optimal steps and
        early stopping are not offered: trees are rescaled and removed after they are grown.
    """

    param_objects = (TreeParams, BoostParams, LambdaRankParams, DARTParams, FitParams)
    model_algorithm = "dart"
    prune = False  # X-DART's pruning test

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
                 drop=DARTParams.drop, drop_rate=DARTParams.drop_rate, drop_k=DARTParams.drop_k,
                 drop_step=DARTParams.drop_step, drop_max=DARTParams.drop_max,
                 drop_max_rate=DARTParams.drop_max_rate, max_iterations=DARTParams.max_iterations,
                 prune_metric=DARTParams.prune_metric, snapshot_sizes=DARTParams.snapshot_sizes,
                 max_leaves=TreeParams.max_leaves, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, split_gain=TreeParams.split_gain,
                 query_subsample=BoostParams.query_subsample,
                 feature_fraction=TreeParams.feature_fraction, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 sigma=LambdaRankParams.sigma, truncation=LambdaRankParams.truncation,
                 normalize=LambdaRankParams.normalize, target=LambdaRankParams.target,
                 metric=BoostParams.metric, convention=BoostParams.convention,
                 init_model=FitParams.init_model, missing=FitParams.missing, seed=BoostParams.seed,
                 n_threads=FitParams.n_threads, low_memory=FitParams.low_memory, verbose=FitParams.verbose):
        self._set_init_params(locals())

    def validated_params(self) -> SimpleNamespace:
        params = super().validated_params()
        params.dart = from_names(DARTParams, self.get_params())
        try:
            parse_metric(params.dart.prune_metric)
        except ValueError as e:
            raise ParameterError(f"prune_metric: {e}") from None
        return params

    def planned_trees(self) -> int:
        """The most iterations ``fit`` runs (progress displays count iterations)."""
        return self.n_trees if not self.prune else from_names(DARTParams, self.get_params()).iteration_cap(
            self.n_trees)

    def needs_validation(self, params) -> list[str]:
        """Also: X-DART's pruning test and the adaptive strategy read the validation loss every iteration."""
        needs = super().needs_validation(params)
        if self.prune:
            needs.append("X-DART's pruning test")
        if params.dart.drop == "adaptive":
            needs.append("the adaptive drop strategy (drop='adaptive')")
        return needs

    def fit_model(self, params, train, valid, *, init_score, callback):
        """The DART / X-DART loop (:func:`~twinrank.reference.ensembles.dropout.run_dart`) on LambdaRank's gradients."""
        return run_dart(self.engine, train, self.lambdarank_loss(params, train), params.boost, params.dart, prune=self.prune, valid=valid,
                        init_model=params.prior, init_scores=init_score,
                        algorithm=self.model_algorithm, model_params=self._model_params(), callback=callback)


class XDART(DART):
    r"""X-DART: DART that removes the dropped trees whenever that lowers the best validation loss.

    The parameters are :class:`DART`'s; ``drop`` defaults to the paper's best strategy,
    ``"adaptive"`` with ``drop_max`` = 5 (Lucchese et al. 2017, Sec. 4). ``fit`` needs an ``eval_set``.
    """

    model_algorithm = "x-dart"
    prune = True

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
                 drop="adaptive", drop_rate=DARTParams.drop_rate, drop_k=DARTParams.drop_k,
                 drop_step=DARTParams.drop_step, drop_max=DARTParams.drop_max,
                 drop_max_rate=DARTParams.drop_max_rate, max_iterations=DARTParams.max_iterations,
                 prune_metric=DARTParams.prune_metric, snapshot_sizes=DARTParams.snapshot_sizes,
                 max_leaves=TreeParams.max_leaves, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, split_gain=TreeParams.split_gain,
                 query_subsample=BoostParams.query_subsample,
                 feature_fraction=TreeParams.feature_fraction, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 sigma=LambdaRankParams.sigma, truncation=LambdaRankParams.truncation,
                 normalize=LambdaRankParams.normalize, target=LambdaRankParams.target,
                 metric=BoostParams.metric, convention=BoostParams.convention,
                 init_model=FitParams.init_model, missing=FitParams.missing, seed=BoostParams.seed,
                 n_threads=FitParams.n_threads, low_memory=FitParams.low_memory, verbose=FitParams.verbose):
        self._set_init_params(locals())

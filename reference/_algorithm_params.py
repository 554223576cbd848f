r"""The parameters of one algorithm each: random forests, LambdaRank's lambdas, averaged runs, McRank."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from twinrank.reference._feature_costs import cost_array, read_costs
from twinrank.reference._param_checks import (
    check_bool,
    check_fraction,
    check_int,
    check_processes,
    check_sigma,
    metric_list,
)
from twinrank.reference._tree_params import TreeParams, one_or_tuple
from twinrank.reference.errors import ParameterError


@dataclass(frozen=True)
class ForestParams:
    r"""How a random forest for ranking is grown (Breiman 2001; Ibrahim 2021's RF-point).

    Parameters
    ----------
    n_trees : int
        Trees $T$; the forest scores $\frac1T \sum_t f_t(x)$.
    tree : TreeParams
        How each tree is grown; ``tree.feature_fraction`` gives the k random
        features of each node.
    bootstrap : bool
        Grow each tree on a bootstrap sample of its rows (drawn with replacement).
    query_subsample : float
        Fraction of the queries each tree sees, drawn without replacement per tree
        (Ibrahim 2021's sub-sample size); with ``bootstrap`` the bootstrap is drawn
        from the rows of those queries.
    max_bins, subsample_for_bin, metric, convention, seed : as in :class:`BoostParams` (every metric of ``metric``
        is recorded; a forest has no early stopping).
    cost_batch_size : int
        Trees grown on the same feature costs: with ``free_after_use``, the costs of
        the features a batch split on are zeroed after the batch (Mohan 2010, Ch. 6).
        Independent of the thread count, so the forest is too.
    """

    n_trees: int = 100
    tree: TreeParams = TreeParams()
    bootstrap: bool = True
    query_subsample: float = 1.0
    max_bins: int = 255
    subsample_for_bin: int | None = 200_000
    metric: str = "ndcg@10"
    convention: str = "lightgbm"
    seed: int = 0
    cost_batch_size: int = 16

    def __post_init__(self):
        check_int("n_trees", self.n_trees, low=1)
        object.__setattr__(self, "metric", one_or_tuple(metric_list("metric", self.metric)))
        if not isinstance(self.tree, TreeParams):
            raise ParameterError(f"tree must be a TreeParams, got {type(self.tree).__name__}")
        if not isinstance(self.bootstrap, bool):
            raise ParameterError(f"bootstrap must be True or False, got {self.bootstrap!r}")
        check_fraction("query_subsample", self.query_subsample)
        check_int("max_bins", self.max_bins, low=2, high=255)
        if self.subsample_for_bin is not None:
            check_int("subsample_for_bin", self.subsample_for_bin, low=1)
        check_int("seed", self.seed, low=0)
        check_int("cost_batch_size", self.cost_batch_size, low=1)

    @property
    def metrics(self) -> tuple:
        """Every metric recorded, in the order given (``metric`` split at its commas)."""
        return metric_list("metric", self.metric)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CostParams:
    r"""Feature costs of cost-aware trees (Mohan 2010, Ch. 6; :mod:`~twinrank.reference.analysis.cost`).

    Parameters
    ----------
    feature_costs : array, path or None
        The cost $c(f) \ge 0$ of computing each feature: one number per feature, or a
        file of ``feature cost`` lines (LETOR feature ids, 1-based); splits then score
        $\mathrm{gain} - \lambda_c\,c(f)$ with ``cost_lambda``. None: no costs.
    free_after_use : bool
        A feature some earlier tree split on costs nothing more (its value is computed
        once per document): boosting zeroes its cost after each tree, a forest after
        each batch of ``cost_batch_size`` trees.
    """

    feature_costs: object = None
    free_after_use: bool = True
    read: object = field(default=None, init=False, repr=False, compare=False)  # ``feature_costs`` read once

    def __post_init__(self):
        object.__setattr__(self, "read", read_costs(self.feature_costs))  # a costs file is parsed here only
        check_bool("free_after_use", self.free_after_use)

    def cost_array(self, n_features: int) -> np.ndarray | None:
        """The costs of the ``n_features`` features of the data (float64), or None without costs."""
        return cost_array(self.read, n_features, self.feature_costs)


TARGETS = ("ndcg", "map", "err")  # the metrics LambdaRank's lambdas optimise
TARGET_DEPTH = 30  # the default target's cutoff is at least this deep (docs/lambdas.md, "Which default")


@dataclass(frozen=True)
class LambdaRankParams:
    r"""LambdaRank's gradients (Burges 2010; :func:`~twinrank.reference.losses.objectives.lambdarank`).

    Parameters
    ----------
    sigma : float
        The steepness $\sigma > 0$ of RankNet's sigmoid, at most ``_param_checks.MAX_SIGMA`` ($10^6$).
    truncation : int or None
        Only pairs with a document in the current top ``truncation``; None: all pairs.
    normalize : bool
        Per-query LambdaRank normalisation (LightGBM ``lambdarank_norm``).
    target : str or None
        The metric the lambdas optimise: ``"ndcg"``, ``"ndcg@k"``, ``"map"``, ``"err"``,
        ``"err@k"``; None takes the family of the estimator's (first) ``metric`` with its cutoff deepened
        to at least ``TARGET_DEPTH`` (30): ``metric="ndcg@10"`` trains on NDCG@30
        (:meth:`target_of`).
    """

    sigma: float = 1.0
    truncation: int | None = None
    normalize: bool = True
    target: str | None = None

    def __post_init__(self):
        check_sigma(self.sigma)
        if self.truncation is not None:
            check_int("truncation", self.truncation, low=1)
        check_bool("normalize", self.normalize)
        if self.target is not None:
            try:
                parse_target(self.target)
            except ParameterError as e:
                raise ParameterError(f"target: {e}") from None

    def target_of(self, metric: str) -> tuple[str, int | None]:
        r"""``(family, k)`` of the target.

        With ``target`` None: the family of ``metric`` at cutoff $\max(k, 30)$ (``TARGET_DEPTH``;
        a metric without a cutoff keeps none). Pairs ranked 11-30 then pull on each other too:
        on held-out data (4 sets) NDCG@30's lambdas gave a better test NDCG@10 than NDCG@10's
        (``docs/lambdas.md``, "Which default"); 30 is LightGBM's ``lambdarank_truncation_level``.
        """
        if self.target is not None:
            return parse_target(self.target)
        family, k = parse_target(metric)
        return family, (None if k is None else max(k, TARGET_DEPTH))


def parse_target(name: str):
    """``"ndcg@10"`` -> ``("ndcg", 10)``; ``"map"`` -> ``("map", None)``."""
    family, _, k = str(name).lower().partition("@")
    if family not in TARGETS:
        raise ParameterError(f"LambdaMART optimises one of {TARGETS} (with an optional @k), not {name!r}")
    if k and not k.isdigit():
        raise ParameterError(f"the cutoff of {name!r} must be a positive integer")
    if k and int(k) < 1:
        raise ParameterError(f"the cutoff of {name!r} must be a positive integer")
    if family == "map" and k:
        raise ParameterError("map has no cutoff")
    return family, (int(k) if k else None)

@dataclass(frozen=True)
class AveragingParams:
    """Averaged k-stochastic GBRT (Mohan 2010).

    Parameters
    ----------
    average_runs : int
        The number of independently seeded runs averaged into one model (run ``i``
        uses seed ``seed + i``).
    """

    average_runs: int = 1

    def __post_init__(self):
        check_int("average_runs", self.average_runs, low=1)


WEIGHTINGS = ("linear", "square", "exp2")  # McRank's named relevance weightings


@dataclass(frozen=True)
class McRankParams:
    """McRank's expected relevance (Li, Burges & Wu 2007; :mod:`~twinrank.reference.rankers.classification`).

    Parameters
    ----------
    weighting : str or array
        $F(c_k)$: ``"linear"``, ``"square"``, ``"exp2"`` or one weight per label.
    fit_weights : bool
        Fit $F$ by least squares instead (``weighting`` must then be a name).
    """

    weighting: object = "linear"
    fit_weights: bool = False

    def __post_init__(self):
        check_bool("fit_weights", self.fit_weights)
        if self.fit_weights and not isinstance(self.weighting, str):
            raise ParameterError("give a weighting array or fit_weights=True, not both")
        if isinstance(self.weighting, str) and self.weighting not in WEIGHTINGS:
            raise ParameterError(f"weighting must be one of {WEIGHTINGS} or an array, got {self.weighting!r}")


BAG_RULES = ("minmax", "mean", "borda")  # ``bag_rules.RULES``, checked here with the other parameters


@dataclass(frozen=True)
class BaggingParams:
    r"""BL-MART's bag (Ganjisaffar, Caruana & Lopes 2011; :mod:`~twinrank.reference.rankers.bagging`).

    Parameters
    ----------
    n_models : int
        The number of members $B \ge 1$.
    query_fraction : float
        The fraction of training queries, in (0, 1], each member trains on (drawn without replacement).
    combine : str
        How members' scores are combined per query: ``"minmax"`` (min-max to [0, 1], then the mean),
        ``"mean"`` or ``"borda"`` (:mod:`~twinrank.reference.combination.bag_rules`).
    n_jobs : int or None
        Train members in this many local processes; None: one after another in this process.
    workers : int or None
        Train members on a local Dask cluster of this many workers.
    scheduler : str or None
        Train members on the Dask cluster of this scheduler address (``tcp://host:port``).
    """

    n_models: int = 10
    query_fraction: float = 0.67
    combine: str = "minmax"
    n_jobs: int | None = None
    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self):
        check_int("n_models", self.n_models, low=1)
        check_fraction("query_fraction", self.query_fraction)
        if self.combine not in BAG_RULES:
            raise ParameterError(f"combine must be one of {', '.join(BAG_RULES)}; got {self.combine!r}")
        for name in ("n_jobs", "workers"):
            check_processes(name, getattr(self, name))
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise ParameterError(f"scheduler must be an address such as tcp://127.0.0.1:8786, got {self.scheduler!r}")
        given = [n for n in ("n_jobs", "workers", "scheduler") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ParameterError(f"give at most one of n_jobs, workers, scheduler; got {', '.join(given)}")

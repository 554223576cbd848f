r"""Parameter objects shared by both twins, with their validation.

A parameter object is plain data: the twins read the same object, so the same
parameters mean the same thing in ``reference`` and ``fast``. Every estimator
parameter is, by name, one field of one of these dataclasses (``rf_<field>`` for an
IGBRT's forest): :func:`from_names` builds a dataclass from an estimator's
parameters, and its ``__post_init__`` validates them, once, before any data work.
A field's default is the library's default, written once here: the estimators'
signatures read it (``max_leaves=TreeParams.max_leaves``).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields

import numpy as np

from .errors import ParameterError

MISSING_SPLITS = ("learn", "separate")  # TreeParams.missing_split: two-way or three-way splits


@dataclass(frozen=True)
class TreeParams:
    r"""How one regression tree is grown (LightGBM / scikit-learn names).

    Parameters
    ----------
    max_leaves : int
        Leaf-wise (best-first) growth stops at this many leaves (LightGBM ``num_leaves``).
    max_depth : int or None
        Nodes at this depth are not split; ``None`` means unlimited. The root has depth 0.
    min_samples_leaf : int or float
        Minimum rows in a child. A float in ``(0, 1)`` is a fraction of the rows the
        tree is grown on, rounded up (the BL-MART paper's "min percentage of
        observations per leaf").
    min_hessian_in_leaf : float
        Minimum sum of hessians in a child (LightGBM ``min_sum_hessian_in_leaf``).
    feature_fraction : float
        Fraction of the features considered at each node, drawn anew per node
        (k random features per node: ``k = max(1, round(feature_fraction * d))``).
    lambda_l2 : float
        L2 penalty on leaf values: $v = -G / (H + \lambda)$.
    min_gain_to_split : float
        A split is made only if its gain is strictly larger than this, and not tied with it
        (``tree.GAIN_TIE_RTOL``: a gain that is zero up to rounding does not beat 0).
    cost_lambda : float
        Weight of the feature-cost penalty: a split on feature ``f`` scores
        $\mathrm{gain} - \lambda_c\,c_f$.
    missing_split : {"learn", "separate"}
        Where a split sends the rows missing its feature: ``"learn"``, to the left or
        right child, whichever gains more; ``"separate"``, to a third child of their
        own (Mohan 2010, Ch. 4) at nodes where that child is large enough (the rules
        of :mod:`~twinrank.reference.tree`).
    """

    max_leaves: int = 31
    max_depth: int | None = None
    min_samples_leaf: int | float = 20
    min_hessian_in_leaf: float = 1e-3
    feature_fraction: float = 1.0
    lambda_l2: float = 0.0
    min_gain_to_split: float = 0.0
    cost_lambda: float = 0.0
    missing_split: str = "learn"

    def __post_init__(self):
        check_int("max_leaves", self.max_leaves, low=2)
        if self.max_depth is not None:
            check_int("max_depth", self.max_depth, low=1)
        check_min_samples_leaf(self.min_samples_leaf)
        check_real("min_hessian_in_leaf", self.min_hessian_in_leaf, low=0.0)
        check_fraction("feature_fraction", self.feature_fraction)
        check_real("lambda_l2", self.lambda_l2, low=0.0)
        check_real("min_gain_to_split", self.min_gain_to_split, low=0.0)
        check_real("cost_lambda", self.cost_lambda, low=0.0)
        if self.missing_split not in MISSING_SPLITS:
            raise ParameterError(f"missing_split must be one of {', '.join(MISSING_SPLITS)}; "
                                 f"got {self.missing_split!r}")

    def min_rows_in_leaf(self, n_rows: int) -> int:
        """``min_samples_leaf`` as a row count for a tree grown on ``n_rows`` rows."""
        if isinstance(self.min_samples_leaf, float) and self.min_samples_leaf < 1.0:
            return max(1, math.ceil(self.min_samples_leaf * n_rows))
        return int(self.min_samples_leaf)

    @property
    def max_nodes(self) -> int:
        """The most nodes a tree can have, ``2 * max_leaves - 1`` (rows of a feature mask)."""
        return 2 * self.max_leaves - 1

    def n_features_per_node(self, n_features: int) -> int:
        """k, the number of features drawn at each node."""
        return max(1, min(n_features, round(self.feature_fraction * n_features)))

    def to_dict(self) -> dict:
        return asdict(self)


def check_int(name, value, low=None, high=None):
    """Raise ParameterError unless ``value`` is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    if low is not None and value < low:
        raise ParameterError(f"{name} must be >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ParameterError(f"{name} must be <= {high}, got {value!r}")


def check_real(name, value, low=None, high=None):
    """Raise ParameterError unless ``value`` is a finite real number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {value!r}")
    if low is not None and value < low:
        raise ParameterError(f"{name} must be >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ParameterError(f"{name} must be <= {high}, got {value!r}")


def check_fraction(name, value):
    """A fraction in (0, 1]."""
    check_real(name, value)
    if not 0.0 < value <= 1.0:
        raise ParameterError(f"{name} must be in (0, 1], got {value!r}")


def check_min_samples_leaf(value):
    """Raise ParameterError unless ``value`` is a count >= 1 or a fraction in (0, 1)."""
    if isinstance(value, float) and 0.0 < value < 1.0:
        return
    if isinstance(value, float) and value.is_integer() and value >= 1:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(
            f"min_samples_leaf must be a count >= 1 or a fraction in (0, 1), got {value!r}"
        )


@dataclass(frozen=True)
class BoostParams:
    r"""The boosting loop's parameters (Friedman 2001; Burges 2010, Alg. 1).

    Parameters
    ----------
    n_trees : int
        Boosting rounds $M$.
    learning_rate : float
        Shrinkage $\eta$: tree $m$ adds $\eta\,f_m(x)$.
    tree : TreeParams
        How each tree is grown.
    subsample : float
        Fraction of the training units each tree sees, drawn without replacement
        per round (stochastic GBRT, Friedman 2002; ``query_subsample`` of BL-MART).
    subsample_by : {"queries", "rows"}
        The unit ``subsample`` draws: whole queries or single rows.
    query_subsample : float
        Fraction of the queries each tree sees (LambdaMART's name; the same draw as
        ``subsample`` with ``subsample_by="queries"``); give it or ``subsample``, not both.
    max_bins : int
        Bins per feature (at most 255; one more bin holds missing values).
    metric : str
        Validation metric for history and early stopping, e.g. ``"ndcg@10"`` (also the
        training metric with ``eval_train``).
    convention : str
        Metric convention preset (``"lightgbm"``, ``"ranklib"``, ``"letor"``, ``"trec"``).
    early_stopping_rounds : int or None
        Stop after this many rounds without a validation improvement and keep the
        model of the best round.
    overfit_tolerance : float or None
        BL-MART's overfitting tolerance: keep adding trees after the validation
        maximum until the metric falls more than this fraction below it, or
        ``overfit_extra_trees`` trees were added after it, and keep those trees.
    overfit_extra_trees : int
        The cap of trees added after the validation maximum.
    seed : int
        Seed of the run's one ``numpy.random.Generator``.
    eval_train : bool
        Record ``metric`` on the training set after every tree (``"train:<metric>"`` in
        the history and the callback record). Costs one metric evaluation of the
        training set per tree, so it is off by default (as in LightGBM and XGBoost).
    """

    n_trees: int = 100
    learning_rate: float = 0.1
    tree: TreeParams = TreeParams()
    subsample: float = 1.0
    subsample_by: str = "queries"
    query_subsample: float = 1.0
    max_bins: int = 255
    metric: str = "ndcg@10"
    convention: str = "lightgbm"
    early_stopping_rounds: int | None = None
    overfit_tolerance: float | None = None
    overfit_extra_trees: int = 250
    seed: int = 0
    eval_train: bool = False

    def __post_init__(self):
        check_int("n_trees", self.n_trees, low=0)
        check_real("learning_rate", self.learning_rate, low=0.0)
        check_fraction("subsample", self.subsample)
        if self.subsample_by not in ("queries", "rows"):
            raise ParameterError(f"subsample_by must be 'queries' or 'rows', got {self.subsample_by!r}")
        check_fraction("query_subsample", self.query_subsample)
        if self.query_subsample < 1.0 and self.subsample < 1.0:
            raise ParameterError("give subsample or query_subsample, not both")
        check_int("max_bins", self.max_bins, low=2, high=255)
        if self.early_stopping_rounds is not None:
            check_int("early_stopping_rounds", self.early_stopping_rounds, low=1)
        if self.overfit_tolerance is not None:
            check_real("overfit_tolerance", self.overfit_tolerance, low=0.0, high=1.0)
            if self.early_stopping_rounds is not None:
                raise ParameterError("give early_stopping_rounds or overfit_tolerance, not both")
        check_int("overfit_extra_trees", self.overfit_extra_trees, low=0)
        check_int("seed", self.seed, low=0)
        check_bool("eval_train", self.eval_train)

    def to_dict(self) -> dict:
        return asdict(self)

    def round_sample(self) -> tuple[str, float] | None:
        """What each round draws: ``("queries" | "rows", fraction)``, or None for every row."""
        if self.query_subsample < 1.0:
            return "queries", self.query_subsample
        if self.subsample < 1.0:
            return self.subsample_by, self.subsample
        return None


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
    max_bins, metric, convention, seed : as in :class:`BoostParams`.
    """

    n_trees: int = 100
    tree: TreeParams = TreeParams()
    bootstrap: bool = True
    query_subsample: float = 1.0
    max_bins: int = 255
    metric: str = "ndcg@10"
    convention: str = "lightgbm"
    seed: int = 0

    def __post_init__(self):
        check_int("n_trees", self.n_trees, low=1)
        if not isinstance(self.tree, TreeParams):
            raise ParameterError(f"tree must be a TreeParams, got {type(self.tree).__name__}")
        if not isinstance(self.bootstrap, bool):
            raise ParameterError(f"bootstrap must be True or False, got {self.bootstrap!r}")
        check_fraction("query_subsample", self.query_subsample)
        check_int("max_bins", self.max_bins, low=2, high=255)
        check_int("seed", self.seed, low=0)

    def to_dict(self) -> dict:
        return asdict(self)


TARGETS = ("ndcg", "map", "err")  # the metrics LambdaRank's lambdas optimise


@dataclass(frozen=True)
class LambdaRankParams:
    r"""LambdaRank's gradients (Burges 2010; :func:`~twinrank.reference.objectives.lambdarank`).

    Parameters
    ----------
    sigma : float
        The steepness $\sigma > 0$ of RankNet's sigmoid.
    truncation : int or None
        Only pairs with a document in the current top ``truncation``; None: all pairs.
    normalize : bool
        Per-query LambdaRank normalisation (LightGBM ``lambdarank_norm``).
    target : str or None
        The metric the lambdas optimise: ``"ndcg"``, ``"ndcg@k"``, ``"map"``, ``"err"``,
        ``"err@k"``; None takes it from the estimator's ``metric``.
    """

    sigma: float = 1.0
    truncation: int | None = None
    normalize: bool = True
    target: str | None = None

    def __post_init__(self):
        check_real("sigma", self.sigma)
        if self.sigma <= 0:
            raise ParameterError(f"sigma must be > 0, got {self.sigma!r}")
        if self.truncation is not None:
            check_int("truncation", self.truncation, low=1)
        check_bool("normalize", self.normalize)
        if self.target is not None:
            try:
                parse_target(self.target)
            except ParameterError as e:
                raise ParameterError(f"target: {e}") from None

    def target_of(self, metric: str) -> tuple[str, int | None]:
        """``(family, k)`` of the target, ``metric`` when ``target`` is None."""
        return parse_target(self.target or metric)


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


MISSING_STRATEGIES = ("learn", "separate", "zero", "one", "mean", "median", "iterative")


@dataclass(frozen=True)
class FitParams:
    """What a fit does besides growing trees: missing values, prior model, threads, progress.

    Parameters
    ----------
    missing : str
        Missing-value strategy, one of ``MISSING_STRATEGIES`` (:mod:`~twinrank.reference.missing`).
    init_model : None, str, path, Ensemble or fitted estimator
        A prior model the boosting starts from (LambdaSMART, IGBRT's forest).
    n_threads : int or None
        Threads of the fast twin (None: all cores); the reference ignores it.
    verbose : int
        Print one line per ``verbose`` rounds to stderr (0: silent).
    """

    missing: str = "learn"
    init_model: object = None
    n_threads: int | None = None
    verbose: int = 0

    def __post_init__(self):
        if self.missing not in MISSING_STRATEGIES:
            raise ParameterError(f"missing must be one of {', '.join(MISSING_STRATEGIES)}; "
                                 f"got {self.missing!r}")
        if self.n_threads is not None:
            check_int("n_threads", self.n_threads, low=1)
        check_int("verbose", self.verbose, low=0)
        if isinstance(self.init_model, (bool, numbers.Number)):
            raise ParameterError(f"init_model must be a model, a fitted estimator or a model file, "
                                 f"got {self.init_model!r}")

    @property
    def missing_split(self) -> str:
        """``TreeParams.missing_split`` of the strategy: three-way splits for ``"separate"``."""
        return "separate" if self.missing == "separate" else "learn"


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
    """McRank's expected relevance (Li, Burges & Wu 2007; :mod:`~twinrank.reference.classification`).

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


def check_bool(name, value):
    """Raise ParameterError unless ``value`` is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, got {value!r}")


def from_names(cls, values: dict, prefix: str = "", **fixed):
    """The dataclass ``cls`` from the entries ``prefix + field`` of ``values`` (and ``fixed``).

    This is the one mapping from an estimator's parameters to its parameter objects:
    a parameter named like a field (after ``prefix``) sets that field; ``fixed`` sets
    fields the estimator does not expose. Validation is ``cls``'s own.
    """
    kwargs = {f.name: values[prefix + f.name] for f in fields(cls) if prefix + f.name in values}
    return cls(**{**kwargs, **fixed})


def field_names(cls) -> list[str]:
    """The field names of the dataclass ``cls``, nested parameter objects excluded."""
    return [f.name for f in fields(cls) if f.name != "tree"]

r"""How one tree is grown and how the boosting loop adds trees: ``TreeParams``, ``BoostParams``."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from twinrank.reference._param_checks import (
    check_bool,
    check_fraction,
    check_int,
    check_min_samples_leaf,
    check_real,
    metric_list,
    percent_of,
)
from twinrank.reference.errors import ParameterError

MISSING_SPLITS = ("learn", "separate")  # TreeParams.missing_split: two-way or three-way splits
SPLIT_GAINS = ("newton", "least_squares")  # TreeParams.split_gain
STEPS = ("newton", "optimal", "oc")  # BoostParams.step
MAX_LEAVES = 2**31 - 1  # node ids are int32 (constants.NODE_DTYPE); a tree's room also follows its rows (leaves_for)


@dataclass(frozen=True)
class TreeParams:
    r"""How one regression tree is grown (LightGBM / scikit-learn names).

    Parameters
    ----------
    max_leaves : int
        Leaf-wise (best-first) growth stops at this many leaves (LightGBM ``num_leaves``), at most
        ``MAX_LEAVES`` ($2^{31} - 1$). Memory follows the rows a tree is grown on, not this
        number (:meth:`leaves_for`).
    max_depth : int or None
        Nodes at this depth are not split; ``None`` means unlimited. The root has depth 0.
    min_samples_leaf : int, float or str
        Minimum rows in a child: a count; a float in ``(0, 1)``, a fraction of the rows the
        tree is grown on; or a percent ``"p%"`` of them, the unit of the BL-MART paper's "min
        percentage of observations per leaf" (Table 2's 0.12 / 0.25 / 0.50 are ``"0.12%"``,
        ``"0.25%"``, ``"0.5%"``: jforests' ``rows * p / 100``; as a fraction, 0.25 would
        leave room for three leaves). Fractions and percents are rounded up, at least 1.
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
    split_gain : {"newton", "least_squares"}
        How a split is scored. ``"newton"`` (LightGBM, XGBoost): the second-order gain
        $G_L^2/(H_L + \lambda) + G_R^2/(H_R + \lambda) - G^2/(H + \lambda)$. ``"least_squares"``
        (the papers' LambdaMART: Wu, Burges, Svore & Gao 2010, Alg. 1; jforests; RankLib): the
        tree is a least-squares regression tree of the gradients, $S_L^2/n_L + S_R^2/n_R - S^2/n$
        (the Newton gain with every hessian 1); its leaves then get the Newton values
        $-G/(H + \lambda)$ of the true hessians. For the squared error ($h = 1$) the two agree.
    missing_split : {"learn", "separate"}
        Where a split sends the rows missing its feature: ``"learn"``, to the left or
        right child, whichever gains more; ``"separate"``, to a third child of their
        own (Mohan 2010, Sec. 2.2) at nodes where that child is large enough (the rules
        of :mod:`~twinrank.reference.trees.tree`).
    """

    max_leaves: int = 31
    max_depth: int | None = None
    min_samples_leaf: int | float | str = 20
    min_hessian_in_leaf: float = 1e-3
    feature_fraction: float = 1.0
    lambda_l2: float = 0.0
    min_gain_to_split: float = 0.0
    cost_lambda: float = 0.0
    split_gain: str = "newton"
    missing_split: str = "learn"

    def __post_init__(self):
        check_int("max_leaves", self.max_leaves, low=2, high=MAX_LEAVES)
        if self.max_depth is not None:
            check_int("max_depth", self.max_depth, low=1)
        check_min_samples_leaf(self.min_samples_leaf)
        check_real("min_hessian_in_leaf", self.min_hessian_in_leaf, low=0.0)
        check_fraction("feature_fraction", self.feature_fraction)
        check_real("lambda_l2", self.lambda_l2, low=0.0)
        check_real("min_gain_to_split", self.min_gain_to_split, low=0.0)
        check_real("cost_lambda", self.cost_lambda, low=0.0)
        if self.split_gain not in SPLIT_GAINS:
            raise ParameterError(f"split_gain must be one of {', '.join(SPLIT_GAINS)}; got {self.split_gain!r}")
        if self.missing_split not in MISSING_SPLITS:
            raise ParameterError(f"missing_split must be one of {', '.join(MISSING_SPLITS)}; "
                                 f"got {self.missing_split!r}")

    def min_rows_in_leaf(self, n_rows: int) -> int:
        """``min_samples_leaf`` as a row count for a tree grown on ``n_rows`` rows."""
        if isinstance(self.min_samples_leaf, str):
            return max(1, math.ceil(round(percent_of(self.min_samples_leaf) * n_rows / 100.0, 9)))
        if isinstance(self.min_samples_leaf, float) and self.min_samples_leaf < 1.0:
            return max(1, math.ceil(self.min_samples_leaf * n_rows))
        return int(self.min_samples_leaf)

    def leaves_for(self, n_rows: int) -> int:
        r"""The leaves a tree grown on ``n_rows`` rows is given room for: ``max_leaves``, or fewer
        when the rows cannot fill them.

        Every leaf holds at least $r$ = ``min_rows_in_leaf(n_rows)`` rows, so a tree has at most
        $\lfloor n / r \rfloor$ leaves; room for one more than that (at least 2) grows the same
        tree as room for ``max_leaves`` (the last-split rule, two-way only at ``max_leaves - 1``
        leaves, can then never apply), and the grower's node arrays, feature masks and histogram
        pool follow the rows, not a ``max_leaves`` of $2^{31}$ (LightGBM also allocates nodes as
        it grows them, not ``num_leaves`` up front).
        """
        return min(self.max_leaves, max(2, n_rows // self.min_rows_in_leaf(n_rows) + 1))

    def nodes_for(self, n_rows: int) -> int:
        """The most nodes a tree grown on ``n_rows`` rows can have, ``2 * leaves_for(n_rows) - 1``:
        the rows of its feature mask (a three-way split adds two leaves and three nodes, so a tree
        of ``L`` leaves has at most ``2 L - 1`` nodes)."""
        return 2 * self.leaves_for(n_rows) - 1

    def n_features_per_node(self, n_features: int) -> int:
        """k, the number of features drawn at each node."""
        return max(1, min(n_features, round(self.feature_fraction * n_features)))

    def to_dict(self) -> dict:
        return asdict(self)

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
    subsample_for_bin : int or None
        The most training rows the bin thresholds are read from: with more rows, a sample of this
        many drawn from ``seed`` (:func:`~twinrank.reference.trees.binning.bin_sample`; LightGBM's
        ``subsample_for_bin``, also 200,000); None: every row. Every row is binned either way.
    metric : str or list of str
        Metric recorded on every eval set after every tree, e.g. ``"ndcg@10"`` (also on the
        training set with ``eval_train``); several as a list, ``["ndcg@5", "map"]``, or
        separated by commas, ``"ndcg@5,map"`` (:attr:`metrics`). The first drives early
        stopping, the overfitting tolerance and the optimal step (:attr:`stopping_metric`).
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
    step : {"newton", "optimal", "oc"}
        How much of each tree is added. ``newton``: the leaves' Newton values times
        ``learning_rate``. ``optimal``: that tree times the weight $\alpha$ in ``step_range``
        that maximises ``metric`` (NDCG or DCG) exactly (``combine.optimal_combination``;
        $\alpha = 1$ is the shrunk Newton step). ``oc``: the paper's form ("OC", Wu, Burges, Svore
        & Gao 2010, Sec. 5.6, where the optimal combination "bypasses" Newton): each tree is the
        least-squares regression tree of the gradients (every hessian 1: splits $S^2/n$, leaves
        the mean gradient step $-S/n$), not shrunk, and one weight $\alpha$ per tree, found by the
        same exact search, replaces the per-leaf Newton values.
    step_range : tuple of float
        The range ``(lo, hi)`` of the optimal step; the lower bound keeps a weak tree from stalling training.
    step_on : {"valid", "train"}
        The data the optimal step is chosen on: the first ``eval_set`` (as in the paper) or the training set.
    learning_rate_schedule : {"constant", "adaptive"}
        ``adaptive``: tree $i$ (from 1) is shrunk by DART's normalisation without the dropout,
        $\eta / (k_i + \eta)$ with $k_i = \lfloor r\,i \rfloor$, $r$ = ``schedule_rate``, and by
        $\eta$ while $k_i = 0$ (X-DART's ablation "LambdaMART A.L.R.", Lucchese et al. 2017; the
        $k = 0$ rule is :mod:`~twinrank.reference.ensembles.dropout`'s).
    schedule_rate : float in [0, 1]
        $r$ of the adaptive schedule (DART's drop rate; the paper's 1.5%).
    quantized_gradients : bool
        Grow each tree on the round's gradients and hessians rounded stochastically to
        ``gradient_bits`` bits, with integer histograms, and refit its leaf values from the true
        gradients; off by default. This is quantized training (Shi, Ke and others, NeurIPS 2022;
        LightGBM's ``use_quantized_grad``; :mod:`~twinrank.reference.trees._quantize`); both twins grow
        the same trees.
    gradient_bits : int
        Bits b of a quantized gradient, 2 to 8: gradients are integers in
        [-(2^(b-1) - 1), 2^(b-1) - 1] times a scale, hessians integers in [0, 2^b - 1]. The
        default 4 (gradients -7..7, hessians 0..15) is finer than LightGBM's default
        ``num_grad_quant_bins=4`` (-2..2, 0..4).
    """

    n_trees: int = 100
    learning_rate: float = 0.1
    tree: TreeParams = TreeParams()
    subsample: float = 1.0
    subsample_by: str = "queries"
    query_subsample: float = 1.0
    max_bins: int = 255
    subsample_for_bin: int | None = 200_000
    metric: str = "ndcg@10"
    convention: str = "lightgbm"
    early_stopping_rounds: int | None = None
    overfit_tolerance: float | None = None
    overfit_extra_trees: int = 250
    seed: int = 0
    eval_train: bool = False
    step: str = "newton"
    step_range: tuple = (0.1, 5.0)
    step_on: str = "valid"
    learning_rate_schedule: str = "constant"
    schedule_rate: float = 0.015
    quantized_gradients: bool = False
    gradient_bits: int = 4

    def __post_init__(self):
        check_int("n_trees", self.n_trees, low=0)
        check_real("learning_rate", self.learning_rate, low=0.0)
        object.__setattr__(self, "metric", one_or_tuple(metric_list("metric", self.metric)))
        check_fraction("subsample", self.subsample)
        if self.subsample_by not in ("queries", "rows"):
            raise ParameterError(f"subsample_by must be 'queries' or 'rows', got {self.subsample_by!r}")
        check_fraction("query_subsample", self.query_subsample)
        if self.query_subsample < 1.0 and self.subsample < 1.0:
            raise ParameterError("give subsample or query_subsample, not both")
        check_int("max_bins", self.max_bins, low=2, high=255)
        if self.subsample_for_bin is not None:
            check_int("subsample_for_bin", self.subsample_for_bin, low=1)
        if self.early_stopping_rounds is not None:
            check_int("early_stopping_rounds", self.early_stopping_rounds, low=1)
        if self.overfit_tolerance is not None:
            check_real("overfit_tolerance", self.overfit_tolerance, low=0.0, high=1.0)
            if self.early_stopping_rounds is not None:
                raise ParameterError("give early_stopping_rounds or overfit_tolerance, not both")
        check_int("overfit_extra_trees", self.overfit_extra_trees, low=0)
        check_int("seed", self.seed, low=0)
        check_bool("eval_train", self.eval_train)
        if self.step not in STEPS:
            raise ParameterError(f"step must be one of {', '.join(STEPS)}, got {self.step!r}")
        if self.step_on not in ("valid", "train"):
            raise ParameterError(f"step_on must be 'valid' or 'train', got {self.step_on!r}")
        try:
            lo, hi = (float(v) for v in self.step_range)
        except (TypeError, ValueError):
            raise ParameterError(f"step_range must be two numbers (lo, hi), got {self.step_range!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ParameterError(f"step_range must be finite with lo < hi, got {self.step_range!r}")
        object.__setattr__(self, "step_range", (lo, hi))
        if self.learning_rate_schedule not in ("constant", "adaptive"):
            raise ParameterError("learning_rate_schedule must be 'constant' or 'adaptive', "
                                 f"got {self.learning_rate_schedule!r}")
        check_real("schedule_rate", self.schedule_rate, low=0.0, high=1.0)
        check_bool("quantized_gradients", self.quantized_gradients)
        check_int("gradient_bits", self.gradient_bits, low=2, high=8)  # _quantize.MIN_BITS, MAX_BITS
        if self.quantized_gradients and self.tree.split_gain == "least_squares":
            raise ParameterError("quantized_gradients chooses splits on the quantized hessians: it cannot be "
                                 "combined with split_gain='least_squares' (every hessian 1)")

    @property
    def metrics(self) -> tuple:
        """Every metric recorded, in the order given (``metric`` split at its commas)."""
        return metric_list("metric", self.metric)

    @property
    def stopping_metric(self) -> str:
        """The first of :attr:`metrics`: early stopping, the overfitting tolerance and the optimal step read it."""
        return self.metrics[0]

    @property
    def searches_step(self) -> bool:
        """Whether each tree's weight is found by the exact line search (``step`` "optimal" or "oc")."""
        return self.step in ("optimal", "oc")

    def to_dict(self) -> dict:
        return asdict(self)

    def tree_rate(self, i: int) -> float:
        r"""The shrinkage of tree ``i`` (from 1): $\eta$, or the adaptive schedule's $\eta / (k_i + \eta)$;
        1 with ``step="oc"`` (the line search's weight is the whole step)."""
        if self.step == "oc":
            return 1.0
        k = math.floor(self.schedule_rate * i) if self.learning_rate_schedule == "adaptive" else 0
        return normalised_rate(self.learning_rate, k)

    def round_sample(self) -> tuple[str, float] | None:
        """What each round draws: ``("queries" | "rows", fraction)``, or None for every row."""
        if self.query_subsample < 1.0:
            return "queries", self.query_subsample
        if self.subsample < 1.0:
            return self.subsample_by, self.subsample
        return None


def one_or_tuple(names: tuple):
    """One metric name as itself, several as the tuple (a parameter object's ``metric`` field)."""
    return names[0] if len(names) == 1 else names


def normalised_rate(learning_rate: float, k: int) -> float:
    r"""DART's weight of a new tree when ``k`` trees were dropped: $\eta / (k + \eta)$, and $\eta$ for $k = 0$.

    The paper's rule read literally gives a whole Newton step (weight 1) whenever nothing is
    dropped; with $\eta < 1$ that would make the first $1/r$ trees of the ratio strategy
    unshrunk. XGBoost's and LightGBM's DART keep $\eta$ then, and so does twinrank: the rate
    then never rises, since $\eta/(k + \eta) < \eta$ for $k \ge 1$. The two agree at $\eta = 1$.
    """
    return learning_rate if k == 0 else learning_rate / (k + learning_rate)

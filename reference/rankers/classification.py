r"""McRank: ranking by cumulative binary classifiers and expected relevance.

The classification paradigm of pointwise ranking (P. Li, C. J. C. Burges & Q. Wu,
"McRank: Learning to Rank Using Multiple Classification and Gradient Boosting",
NIPS 2007: multiple *ordinal* classification, and the Expected Relevance that turns
class probabilities into scores; compared with regression in A. Mohan's 2010 thesis,
Table 3.1). ``docs/classification.md`` derives it step by step.

Let $c_0 < c_1 < \dots < c_{K-1}$ be the distinct labels of the training data.
For each threshold $c_j$, $j = 0, \dots, K-2$, a binary classifier models

$$\hat G_j(x) = P(y > c_j \mid x) = \sigma(s_j(x)), \qquad \sigma(s) = 1 / (1 + e^{-s}),$$

where $s_j$ is a boosted-trees logistic model (:func:`boosting.boost` with
:func:`objectives.logistic` on the targets $t_i = [y_i > c_j]$), started from
the log-odds of the class prior, $F_0 = \log(n_{>c_j} / n_{\le c_j})$.
(Li et al. write the cumulative $P(y \le c_j) = 1 - \hat G_j$; we model the
complement so that every classifier's score grows with relevance.)

The classifiers are fit independently, so their estimates may cross. They are made
monotone by a running minimum over the thresholds, which is the same as making the
cumulative $P(y \le c_j)$ non-decreasing in $j$ by a running maximum:

$$G_j = \min_{j' \le j} \hat G_{j'}.$$

The class probabilities are the differences

$$p_0 = 1 - G_0, \qquad p_k = G_{k-1} - G_k \;(0 < k < K-1), \qquad p_{K-1} = G_{K-2},$$

non-negative and summing to 1, and a document's score is its expected relevance

$$S(x) = \sum_{k=0}^{K-1} p_k(x)\, F(c_k)
= F(c_0) + \sum_{j=0}^{K-2} G_j(x)\, \big(F(c_{j+1}) - F(c_j)\big),$$

with the weighting $F$ ("linear" $c$, "square" $c^2$, "exp2"
$2^c - 1$, or a user array), or weights fitted by least squares
(:func:`fit_relevance_weights`). With a non-decreasing $F$, $S$ grows with
every $G_j$.

**Mohan's form** (A. Mohan, MS thesis, Washington University in St. Louis, 2010, Alg. 5;
A. Mohan, Z. Chen & K. Q. Weinberger, JMLR W&CP 14, 2011, Sec. 4): the same K-1 cumulative
problems, but each fit by a squared-loss *regression* ensemble on the 0/1 targets
$t_i = [y_i > c_j]$, a random forest ("RF(C)") or IGBRT ("IGBRT(C)"), whose prediction
$\hat G_j(x)$ estimates $P(y > c_j \mid x)$ itself (the least-squares fit of an indicator is a
conditional mean). Regression does not keep $\hat G_j$ in $[0, 1]$ (IGBRT may leave it; a forest
of leaf means cannot) nor the thresholds in order, and the texts take the differences without
saying what happens then; :class:`CumulativeRegression` clips and takes the running minimum,

$$G_j = \min_{j' \le j} \min\big(1, \max(0, \hat G_{j'})\big),$$

so that the differences above are probabilities again (:func:`probabilities_from_estimates`),
and scores by the expected relevance with weights fitted by ordinary least squares on held-out
rows (the validation set, or the training and validation sets together as the thesis reports).
"""
from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.ensembles.boosting import run_boosting
from twinrank.reference.errors import ParameterError
from twinrank.reference.io.data import Dataset, dense_features, first_set, stacked_weights
from twinrank.reference.io.model import (
    CUMULATIVE_REGRESSION,
    MCRANK as ALGORITHM,
    CumulativeRegressionModel,
    Ensemble,
    McRankModel,
    load_model,
)
from twinrank.reference.losses._loss import _sigmoid_pair
from twinrank.reference.params import (
    WEIGHTINGS,
    BoostParams,
    CostParams,
    FitParams,
    ForestParams,
    McRankParams,
    TreeParams,
    from_names,
    missing_split,
)
from twinrank.reference.rankers._estimator import (
    BoostedRanker,
    estimator_on,
    truncated,
    with_progress,
    with_resolved_costs,
)
from twinrank.reference.rankers._fit_data import check_feature_names
from twinrank.reference.rankers.forest import IGBRT, RandomForest
from twinrank.reference.rankers.gbrt import Watch

__all__ = ["McRank", "McRankModel", "CumulativeRegression", "CumulativeRegressionModel",
           "CumulativeRegressionParams", "classifier_scores", "class_probabilities", "expected_relevance",
           "probabilities_from_scores", "probabilities_from_estimates", "relevance_weights",
           "fit_relevance_weights", "classifier_seed", "load_model", "run_classifier_scores",
           "run_class_probabilities", "run_expected_relevance", "ALGORITHM", "CUMULATIVE_REGRESSION",
           "WEIGHTINGS", "BASES", "WEIGHTS_ON"]

BASES = ("random_forest", "igbrt")  # CumulativeRegression's regressors: RF(C), IGBRT(C)
WEIGHTS_ON = ("train+valid", "valid")  # the rows its least-squares relevance weights are fitted on


def classifier_seed(seed: int, j: int) -> int:
    """The seed of classifier ``j``: the first 32-bit word of the ``j``-th child of ``SeedSequence(seed)``.

    ``numpy.random.SeedSequence(seed).spawn(n)[j]`` is that child; its streams are
    independent of each other and of other estimators' seeds.
    """
    return int(np.random.SeedSequence(seed, spawn_key=(j,)).generate_state(1)[0])


def relevance_weights(labels, weighting="linear") -> np.ndarray:
    r"""The weights $F(c_k)$ (float64, shape (K,)) of the sorted distinct ``labels``.

    ``weighting`` is ``"linear"`` ($c$), ``"square"`` ($c^2$), ``"exp2"``
    ($2^c - 1$, DCG's gain; $2^c$ would add the constant
    $\sum_k p_k = 1$ to every score and rank the same), or an array of K finite
    numbers, one per label in increasing order.
    """
    labels = np.asarray(labels, dtype=np.float64)
    if isinstance(weighting, str):
        if weighting not in WEIGHTINGS:
            raise ParameterError(f"weighting must be one of {WEIGHTINGS} or an array, got {weighting!r}")
        return {"linear": labels, "square": labels**2, "exp2": np.exp2(labels) - 1.0}[weighting]
    weights = np.asarray(weighting, dtype=np.float64)
    if weights.shape != labels.shape or not np.isfinite(weights).all():
        raise ParameterError(f"weighting must be {len(labels)} finite numbers, one per label "
                             f"{labels.tolist()}, got {np.asarray(weighting).tolist()}")
    return weights


def probabilities_from_scores(scores) -> np.ndarray:
    r"""Class probabilities (float64, shape (n_rows, K)) from the classifiers' raw scores.

    ``scores`` (n_rows, K-1): column ``j`` is $s_j$, the log-odds of
    $y > c_j$. Returns $p_k$ of the module docstring: the running minimum of
    $\sigma(s_j)$ over ``j``, then differences. Every entry is >= 0 and each row
    sums to 1 up to rounding ($p_0 = \sigma(-s_0)$ and $\sigma(s_0)$ come
    from one $e^{-|s_0|}$). O(n_rows K).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 1 or np.isnan(scores).any():
        raise ParameterError(f"scores must be (n_rows, K-1) numbers, K >= 2, got shape {scores.shape}")
    above, below = _sigmoid_pair(scores)  # (n_rows, K-1) P(y > c_j), P(y <= c_j)
    monotone = np.minimum.accumulate(above, axis=1)  # (n_rows, K-1) G_j, non-increasing in j
    return np.concatenate([below[:, :1], monotone[:, :-1] - monotone[:, 1:], monotone[:, -1:]],
                          axis=1)  # (n_rows, K)


def probabilities_from_estimates(estimates) -> np.ndarray:
    r"""Class probabilities (float64, shape (n_rows, K)) from regression estimates of $P(y > c_j)$.

    ``estimates`` (n_rows, K-1): column ``j`` is $\hat G_j$, a regressor's prediction of the
    indicator $[y > c_j]$ (Mohan 2010, Alg. 5). Each is clipped to $[0, 1]$ and made monotone
    by the running minimum over ``j`` (the module docstring), then differenced as in
    :func:`probabilities_from_scores`: every entry is >= 0 and each row sums to 1.
    Estimates already in $[0, 1]$ and non-increasing give the plain differences. O(n_rows K).
    """
    estimates = np.asarray(estimates, dtype=np.float64)
    if estimates.ndim != 2 or estimates.shape[1] < 1 or np.isnan(estimates).any():
        raise ParameterError(f"estimates must be (n_rows, K-1) numbers, K >= 2, got shape {estimates.shape}")
    monotone = np.minimum.accumulate(np.clip(estimates, 0.0, 1.0), axis=1)  # (n_rows, K-1) G_j
    return np.concatenate([1.0 - monotone[:, :1], monotone[:, :-1] - monotone[:, 1:], monotone[:, -1:]],
                          axis=1)  # (n_rows, K)


def probabilities_of(model: McRankModel, outputs) -> np.ndarray:
    """The class probabilities (n_rows, K) from the outputs (n_rows, K-1) of ``model``'s ensembles:
    log-odds for an McRank model (:func:`probabilities_from_scores`), estimates of
    $P(y > c_j)$ for a :class:`CumulativeRegressionModel` (:func:`probabilities_from_estimates`).
    """
    if isinstance(model, CumulativeRegressionModel):
        return probabilities_from_estimates(outputs)
    return probabilities_from_scores(outputs)


def fit_relevance_weights(probabilities, y, sample_weight=None) -> np.ndarray:
    r"""Weights $w$ (shape (K,)) minimising $\sum_i u_i (y_i - \sum_k p_{ik} w_k)^2$.

    Least squares of the labels on the class probabilities
    (``numpy.linalg.lstsq``; the minimum-norm solution when a class is never
    predicted), each row counted by its ``sample_weight`` $u_i$ (None: all 1, ordinary
    least squares; otherwise both sides' rows times $\sqrt{u_i}$). No intercept is needed:
    the $p_{ik}$ of a row sum to 1.
    """
    p, y = np.asarray(probabilities, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if sample_weight is not None:
        root = np.sqrt(np.asarray(sample_weight, dtype=np.float64))  # (n_rows,)
        p, y = p * root[:, None], y * root
    return np.linalg.lstsq(p, y, rcond=None)[0]


def classifier_scores(model: McRankModel, X) -> np.ndarray:
    r"""The raw outputs (float64, shape (n_rows, K-1)) of the model's ensembles on ``X``: McRank's
    log-odds $s_j$, or a :class:`CumulativeRegressionModel`'s estimates $\hat G_j$ of $P(y > c_j)$."""
    return run_classifier_scores(REFERENCE, model.classifiers, X)


def class_probabilities(model: McRankModel, X) -> np.ndarray:
    """The class probabilities $p_k$ (float64, shape (n_rows, K)) of the rows of ``X``."""
    return run_class_probabilities(REFERENCE, model, X)


def expected_relevance(model: McRankModel, X) -> np.ndarray:
    r"""The expected relevance $\sum_k p_k F(c_k)$ (float64, shape (n_rows,)) of the rows of ``X``."""
    return run_expected_relevance(REFERENCE, model, X)


def run_classifier_scores(engine: Engine, classifiers, X) -> np.ndarray:
    """The scores (n_rows, K-1) of ``classifiers`` (a McRank model's) on ``engine``'s scorer."""
    X = np.asarray(X)
    columns = [engine.predict_ensemble(c, X) for c in classifiers]  # K-1 arrays of (n_rows,)
    return np.stack(columns, axis=1)  # (n_rows, K-1)


def run_class_probabilities(engine: Engine, model: McRankModel, X) -> np.ndarray:
    """:func:`class_probabilities` on ``engine``'s scorer."""
    return probabilities_of(model, run_classifier_scores(engine, model.classifiers, X))


def run_expected_relevance(engine: Engine, model: McRankModel, X) -> np.ndarray:
    """:func:`expected_relevance` on ``engine``'s scorer."""
    return run_class_probabilities(engine, model, X) @ model.relevance_weights


class CumulativeRanker(BoostedRanker):
    r"""What McRank and :class:`CumulativeRegression` share: one tree ensemble per threshold
    $c_j$ (every training label but the largest) modelling $y > c_j$, class probabilities as
    differences of the cumulative estimates, scores as the expected relevance.

    A subclass fits the ensembles (``fit_model``) and names its model kind (``model_kind``);
    this class checks the labels, scores (``predict``, ``predict_proba``), loads a model file
    and names each ensemble's history by its threshold.
    """

    model_kind = McRankModel  # the model ``fit`` makes and ``load`` reads

    def check_data(self, params, train, valid, init_score) -> None:
        super().check_data(params, train, valid, init_score)
        if init_score is not None:
            raise ParameterError(f"{type(self).__name__} takes no init_score")
        labels = np.unique(train.y)  # (K,) sorted
        if len(labels) < 2:
            raise ParameterError(f"{type(self).__name__} needs at least two distinct labels, got {labels.tolist()}")

    def progress(self, callback, verbose: int):
        """The callback as is: each threshold's ensemble prints its own progress."""
        return callback

    def predict(self, X, n_trees: int | None = None, exits=None) -> np.ndarray:
        r"""The expected relevance $\sum_k p_k F(c_k)$ of every row of ``X`` (array or Dataset).

        ``n_trees``: as in :meth:`predict_proba`.
        ``exits``: must be None (the expected relevance is not a sum over trees).
        """
        if exits is not None:
            raise ParameterError(f"{type(self).__name__} scores by expected relevance, not a sum of trees: "
                                 "no early exits")
        return self.predict_proba(X, n_trees) @ self._fitted_model().relevance_weights

    def predict_proba(self, X, n_trees: int | None = None) -> np.ndarray:
        """The class probabilities (n_rows, K) of the rows of ``X``; column ``k`` is ``classes_[k]``.

        ``n_trees``: the first ``n_trees`` rounds of every ensemble (None: all; a prior model,
        IGBRT's forest, counts whole).
        """
        model = self._fitted_model()
        check_feature_names(X, getattr(self, "feature_names_in_", None), "X")
        classifiers = [c if n_trees is None else truncated(c, min(n_trees, c.n_trees))
                       for c in model.classifiers]
        X = X.X if isinstance(X, Dataset) else dense_features(X)
        with self.engine.threads(self.n_threads):
            outputs = run_classifier_scores(self.engine, classifiers, X)
        return probabilities_of(model, outputs)

    @classmethod
    def load(cls, path, *, verify_checksum: bool = True) -> "CumulativeRanker":
        """An estimator holding the model (of its ``model_kind``) of a model file (either twin wrote it)."""
        model = cls.model_kind.load(path, verify_checksum=verify_checksum)
        names = set(cls._param_names())
        est = cls(**{k: v for k, v in model.params.items() if k in names})
        est._set_fitted(model)
        return est

    def _set_fitted(self, model: McRankModel) -> None:
        self.model_ = model
        self.n_features_in_ = model.n_features
        self.classes_ = model.labels
        self.relevance_weights_ = model.relevance_weights
        self.best_iteration_ = None
        self._read_feature_names(model)
        self.history_ = {f"y>{c:g}:{key}": values for c, clf in zip(model.labels, model.classifiers)
                         for key, values in clf.history.items()}


class McRank(CumulativeRanker):
    r"""McRank ranker: cumulative boosted logistic classifiers, scored by expected relevance.

    Parameters
    ----------
    n_trees, learning_rate : boosting rounds and shrinkage, of every classifier.
    max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2, min_gain_to_split,
    cost_lambda :
        tree shape (see :class:`~twinrank.reference.params.TreeParams`).
    feature_costs, free_after_use : the cost of each feature (an array, or a file of
        ``feature cost`` lines) and whether a feature is free once some earlier tree split on
        it (:class:`~twinrank.reference.params.CostParams`); with ``cost_lambda > 0`` splits
        score $\mathrm{gain} - \lambda_c\,c(f)$ (Mohan 2010, Eq. 6.1). Stored in the model file.
        The classifiers pay in turn: a feature classifier $j$ used is free for $j + 1$.
    subsample : fraction of the training rows drawn without replacement for each tree
        (stochastic gradient boosting, Friedman 2002).
    feature_fraction : fraction of features drawn at each node.
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    subsample_for_bin : the most training rows the bin thresholds are read from (more rows: a sample
        drawn from ``seed``; None: every row). LightGBM's ``subsample_for_bin``, also 200,000.
    weighting : $F$ of the expected relevance: ``"linear"``, ``"square"``,
        ``"exp2"`` or an array with one weight per distinct training label in increasing
        order (see :func:`relevance_weights`).
    fit_weights : fit $F$ instead, by least squares of the training labels on the
        training rows' class probabilities (:func:`fit_relevance_weights`); ``weighting``
        is then unused and must not be an array.
    eval_train : record each classifier's NDCG@10 on the training set after every tree
        (``history_`` keys ``"y>c:train:ndcg@10"``, also in the callback record); it costs
        one metric evaluation of the training set per tree of every classifier, so it is
        off by default.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`):
        ``"learn"`` (each split learns where NaN goes), ``"separate"`` (NaN rows get a child of
        their own, ``TreeParams.missing_split``), or a fill fitted on the training rows (``"zero"``, ``"one"``, ``"mean"``,
        ``"median"``, ``"iterative"``), stored in every classifier of the model.
    seed : classifier ``j`` boosts with ``classifier_seed(seed, j)`` (its row
        subsamples and node feature subsets).
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    low_memory : the fast twin keeps its bins in one layout (no row-order copy: one byte a row and
        feature less), the same model at more time per tree; the reference ignores it.
    verbose : print one line per ``verbose`` rounds of each classifier to stderr (0: silent).

    Attributes
    ----------
    model_ : McRankModel
    classes_ : ndarray, the distinct training labels $c_k$
    relevance_weights_ : ndarray, $F(c_k)$
    history_ : dict of lists, ``"y>c:valid:ndcg@10"`` (with an ``eval_set``) and
        ``"y>c:train:ndcg@10"`` (with ``eval_train``) per round of the classifier of
        threshold ``c``: NDCG@10 of the graded labels ranked by its score; empty with neither.

    Notes
    -----
    Classifier ``j`` is one boosting run (:func:`boosting.boost`) on the graded
    training data with the logistic gradients of the targets $[y > c_j]$, so it
    can record NDCG@10 of its own score. No early stopping: every classifier grows
    ``n_trees`` trees (fewer if no split improves its loss).
    """

    param_objects = (TreeParams, BoostParams, McRankParams, CostParams, FitParams)

    def __init__(self, *, n_trees=BoostParams.n_trees, learning_rate=BoostParams.learning_rate,
                 max_leaves=TreeParams.max_leaves, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, cost_lambda=TreeParams.cost_lambda,
                 feature_costs=CostParams.feature_costs, free_after_use=CostParams.free_after_use,
                 subsample=BoostParams.subsample, feature_fraction=TreeParams.feature_fraction,
                 max_bins=BoostParams.max_bins, weighting=McRankParams.weighting,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 fit_weights=McRankParams.fit_weights, eval_train=BoostParams.eval_train,
                 missing=FitParams.missing, seed=BoostParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory,
                 verbose=FitParams.verbose):
        self._set_init_params(locals())

    def boost_params(self, seed=None) -> BoostParams:
        """The validated :class:`BoostParams` of every classifier (``seed``: the classifier's seed)."""
        values = self.get_params()
        return from_names(BoostParams, {**values, "seed": values["seed"] if seed is None else seed},
                          tree=self.tree_params(), subsample_by="rows")

    def validated_params(self) -> SimpleNamespace:
        values = self.get_params()
        return SimpleNamespace(fit=from_names(FitParams, values), boost=self.boost_params(),
                               mcrank=from_names(McRankParams, values))

    def check_data(self, params, train, valid, init_score) -> None:
        super().check_data(params, train, valid, init_score)
        if not params.mcrank.fit_weights:
            relevance_weights(np.unique(train.y), params.mcrank.weighting)

    def fit_model(self, params, train, valid, *, init_score, callback):
        """One classifier per threshold; ``eval_set`` only adds each one's validation NDCG@10.

        ``callback(iteration, record)`` is called after every tree of every classifier,
        the record's keys prefixed ``"y>c:"``; when it returns True, that classifier keeps its
        trees so far and the later thresholds' classifiers have none (each its prior's log-odds).
        """
        labels = np.unique(train.y)  # (K,) sorted
        costs = self.cost_ledger(params.boost.tree.cost_lambda)  # shared by the classifiers
        watch, classifiers = Watch(callback), []
        for j, c in enumerate(labels[:-1]):
            classifiers.append(self._fit_classifier(params, train, valid, c, j, watch, costs, grow=not watch.stopped))
        if params.mcrank.fit_weights:
            probabilities = probabilities_from_scores(
                run_classifier_scores(self.engine, classifiers, train.X))
            weights = fit_relevance_weights(probabilities, train.y, train.weight)
        else:
            weights = relevance_weights(labels, params.mcrank.weighting)
        return McRankModel(classifiers, labels, weights, train.n_features, self._model_params())

    def _fit_classifier(self, params, train: Dataset, valid, threshold: float, j: int,
                        callback, costs=None, grow: bool = True) -> Ensemble:
        """Boost the logistic classifier of ``y > threshold`` from the log-odds of its prior
        (``grow`` False: no tree, the prior alone)."""
        loss = self.engine.logistic((train.y > threshold).astype(np.float64), weight=train.weight)  # t_i = [y_i > c_j]
        seed = classifier_seed(self.seed, j)
        boost = self.boost_params(seed) if grow else dataclasses.replace(self.boost_params(seed), n_trees=0)
        return run_boosting(
            self.engine, train, loss, boost, valid=valid,
            algorithm="mcrank-classifier", model_params={"threshold": float(threshold), "seed": seed},
            base_score=loss.baseline(),
            callback=with_progress(_prefixed(callback, f"y>{threshold:g}:"), params.fit.verbose,
                                   label=f"y>{threshold:g} "), costs=costs)

    def _model_params(self) -> dict:
        params = with_resolved_costs(self.get_params(), getattr(self, "feature_costs_", None))
        if not isinstance(params["weighting"], str):
            params["weighting"] = np.asarray(params["weighting"], dtype=np.float64).tolist()
        return params

@dataclass(frozen=True)
class CumulativeRegressionParams:
    """Mohan's classification by regression (Mohan 2010, Alg. 5; :class:`CumulativeRegression`).

    Parameters
    ----------
    base : str
        The regressor of each cumulative indicator: ``"random_forest"`` (RF(C)) or ``"igbrt"`` (IGBRT(C)).
    weights_on : str
        The rows the least-squares relevance weights are fitted on: ``"train+valid"`` (as the
        thesis reports) or ``"valid"`` (the validation set alone).
    """

    base: str = "igbrt"
    weights_on: str = "train+valid"

    def __post_init__(self):
        if self.base not in BASES:
            raise ParameterError(f"base must be one of {BASES}, got {self.base!r}")
        if self.weights_on not in WEIGHTS_ON:
            raise ParameterError(f"weights_on must be one of {WEIGHTS_ON}, got {self.weights_on!r}")


_BOOSTING = ("n_trees", "learning_rate", "max_leaves", "max_depth", "min_samples_leaf", "min_hessian_in_leaf",
            "lambda_l2", "min_gain_to_split", "subsample", "feature_fraction")  # IGBRT(C)'s boosting only


class CumulativeRegression(CumulativeRanker):
    r"""Mohan's classification paradigm: cumulative indicators fit by regression forests or IGBRT.

    A. Mohan, *An Empirical Analysis on Point-wise Machine Learning Techniques using Regression
    Trees for Web-search Ranking*, MS thesis, Washington University in St. Louis, 2010, Alg. 5
    (RF(C), IGBRT(C)); A. Mohan, Z. Chen & K. Q. Weinberger, "Web-Search Ranking with Initialized
    Gradient Boosted Regression Trees", JMLR W&CP 14 (2011), Sec. 4.

    For each threshold $c_j$ (every distinct training label but the largest) a squared-loss
    regression ensemble $\hat G_j$ is fit to the targets $t_i = [y_i > c_j] \in \{0, 1\}$:
    a random forest (``base="random_forest"``) or IGBRT (``base="igbrt"``: boosting from the
    forest's predictions). The least-squares fit of an indicator estimates its conditional
    mean, $\hat G_j(x) \approx P(y > c_j \mid x)$. The estimates are clipped to $[0, 1]$ and
    made non-increasing in $j$ (:func:`probabilities_from_estimates`),

    $$G_j = \min_{j' \le j} \min\big(1, \max(0, \hat G_{j'})\big), \qquad
    p_0 = 1 - G_0,\; p_k = G_{k-1} - G_k,\; p_{K-1} = G_{K-2},$$

    and a document scores its expected relevance $S(x) = \sum_k p_k(x)\, w_k$ with the weights
    fitted by ordinary least squares, $w = \arg\min_w \sum_i (y_i - \sum_k p_{ik} w_k)^2$, over
    the rows ``weights_on`` names (:func:`fit_relevance_weights`; no intercept: each row of
    $p$ sums to 1). Without crossings or estimates outside $[0, 1]$ the score is affine in the
    estimates, $S = w_0 + \sum_j \hat G_j (w_{j+1} - w_j)$: a linear model of the K-1
    regressors with an intercept.

    Parameters
    ----------
    base : ``"igbrt"`` (IGBRT(C), the default) or ``"random_forest"`` (RF(C)).
    weights_on : ``"train+valid"`` (the default, as the thesis reports its results) or
        ``"valid"`` (the thesis's Alg. 5: held-out rows only); either needs an ``eval_set``.
    n_trees, learning_rate, max_leaves, max_depth, min_samples_leaf, min_hessian_in_leaf, lambda_l2,
    min_gain_to_split, subsample, feature_fraction :
        IGBRT's boosting, as in :class:`~twinrank.reference.rankers.forest.IGBRT`; with
        ``base="random_forest"`` there is none, and changing them is an error.
    rf_n_trees, rf_max_leaves, rf_max_depth, rf_min_samples_leaf, rf_feature_fraction, rf_bootstrap,
    rf_query_subsample :
        the forest's, as in :class:`~twinrank.reference.rankers.forest.RandomForest` (for
        IGBRT(C), the forest it boosts from).
    max_bins : histogram bins per feature (at most 255, plus the missing bin).
    subsample_for_bin : the most training rows the bin thresholds are read from (more rows: a sample
        drawn from ``seed``; None: every row). LightGBM's ``subsample_for_bin``, also 200,000.
    missing : missing-value strategy, one of ``missing.STRATEGIES`` (:mod:`~twinrank.reference.rankers.missing`),
        fitted once before any regressor and stored in every regressor of the model.
    seed : regressor ``j`` is seeded ``classifier_seed(seed, j)``, as McRank's classifiers.
    n_threads : threads of the fast twin (None: all cores); the reference ignores it.
    low_memory : the fast twin keeps its bins in one layout (no row-order copy: one byte a row and
        feature less), the same model at more time per tree; the reference ignores it.
    verbose : print one line per ``verbose`` trees of each regressor to stderr (0: silent).

    Attributes
    ----------
    model_ : CumulativeRegressionModel
    classes_ : ndarray, the distinct training labels $c_k$
    relevance_weights_ : ndarray, the fitted $w_k$
    history_ : dict of lists, each regressor's history as its base estimator records it, keys
        prefixed ``"y>c:"``: ``"y>c:valid:ndcg@10"``, NDCG@10 of the graded validation labels
        ranked by the estimate of threshold ``c`` (RF(C) adds the forest's in-sample
        ``"y>c:train:ndcg@10"``, of the 0/1 targets).
    """

    param_objects = (TreeParams, BoostParams, CumulativeRegressionParams, FitParams, ("rf_", ForestParams),
                     ("rf_", TreeParams))
    model_kind = CumulativeRegressionModel

    def __init__(self, *, base=CumulativeRegressionParams.base, weights_on=CumulativeRegressionParams.weights_on,
                 n_trees=BoostParams.n_trees, learning_rate=0.05, max_leaves=8, max_depth=TreeParams.max_depth,
                 min_samples_leaf=TreeParams.min_samples_leaf,
                 min_hessian_in_leaf=TreeParams.min_hessian_in_leaf, lambda_l2=TreeParams.lambda_l2,
                 min_gain_to_split=TreeParams.min_gain_to_split, subsample=BoostParams.subsample,
                 feature_fraction=TreeParams.feature_fraction, max_bins=BoostParams.max_bins,
                 subsample_for_bin=BoostParams.subsample_for_bin,
                 rf_n_trees=ForestParams.n_trees, rf_max_leaves=1024, rf_max_depth=TreeParams.max_depth,
                 rf_min_samples_leaf=5, rf_feature_fraction=0.1, rf_bootstrap=ForestParams.bootstrap,
                 rf_query_subsample=ForestParams.query_subsample, missing=FitParams.missing,
                 seed=BoostParams.seed, n_threads=FitParams.n_threads,
                 low_memory=FitParams.low_memory, verbose=FitParams.verbose):
        self._set_init_params(locals())

    def regressor(self, seed: int) -> RandomForest | IGBRT:
        """The (unfitted) regressor of one threshold, seeded ``seed``, on this estimator's engine.

        A :class:`RandomForest` of the ``rf_`` parameters, or an :class:`IGBRT` of the boosting's
        and the ``rf_`` parameters. It splits missing values as this estimator does; a fill
        strategy is this estimator's, fitted once before any regressor sees the rows.
        """
        values = self.get_params()
        shared = dict(max_bins=values["max_bins"], subsample_for_bin=values["subsample_for_bin"],
                      missing=missing_split(self.missing), seed=seed,
                      n_threads=self.n_threads, low_memory=self.low_memory)
        forest = {name: value for name, value in values.items() if name.startswith("rf_")}
        if self.base == "random_forest":
            return estimator_on(self.engine, RandomForest)(**{n[3:]: v for n, v in forest.items()}, **shared)
        return estimator_on(self.engine, IGBRT)(**{n: values[n] for n in _BOOSTING}, **forest, **shared)

    def validated_params(self) -> SimpleNamespace:
        values = self.get_params()
        params = SimpleNamespace(fit=from_names(FitParams, values),
                                 cumulative=from_names(CumulativeRegressionParams, values))
        defaults = inspect.signature(type(self).__init__).parameters
        changed = [name for name in _BOOSTING if values[name] != defaults[name].default]
        if params.cumulative.base == "random_forest" and changed:
            raise ParameterError(f"{', '.join(changed)}: IGBRT's boosting, which base='random_forest' does not "
                                 "have; the forest's parameters are rf_n_trees, rf_max_leaves, ...")
        try:
            self.regressor(self.seed).validated_params()  # before any data work; each fit validates its own
        except ParameterError as e:
            raise ParameterError(f"the regressors' parameters: {e}") from None
        return params

    def needs_validation(self, params) -> list[str]:
        """Also: the least-squares relevance weights are fitted on the validation rows."""
        return super().needs_validation(params) + [
            f"fitting the least-squares relevance weights (weights_on={params.cumulative.weights_on!r})"]

    def planned_trees(self) -> int:
        """The trees ``fit`` grows per threshold (the progress display's total)."""
        return self.rf_n_trees + (self.n_trees if self.base == "igbrt" else 0)

    def fit_model(self, params, train, valid, *, init_score, callback):
        """One regressor per threshold, then the least-squares weights on ``weights_on``'s rows.

        ``callback(iteration, record)`` is called after every tree of every regressor, the
        record's keys prefixed ``"y>c:"``; when it returns True, that regressor keeps its trees
        so far and the later thresholds' regressors have none (each the mean of its targets).
        """
        labels = np.unique(train.y)  # (K,) sorted
        watch, regressors = Watch(callback), []
        for j, c in enumerate(labels[:-1]):
            regressors.append(self._fit_regressor(params, train, valid, c, j, watch) if not watch.stopped
                              else _constant(train, c, self.regressor(0).model_algorithm))
        held = first_set(valid)  # the first eval set
        rows = [held] if params.cumulative.weights_on == "valid" else [train, held]
        probabilities = np.concatenate([probabilities_from_estimates(
            run_classifier_scores(self.engine, regressors, data.X)) for data in rows])  # (n_rows, K)
        weights = fit_relevance_weights(probabilities, np.concatenate([data.y for data in rows]),
                                        stacked_weights(rows))
        return CumulativeRegressionModel(regressors, labels, weights, train.n_features, self._model_params())

    def _fit_regressor(self, params, train: Dataset, valid, threshold: float, j: int, callback) -> Ensemble:
        """The squared-loss regressor of the indicator ``y > threshold``, seeded ``classifier_seed(seed, j)``."""
        regressor = self.regressor(classifier_seed(self.seed, j))
        regressor.feature_costs_ = None  # cost-blind
        targets = dataclasses.replace(train, y=(train.y > threshold).astype(np.float64))  # t_i = [y_i > c_j]
        label = f"y>{threshold:g}"
        return regressor.fit_model(regressor.validated_params(), targets, valid, init_score=None,
                                   callback=with_progress(_prefixed(callback, label + ":"), params.fit.verbose,
                                                          label=label + " "))

    def predict_proba(self, X, n_trees: int | None = None) -> np.ndarray:
        """The class probabilities (n_rows, K) of the rows of ``X``; column ``k`` is ``classes_[k]``.

        ``n_trees``: IGBRT(C)'s first ``n_trees`` boosted trees of every regressor, each forest
        whole; RF(C) takes None only (a forest's estimate is the mean of all its trees).
        """
        if n_trees is not None and self.base == "random_forest":
            raise ParameterError("n_trees: a forest's estimate is the mean of all its trees; RF(C) scores whole")
        return super().predict_proba(X, n_trees)


def _constant(train: Dataset, threshold: float, algorithm: str) -> Ensemble:
    """The regressor of ``y > threshold`` without a tree: the (weighted) mean of its targets (a stopped fit's)."""
    mean = np.average(train.y > threshold, weights=train.weight)  # of the weighted rows
    return Ensemble(trees=[], tree_weights=np.zeros(0), base_score=float(mean),
                    n_features=train.n_features, algorithm=algorithm)


def _prefixed(callback, prefix: str):
    """``callback`` receiving records whose keys start with ``prefix`` (None stays None)."""
    if callback is None:
        return None
    return lambda iteration, record: callback(iteration, {prefix + k: v for k, v in record.items()})

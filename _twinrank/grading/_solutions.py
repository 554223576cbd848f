r"""The course's solutions: each is the reference twin's own function, never a third implementation.

The rule: an exercise's solution is the reference function that computes the same thing.

* Where the exercise *is* a reference function (its name, signature and docstring:
  ``minmax_per_query``), the solution is that function, imported.
* Where the exercise is a special case of one (one query of a per-query metric, one column
  of the binning, one seed's generator, node arrays instead of a ``Tree``) or has its
  contract under another name, the solution is a short adapter: it builds the reference
  function's arguments from the exercise's, calls it once and takes out the part the exercise
  asks for, as :mod:`~twinrank.grading._oracles` does with the fast twin.

So a solution is right for the reason the grader is: the project keeps the reference in agreement
with the fast twin that grades it (``Exercise.registry``), and there is no third copy of the math to
check. An adapter's docstring is the exercise's statement (the math, the paper's equation, the tie
rule, the edge cases), its description ending with the reference function it calls (the stub names
it too, as the grader's report names the fast one). ``twinrank exercise start NAME DIR`` writes a
function's signature and docstring with the body ``raise NotImplementedError``; ``twinrank exercise
solve NAME DIR`` writes the function with the import lines of the reference modules it calls
(:func:`~twinrank.grading.exercises.solution_source`). ``tests/grading/test_exercises.py`` checks
that every solution is or calls a reference function and passes its exercise.
"""
import numpy as np

from twinrank.reference import sampling
from twinrank.reference.combination import bag_rules
from twinrank.reference.evaluation import metrics, stats
from twinrank.reference.evaluation.conventions import Convention
from twinrank.reference.io.model import Tree
from twinrank.reference.losses import _query_pairs, objectives
from twinrank.reference.params import TreeParams
from twinrank.reference.trees import binning, predict, tree

# ---------------------------------------------------------------- lesson 1: metrics

def dcg(labels, scores, k=None, gain="exp2", discount="log2"):
    r"""DCG@k of one query (Järvelin & Kekäläinen 2002) under a gain table and a discount.

    Rank the documents by descending score, ties in input order (a stable sort), and sum
    over the top $\min(k, n)$ ranks $r = 1, 2, \dots$:

    $$\mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} g(l_r)\, d(r)$$

    with $l_r$ the label of the document at rank $r$ and

    * gain ``"exp2"``: $g(l) = 2^l - 1$ (Burges et al. 2005; LightGBM, RankLib);
      ``"linear"``: $g(l) = l$ (trec_eval); ``"letor"``: LETOR 4.0's table
      $g(0) = 0, g(1) = 1, g(2) = 3$ (grades 0-2 only: the graders draw no other label);
    * discount ``"log2"``: $d(r) = 1 / \log_2(1 + r)$; ``"jarvelin"``: the original
      $d(r) = 1$ for $r \le 2$, then $1 / \log_2 r$ (LETOR's Eval-Score-4.0.pl).

    The solution is the reference twin's ``twinrank.reference.evaluation.metrics.dcg`` of one
    query (``query_offsets = [0, n]``) under ``Convention(gain=gain, discount=discount)``.

    Parameters
    ----------
    labels : float64 array (n,), graded relevance 0, 1, 2, ...
    scores : float64 array (n,), the model's scores (ties happen)
    k : int >= 1 or None (the whole list)
    gain : "exp2", "linear" or "letor"
    discount : "log2" or "jarvelin"

    Returns
    -------
    float: the DCG@k (0.0 for a query without documents).
    """
    return metrics.dcg(labels, scores, np.array([0, len(labels)]), k=k,
                       convention=Convention(gain=gain, discount=discount))[0]


def average_precision(labels, scores, k=None):
    r"""Average precision AP@k of one query, as RankLib and trec_eval count it.

    Rank by descending score, ties in input order. A document is relevant when its
    label is $> 0$. With $R$ the number of relevant documents of the whole query
    and $\mathrm{P@r}$ the fraction of relevant documents among the top $r$:

    $$\mathrm{AP@k} = \frac{1}{R} \sum_{r \le \min(k, n),\ \mathrm{rel}_r} \mathrm{P@r}$$

    (Baeza-Yates & Ribeiro-Neto; MAP is its mean over queries). A query without a
    relevant document scores 0 (RankLib's rule; LightGBM's would be 1 and its divisor
    $\min(k, R)$: see the Metrics page).

    The solution is the reference twin's ``twinrank.reference.evaluation.metrics.average_precision``
    of one query under RankLib's convention (``convention="ranklib"``).

    Parameters
    ----------
    labels, scores : float64 arrays (n,)
    k : int >= 1 or None (the whole list)

    Returns
    -------
    float
    """
    return metrics.average_precision(labels, scores, np.array([0, len(labels)]), k=k, convention="ranklib")[0]


def err(labels, scores, k=None, max_label=4.0):
    r"""Expected reciprocal rank ERR@k of one query (Chapelle, Metzler, Zhang & Grinspan 2009, Eq. 4).

    A user reads the ranking top down and stops at rank $r$ with probability
    $R_r = R(l_r) = (2^{l_r} - 1) / 2^{l_{\max}}$ (Eq. 3; $l_{\max}$ = ``max_label``):

    $$\mathrm{ERR@k} = \sum_{r=1}^{\min(k, n)} \frac{1}{r}\, R_r \prod_{m=1}^{r-1} (1 - R_m).$$

    Rank by descending score, ties in input order.

    The solution is the reference twin's ``twinrank.reference.evaluation.metrics.err`` of one
    query under ``Convention(err_max_label=max_label)``.

    Parameters
    ----------
    labels, scores : float64 arrays (n,); every label <= max_label
    k : int >= 1 or None (the whole list)
    max_label : float, $l_{\max}$ (RankLib fixes it at 4)

    Returns
    -------
    float (0.0 when no document has a positive label)
    """
    return metrics.err(labels, scores, np.array([0, len(labels)]), k=k,
                       convention=Convention(err_max_label=max_label))[0]


# ---------------------------------------------------------------- lesson 2: trees and histograms

def bin_thresholds(column, max_bins):
    r"""The bin thresholds of one feature (scikit-learn's and twinrank's rule; ``binning.py``).

    Drop the missing values (NaN). Let $u_0 < \dots < u_m$ be the distinct values and
    $s_0 \le \dots \le s_{n-1}$ all values, sorted, in float64.

    * If $m + 1 \le$ ``max_bins``: the midpoints $(u_i + u_{i+1}) / 2$, so every
      distinct value gets a bin of its own.
    * Else the quantile midpoints: for $j = 1, \dots,$ ``max_bins - 1``, with
      $p = (n - 1)\, j$, $\mathrm{lo} = \lfloor p / \mathtt{max\_bins} \rfloor$ and
      $\mathrm{hi} = \lceil p / \mathtt{max\_bins} \rceil$ (integer arithmetic), the
      threshold $(s_{\mathrm{lo}} + s_{\mathrm{hi}}) / 2$ (``np.percentile(..., method="midpoint")``).

    Either way remove duplicates (``np.unique``): strictly ascending thresholds, at most
    ``max_bins - 1``. A value $x$ then falls in bin $\#\{b : t_b < x\}$, so
    $x \le t_b \iff \mathrm{bin}(x) \le b$ (Ke et al. 2017, LightGBM, Sec. 3, the
    histogram algorithm). A constant or all-NaN column has no threshold.
    Compute a midpoint as ``0.5 * a + 0.5 * b``.

    The solution is the reference twin's ``twinrank.reference.trees.binning.bin_thresholds`` of
    the one-column matrix ``column[:, None]``: its only array.

    Parameters
    ----------
    column : float32 array (n,), NaN = missing
    max_bins : int in [2, 255]

    Returns
    -------
    float64 array (at most max_bins - 1,)
    """
    return binning.bin_thresholds(np.asarray(column)[:, None], max_bins)[0]


def node_histogram(binned, gradients, hessians, rows):
    r"""The histogram of one tree node: per feature and bin, the sums of $g$, $h$ and 1.

    For feature $f$ and bin $b$ (value bins 0..254, the missing bin 255):

    $$\mathrm{hist}[f, b] = \Big(\sum_{i \in \mathrm{rows},\ \mathrm{bin}_{if} = b} g_i,\ \
    \sum_{i \in \mathrm{rows},\ \mathrm{bin}_{if} = b} h_i,\ \
    \#\{i \in \mathrm{rows} : \mathrm{bin}_{if} = b\}\Big)$$

    (Ke et al. 2017, LightGBM, Alg. 1; Chen & Guestrin 2016, Sec. 3.3). ``rows`` may
    list a row more than once (a bootstrap sample): it counts as often as it is listed.
    Use ``np.bincount(..., weights=..., minlength=256)``.

    The solution is the reference twin's ``twinrank.reference.trees.tree.build_histogram``, called:
    it has this contract under another name (the reference's own ``_histogram.node_histogram``
    is the grower's form, statistics first, over some of the features).

    Parameters
    ----------
    binned : uint8 array (n_rows, n_features), 255 = missing
    gradients, hessians : float64 arrays (n_rows,)
    rows : int64 array, the node's rows (repeats allowed)

    Returns
    -------
    float64 array (n_features, 256, 3): ``[..., 0]`` gradient sums, ``[..., 1]`` hessian
    sums, ``[..., 2]`` row counts.
    """
    return tree.build_histogram(binned, gradients, hessians, rows)


def best_split(hist, n_bins, lambda_l2, min_rows):
    r"""The best split of one feature, with a missing bin (``tree.py``, the split rules).

    ``hist`` is the feature's histogram at a node: row $b$ holds $(G_b, H_b, n_b)$ of
    value bin $b = 0 .. n_\mathrm{bins} - 1$, and row 255 those of the missing rows
    $M$. With $G, H$ the node's sums (all 256 rows) and
    $S(G, H) = G^2 / (H + \lambda_2)$, 0 when $H + \lambda_2 \le 0$, a candidate
    sending $L$ left and $R$ right has the gain (Chen & Guestrin 2016, Eq. 7, without
    its 1/2 and $\gamma$)

    $$\mathrm{gain} = S(G_L, H_L) + S(G_R, H_R) - S(G, H).$$

    Candidates, in this order:

    * for $b = 0 .. n_\mathrm{bins} - 2$: $L$ = rows of bins $\le b$; if $M$ has
      rows, first with $M$ on the right, then with $M$ on the left; if not, once;
    * if $M$ has rows, $b = n_\mathrm{bins} - 1$: every value left, $M$ right.

    A candidate is valid when both children have at least ``min_rows`` rows. The best
    is the valid candidate of largest gain; ties (gains within $\epsilon S^*$ of the
    largest, $\epsilon = 10^{-10}$, $S^* = |\mathrm{gain}^*| + S(G, H)$) go to the
    first in the order. There is no split unless $\mathrm{gain}^* > \epsilon S^*$.

    The solution is the reference twin's ``twinrank.reference.trees.tree.find_best_split`` of a
    node with this one feature (``TreeParams(lambda_l2=lambda_l2, min_samples_leaf=min_rows,
    min_hessian_in_leaf=0.0)``, no cost penalty).

    Returns
    -------
    None, or ``(gain, bin_threshold, missing_left)``: the split's gain, its $b$ and
    whether the missing rows go left. When $M$ is empty, ``missing_left`` says where a
    missing value would go at prediction time: to the child with more rows (ties: left).

    Parameters
    ----------
    hist : float64 array (256, 3)
    n_bins : int >= 1, the feature's value bins
    lambda_l2 : float >= 0
    min_rows : int >= 1
    """
    params = TreeParams(lambda_l2=lambda_l2, min_samples_leaf=min_rows, min_hessian_in_leaf=0.0)
    split = tree.find_best_split(hist[None], hist.sum(axis=0), np.array([n_bins]), np.array([True]), np.zeros(1),
                                 params, min_rows)
    return None if split is None else (split.gain, split.bin_threshold, split.missing_left)


# ---------------------------------------------------------------- lesson 3: gradient boosting

def newton_leaf_value(gradients, hessians, lambda_l2=0.0):
    r"""The value of a leaf: one Newton step on the rows it holds.

    Boosting fits a tree to the gradients $g_i$ and hessians $h_i$ of the loss at
    the current scores; a leaf holding rows $I$ takes the value minimising the
    second-order expansion $\sum_{i \in I} (g_i v + \tfrac12 h_i v^2) + \tfrac12 \lambda_2 v^2$:

    $$v = -\frac{G}{H + \lambda_2}, \qquad G = \sum_{i \in I} g_i,\ H = \sum_{i \in I} h_i$$

    (Friedman 2001, Eq. 23 for the logistic loss; Chen & Guestrin 2016, Eq. 5;
    Burges 2010, Sec. 7 for LambdaMART). A leaf with $H + \lambda_2 \le 0$ gets 0.
    The learning rate is applied by the caller, not here.

    The solution is the reference twin's leaf value, ``twinrank.reference.trees.tree._leaf_value``,
    of the sums $G$ and $H$: the grower's own Newton step.

    Parameters
    ----------
    gradients, hessians : float64 arrays (n,), hessians >= 0
    lambda_l2 : float >= 0

    Returns
    -------
    float
    """
    return tree._leaf_value(np.sum(gradients), np.sum(hessians), lambda_l2)


def subsample(seed, n, fraction):
    r"""The rows (or queries) one round of stochastic gradient boosting trains on.

    Friedman (2002, "Stochastic gradient boosting", Sec. 2) draws, each round, a random
    fraction of the training data without replacement; twinrank draws rows
    (``GBRT(subsample=...)``) or whole queries (``query_subsample``) the same way, outside
    the kernels, so both twins see the same sample (``sampling.py``):

    * $m = \max(1, \min(n, \mathrm{round}(\mathtt{fraction} \cdot n)))$ with Python's
      ``round`` (ties to even);
    * if ``fraction >= 1``: every index, ``0 .. n-1``, drawing nothing;
    * else the first $m$ entries of ``rng.permutation(n)``, sorted, with
      ``rng = numpy.random.default_rng(seed)``.

    The solution is the reference twin's ``twinrank.reference.sampling.subsample`` with the
    generator ``sampling.make_rng(seed)``.

    Parameters
    ----------
    seed : int
    n : int >= 1
    fraction : float in (0, 1]

    Returns
    -------
    int64 array (m,), ascending
    """
    return sampling.subsample(sampling.make_rng(seed), n, fraction)


# ---------------------------------------------------------------- lesson 4: LambdaRank

def ndcg_swap_delta(labels, scores, k=None):
    r"""$|\Delta \mathrm{NDCG@k}|$ of swapping every pair of documents of one query.

    Rank by descending score, ties in input order, and let $t_i$ be the 0-based
    position of document $i$. Swapping documents $i$ and $j$ exchanges their
    positions; only their two terms of the DCG change, so (Burges 2010, Sec. 4;
    Wu, Burges, Svore & Gao 2010):

    $$|\Delta \mathrm{NDCG@k}_{ij}| = \frac{|G_i - G_j|\ |D(t_i) - D(t_j)|}{\mathrm{IDCG@k}},$$

    with $G = 2^l - 1$, $D(t) = 1 / \log_2(2 + t)$ for $t < k$ and 0 beyond, and
    $\mathrm{IDCG@k}$ the DCG@k of the labels sorted by descending gain. A query
    whose IDCG@k is 0 gets all zeros.

    The solution is the reference twin's ``twinrank.reference.losses.objectives._delta_ndcg``
    (LambdaRank's metric change for NDCG) on every pair of the query, ranked by
    ``objectives.rank_order``, its ideal ranking from ``_query_pairs.label_order``.

    Parameters
    ----------
    labels, scores : float64 arrays (n,)
    k : int >= 1 or None (the whole list)

    Returns
    -------
    float64 array (n, n), symmetric, indexed by document (input order), zero diagonal.
    """
    labels = np.asarray(labels, dtype=np.float64)
    n = len(labels)
    query, offsets = np.zeros(n, dtype=np.int64), np.array([0, n])  # one query
    order = objectives.rank_order(scores, offsets)  # (n,) best first, ties in input order
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)  # (n,) t_i
    delta = objectives._delta_ndcg(labels, position, _query_pairs.label_order(labels, query, order), query,
                                   offsets, k)
    i, j = np.indices((n, n))  # (n, n) each: every pair
    return delta(i.ravel(), j.ravel()).reshape(n, n)


def lambdarank_lambdas(labels, scores, sigma=1.0):
    r"""LambdaRank's lambdas and their derivatives for NDCG, one query (Burges 2010, Eqs. 3-4, Sec. 7).

    For every pair with $l_i > l_j$, with $|\Delta Z_{ij}|$ the NDCG change of
    swapping them (exercise ``ndcg_swap_delta``, whole list, $k$ = None):

    $$\rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad
    \lambda_{ij} = \sigma\, |\Delta Z_{ij}|\, \rho_{ij},$$

    $$\lambda_i = \sum_{j:\, l_i > l_j} \lambda_{ij} - \sum_{j:\, l_j > l_i} \lambda_{ji}, \qquad
    h_i = \sum_{j:\, l_i \ne l_j} \sigma^2 |\Delta Z_{ij}|\, \rho_{ij} (1 - \rho_{ij})$$

    ($\rho$ of the pair ordered better-label first). $\lambda_i > 0$ pushes
    document $i$ up. A query with fewer than two documents, one label only or IDCG 0
    gets zeros. (twinrank's objective returns $g = -\lambda$, the gradient of a loss
    that trees minimise.) The checks draw queries whose scores do not all tie: a query
    whose scores all tie has no ranking yet, and twinrank takes the expectation of its
    lambdas over every order (``docs/lambdas.md``, "A query whose scores all tie").

    The solution is the reference twin's ``twinrank.reference.losses.objectives.lambdarank`` of
    one query, ``metric="ndcg"`` (no truncation, no normalisation): ``(-g, h)``.

    Parameters
    ----------
    labels, scores : float64 arrays (n,)
    sigma : float > 0

    Returns
    -------
    (lambdas, hessians): two float64 arrays (n,)
    """
    g, h = objectives.lambdarank(labels, scores, np.array([0, len(labels)]), metric="ndcg", sigma=sigma)
    return -g, h


# ---------------------------------------------------------------- lesson 5: random forests

def predict_tree(feature, threshold, left, right, missing, value, X):
    r"""Score rows with one regression tree stored as flat node arrays.

    Node 0 is the root. A node with ``left[k] == -1`` is a leaf of value ``value[k]``;
    any other node sends a row with $x_{f} \le \mathrm{threshold}[k]$ (with
    $f = \mathrm{feature}[k]$) to ``left[k]``, a larger value to ``right[k]`` and a
    missing one (NaN) to ``missing[k]`` (which is ``left[k]`` or ``right[k]``, or a
    third child of its own). A threshold of ``inf`` sends every value left. A random
    forest (Breiman 2001) scores a document by the mean of its trees' values; a boosted
    ensemble by their weighted sum.

    The solution is the reference twin's ``twinrank.reference.trees.predict.predict_tree`` of the
    ``Tree`` these node arrays are.

    Parameters
    ----------
    feature, left, right, missing : int32 arrays (n_nodes,)
    threshold, value : float64 arrays (n_nodes,)
    X : float32 array (n_rows, n_features), NaN = missing

    Returns
    -------
    float64 array (n_rows,): the value of the leaf each row reaches.
    """
    n = len(feature)
    nodes = Tree(feature=feature, threshold=threshold, bin_threshold=np.full(n, -1), left=left, right=right,
                 missing=missing, value=value, gain=np.zeros(n), count=np.zeros(n), hessian_sum=np.zeros(n))
    return predict.predict_tree(nodes, X)


def bootstrap_rows(seed, n):
    r"""A bootstrap sample of ``n`` rows, as a random forest's tree sees it (Breiman 2001, Sec. 2).

    Draw ``n`` indices from ``0 .. n-1`` uniformly *with* replacement (about
    $1 - 1/e \approx 63\%$ distinct), as ``rng.integers(0, n, size=n)`` with
    ``rng = numpy.random.default_rng(seed)``, and sort them (``sampling.bootstrap``; a row
    drawn twice counts twice in the tree's histograms).

    The solution is the reference twin's ``twinrank.reference.sampling.bootstrap`` with the
    generator ``sampling.make_rng(seed)``.

    Parameters
    ----------
    seed : int
    n : int >= 1

    Returns
    -------
    int64 array (n,), ascending
    """
    return sampling.bootstrap(sampling.make_rng(seed), n)


# ---------------------------------------------------------------- lesson 6: evaluation

def paired_t_statistic(a, b):
    r"""The paired t-test's statistic of two systems' per-query metric values (``stats.py``).

    With $d_i = a_i - b_i$ over the $n$ queries both systems ranked,
    $\bar d$ their mean and $s_d$ their *sample* standard deviation
    ($n - 1$ in the denominator):

    $$t = \frac{\bar d}{s_d / \sqrt{n}}, \qquad \nu = n - 1$$

    degrees of freedom (Student 1908; for IR, Smucker, Allan & Carterette 2007, Sec. 2.2).
    Differences without variance ($s_d = 0$) leave $t$ undefined: NaN.

    The solution is the reference twin's ``twinrank.reference.evaluation.stats.paired_t_test``:
    its ``(t_statistic, df)``.

    Parameters
    ----------
    a, b : float64 arrays (n,), n >= 2, e.g. NDCG@10 of each query under systems A and B

    Returns
    -------
    (t, df): a float (NaN when $s_d = 0$) and an int
    """
    result = stats.paired_t_test(a, b)
    return result.t_statistic, result.df


# ---------------------------------------------------------------- lesson 7: bagging

# The reference's own function is this exercise's solution (and its docstring the statement).
minmax_per_query = bag_rules.minmax_per_query

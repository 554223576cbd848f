r"""The course's reference solutions: one self-contained NumPy function per exercise.

``twinrank exercise solve NAME DIR`` writes a function of this module into ``DIR/NAME.py``
(with ``import numpy as np`` above it); ``twinrank exercise start NAME DIR`` writes its
signature and docstring with the body replaced by ``raise NotImplementedError``. So each
docstring is the exercise's statement: the math, the paper's equation, the tie rule and
what the edge cases return. Every function uses NumPy only and no helper outside itself; where the
reference itself has such a function for the exercise (``minmax_per_query``), the solution is the
reference's function, not a third implementation.

The grader never trusts these: ``twinrank exercise check`` compares a file against the
*fast* twin (``_twinrank/grading/exercises.py`` names the function each exercise is graded by), and
``tests/grading/test_exercises.py`` checks that each solution passes there.
"""
import numpy as np

from twinrank.reference.combination import bag_rules

# ---------------------------------------------------------------- lesson 1: metrics

def dcg(labels, scores, k=None, gain="exp2", discount="log2"):
    r"""DCG@k of one query (Järvelin & Kekäläinen 2002) under a gain table and a discount.

    Rank the documents by descending score, ties in input order (a stable sort), and sum
    over the top $\min(k, n)$ ranks $r = 1, 2, \dots$:

    $$\mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} g(l_r)\, d(r)$$

    with $l_r$ the label of the document at rank $r$ and

    * gain ``"exp2"``: $g(l) = 2^l - 1$ (Burges et al. 2005; LightGBM, RankLib);
      ``"linear"``: $g(l) = l$ (trec_eval); ``"letor"``: LETOR 4.0's table
      $g(0) = 0, g(1) = 1, g(2) = 3$ and 0 for any other label;
    * discount ``"log2"``: $d(r) = 1 / \log_2(1 + r)$; ``"jarvelin"``: the original
      $d(r) = 1$ for $r \le 2$, then $1 / \log_2 r$ (LETOR's Eval-Score-4.0.pl).

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
    labels = np.asarray(labels, dtype=np.float64)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")  # (n,) best first
    ranked = labels[order]  # (n,) labels in ranked order
    if gain == "exp2":
        gains = np.exp2(ranked) - 1.0
    elif gain == "linear":
        gains = ranked
    else:
        gains = np.where(ranked == 1.0, 1.0, np.where(ranked == 2.0, 3.0, 0.0))
    r = np.arange(1, len(ranked) + 1, dtype=np.float64)  # (n,) 1-based ranks
    if discount == "log2":
        discounts = 1.0 / np.log2(1.0 + r)
    else:
        discounts = 1.0 / np.log2(np.maximum(r, 2.0))
    top = r <= (len(r) if k is None else k)  # (n,) within the cutoff
    return float(np.sum(np.where(top, gains * discounts, 0.0)))


def average_precision(labels, scores, k=None):
    r"""Average precision AP@k of one query, as RankLib and trec_eval count it.

    Rank by descending score, ties in input order. A document is relevant when its
    label is $> 0$. With $R$ the number of relevant documents of the whole query
    and $\mathrm{P@r}$ the fraction of relevant documents among the top $r$:

    $$\mathrm{AP@k} = \frac{1}{R} \sum_{r \le \min(k, n),\ \mathrm{rel}_r} \mathrm{P@r}$$

    (Baeza-Yates & Ribeiro-Neto; MAP is its mean over queries). A query without a
    relevant document scores 0 (RankLib's rule; LightGBM's would be 1 and its divisor
    $\min(k, R)$: see the Metrics page).

    Parameters
    ----------
    labels, scores : float64 arrays (n,)
    k : int >= 1 or None (the whole list)

    Returns
    -------
    float
    """
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    relevant = np.asarray(labels, dtype=np.float64)[order] > 0  # (n,) ranked order
    n_relevant = relevant.sum()
    if n_relevant == 0:
        return 0.0
    r = np.arange(1, len(relevant) + 1)  # (n,) 1-based ranks
    precision_at_r = np.cumsum(relevant) / r  # (n,) P@r
    top = r <= (len(r) if k is None else k)
    return float(np.sum(precision_at_r[relevant & top]) / n_relevant)


def err(labels, scores, k=None, max_label=4.0):
    r"""Expected reciprocal rank ERR@k of one query (Chapelle, Metzler, Zhang & Grinspan 2009, Eq. 4).

    A user reads the ranking top down and stops at rank $r$ with probability
    $R_r = R(l_r) = (2^{l_r} - 1) / 2^{l_{\max}}$ (Eq. 3; $l_{\max}$ = ``max_label``):

    $$\mathrm{ERR@k} = \sum_{r=1}^{\min(k, n)} \frac{1}{r}\, R_r \prod_{m=1}^{r-1} (1 - R_m).$$

    Rank by descending score, ties in input order.

    Parameters
    ----------
    labels, scores : float64 arrays (n,); every label <= max_label
    k : int >= 1 or None (the whole list)
    max_label : float, $l_{\max}$ (RankLib fixes it at 4)

    Returns
    -------
    float (0.0 when no document has a positive label)
    """
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    stop = (np.exp2(np.asarray(labels, dtype=np.float64)[order]) - 1.0) / np.exp2(max_label)  # (n,) R_r
    reach = np.concatenate(([1.0], np.cumprod(1.0 - stop)[:-1]))  # (n,) prod_{m < r} (1 - R_m)
    r = np.arange(1, len(stop) + 1)
    top = r <= (len(r) if k is None else k)
    return float(np.sum(np.where(top, stop * reach / r, 0.0)))


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

    Parameters
    ----------
    column : float32 array (n,), NaN = missing
    max_bins : int in [2, 255]

    Returns
    -------
    float64 array (at most max_bins - 1,)
    """
    present = np.sort(column[~np.isnan(column)].astype(np.float64))  # (n,) the s_i
    distinct = np.unique(present)  # (m + 1,) the u_i
    if len(distinct) <= max_bins:
        return np.unique(0.5 * distinct[:-1] + 0.5 * distinct[1:])
    p = (len(present) - 1) * np.arange(1, max_bins, dtype=np.int64)  # (max_bins - 1,)
    lo, hi = p // max_bins, -(-p // max_bins)  # floor and ceiling of p / max_bins
    return np.unique(0.5 * present[lo] + 0.5 * present[hi])


def node_histogram(binned, gradients, hessians, rows):
    r"""The histogram of one tree node: per feature and bin, the sums of $g$, $h$ and 1.

    For feature $f$ and bin $b$ (value bins 0..254, the missing bin 255):

    $$\mathrm{hist}[f, b] = \Big(\sum_{i \in \mathrm{rows},\ \mathrm{bin}_{if} = b} g_i,\ \
    \sum_{i \in \mathrm{rows},\ \mathrm{bin}_{if} = b} h_i,\ \
    \#\{i \in \mathrm{rows} : \mathrm{bin}_{if} = b\}\Big)$$

    (Ke et al. 2017, LightGBM, Alg. 1; Chen & Guestrin 2016, Sec. 3.3). ``rows`` may
    list a row more than once (a bootstrap sample): it counts as often as it is listed.
    Use ``np.bincount(..., weights=..., minlength=256)``.

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
    node_bins = binned[rows]  # (n_node_rows, n_features)
    hist = np.zeros((binned.shape[1], 256, 3))  # (n_features, 256, 3)
    for f in range(binned.shape[1]):
        hist[f, :, 0] = np.bincount(node_bins[:, f], weights=gradients[rows], minlength=256)
        hist[f, :, 1] = np.bincount(node_bins[:, f], weights=hessians[rows], minlength=256)
        hist[f, :, 2] = np.bincount(node_bins[:, f], minlength=256)
    return hist


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
    eps = 1e-10
    node = hist.sum(axis=0)  # (3,) G, H, n of the node
    missing = hist[255]  # (3,)

    def score(g, h):
        return g * g / (h + lambda_l2) if h + lambda_l2 > 0 else 0.0

    candidates = []  # (gain, b, missing_left, left stats)
    below = np.cumsum(hist[:n_bins], axis=0)  # (n_bins, 3) stats of bins <= b
    for b in range(n_bins):
        if b < n_bins - 1:
            sides = (False, True) if missing[2] > 0 else (False,)
        else:
            sides = (False,) if missing[2] > 0 else ()
        for missing_left in sides:
            left = below[b] + missing if missing_left else below[b]  # (3,)
            right = node - left
            if left[2] >= min_rows and right[2] >= min_rows:
                gain = score(left[0], left[1]) + score(right[0], right[1]) - score(node[0], node[1])
                candidates.append((gain, b, missing_left, left))
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    scale = abs(best) + score(node[0], node[1])
    if not best > eps * scale:
        return None
    gain, b, missing_left, left = next(c for c in candidates if c[0] >= best - eps * scale)
    if missing[2] == 0:
        missing_left = bool(left[2] >= node[2] - left[2])
    return float(gain), int(b), bool(missing_left)


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

    Parameters
    ----------
    gradients, hessians : float64 arrays (n,), hessians >= 0
    lambda_l2 : float >= 0

    Returns
    -------
    float
    """
    g, h = float(np.sum(gradients)), float(np.sum(hessians))
    return -g / (h + lambda_l2) if h + lambda_l2 > 0 else 0.0


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

    Parameters
    ----------
    seed : int
    n : int >= 1
    fraction : float in (0, 1]

    Returns
    -------
    int64 array (m,), ascending
    """
    if fraction >= 1.0:
        return np.arange(n, dtype=np.int64)
    m = max(1, min(n, int(round(fraction * n))))
    rng = np.random.default_rng(seed)
    return np.sort(rng.permutation(n)[:m]).astype(np.int64)


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
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)  # (n,) t_i
    t = np.arange(n)
    by_position = np.where(t < (n if k is None else k), 1.0 / np.log2(2.0 + t), 0.0)  # (n,) D(t)
    gains = np.exp2(labels) - 1.0  # (n,)
    ideal = np.sum(np.sort(gains)[::-1] * by_position)
    if ideal == 0.0:
        return np.zeros((n, n))
    d = by_position[position]  # (n,) D(t_i)
    return np.abs(np.subtract.outer(gains, gains)) * np.abs(np.subtract.outer(d, d)) / ideal


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

    Parameters
    ----------
    labels, scores : float64 arrays (n,)
    sigma : float > 0

    Returns
    -------
    (lambdas, hessians): two float64 arrays (n,)
    """
    labels = np.asarray(labels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    n = len(labels)
    order = np.argsort(-scores, kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    gains = np.exp2(labels) - 1.0
    discount = 1.0 / np.log2(2.0 + np.arange(n))  # (n,) by position
    ideal = np.sum(np.sort(gains)[::-1] * discount)
    if n < 2 or ideal == 0.0:
        return np.zeros(n), np.zeros(n)
    d = discount[position]
    delta = np.abs(np.subtract.outer(gains, gains)) * np.abs(np.subtract.outer(d, d)) / ideal  # (n, n)
    better = np.subtract.outer(labels, labels) > 0  # (n, n) l_i > l_j
    rho = 1.0 / (1.0 + np.exp(sigma * np.subtract.outer(scores, scores)))  # (n, n) rho_ij
    pair = np.where(better, sigma * delta * rho, 0.0)  # (n, n) lambda_ij for l_i > l_j
    curvature = np.where(better, sigma * sigma * delta * rho * (1.0 - rho), 0.0)
    lambdas = pair.sum(axis=1) - pair.sum(axis=0)
    hessians = curvature.sum(axis=1) + curvature.sum(axis=0)
    return lambdas, hessians


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

    Parameters
    ----------
    feature, left, right, missing : int32 arrays (n_nodes,)
    threshold, value : float64 arrays (n_nodes,)
    X : float32 array (n_rows, n_features), NaN = missing

    Returns
    -------
    float64 array (n_rows,): the value of the leaf each row reaches.
    """
    node = np.zeros(len(X), dtype=np.int64)  # (n_rows,) every row starts at the root
    active = np.flatnonzero(left[node] != -1)
    while len(active):
        k = node[active]
        x = X[active, feature[k]].astype(np.float64)
        node[active] = np.where(np.isnan(x), missing[k], np.where(x <= threshold[k], left[k], right[k]))
        active = active[left[node[active]] != -1]
    return value[node].astype(np.float64)


def bootstrap_rows(seed, n):
    r"""A bootstrap sample of ``n`` rows, as a random forest's tree sees it (Breiman 2001, Sec. 2).

    Draw ``n`` indices from ``0 .. n-1`` uniformly *with* replacement (about
    $1 - 1/e \approx 63\%$ distinct), as ``rng.integers(0, n, size=n)`` with
    ``rng = numpy.random.default_rng(seed)``, and sort them (``sampling.bootstrap``; a row
    drawn twice counts twice in the tree's histograms).

    Parameters
    ----------
    seed : int
    n : int >= 1

    Returns
    -------
    int64 array (n,), ascending
    """
    rng = np.random.default_rng(seed)
    return np.sort(rng.integers(0, n, size=n)).astype(np.int64)


# ---------------------------------------------------------------- lesson 6: evaluation

def paired_t_statistic(a, b):
    r"""The paired t-test's statistic of two systems' per-query metric values (``stats.py``).

    With $d_i = a_i - b_i$ over the $n$ queries both systems ranked,
    $\bar d$ their mean and $s_d$ their *sample* standard deviation
    ($n - 1$ in the denominator):

    $$t = \frac{\bar d}{s_d / \sqrt{n}}, \qquad \nu = n - 1$$

    degrees of freedom (Student 1908; for IR, Smucker, Allan & Carterette 2007, Sec. 2.2).
    Differences without variance ($s_d = 0$) leave $t$ undefined: NaN.

    Parameters
    ----------
    a, b : float64 arrays (n,), n >= 2, e.g. NDCG@10 of each query under systems A and B

    Returns
    -------
    (t, df): a float (NaN when $s_d = 0$) and an int
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)  # (n,)
    n = len(d)
    se = d.std(ddof=1) / np.sqrt(n)
    return (float(d.mean() / se) if se > 0 else float("nan")), n - 1


# ---------------------------------------------------------------- lesson 7: bagging

# The reference's own function is this exercise's solution (and its docstring the statement).
minmax_per_query = bag_rules.minmax_per_query

r"""Losses as objects (scikit-learn's and pygbm's losses), and the two pointwise losses.

``Loss`` is what the boosting loop asks of a training objective; ``squared_error`` and
``logistic`` (functions and objects) are the pointwise ones. LambdaRank, the listwise
one, is :mod:`~twinrank.reference.losses.objectives`'s own; every name here is public there.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.io.data import checked_weights
from twinrank.reference.losses._objective_checks import _check_logistic, _check_pointwise


def squared_error(y, scores):
    r"""Gradient and hessian of the squared error $L = \tfrac12 \sum_i (s_i - y_i)^2$.

    Returns ``(g, h)`` with $g_i = s_i - y_i$ and $h_i = 1$, float64, shape (n_rows,).
    """
    y, scores = _check_pointwise(y, scores)
    return scores - y, np.ones_like(scores)


def logistic(y, scores):
    r"""Gradient and hessian of the logistic loss (binary cross-entropy on a logit).

    $p_i = 1 / (1 + e^{-s_i})$, $L = -\sum_i y_i \log p_i + (1 - y_i) \log(1 - p_i)$:

    $$g_i = p_i - y_i = (1 - y_i)\, p_i - y_i (1 - p_i), \qquad h_i = p_i (1 - p_i).$$

    Labels are 0 or 1 (soft labels in $[0, 1]$ are accepted). $p$ and $1 - p$ are
    both computed from $e^{-|s|}$, so neither overflows nor cancels: $g$ and $h$
    keep full relative precision even when $|s_i|$ is large.
    """
    y, scores = _check_logistic(y, scores)
    p, one_minus_p = _sigmoid_pair(scores)
    return (1.0 - y) * p - y * one_minus_p, p * one_minus_p
class Loss:
    r"""A training objective as an object (scikit-learn's and pygbm's losses).

    Made once per fit, with the training labels, and validated then; each round
    :meth:`gradients` writes $g$ and $h$ of the current scores into the loop's arrays.
    ``constant_hessian`` says $h$ never changes ($h_i = 1$: the histogram needs no
    hessian sums); :meth:`baseline` is the constant $F_0$ a model starts from.

    **Weights.** With row weights $w$ (``weight``, (n_rows,) float64, or None for all 1) the
    loss is $\sum_i w_i L_i$: every row's gradient and hessian are multiplied by its weight
    (:meth:`weighted`), so a leaf's Newton value is the weighted $-\sum_i w_i g_i / \sum_i w_i
    h_i$ and a row of weight 2 counts as the row twice. This is LightGBM's rule for every
    objective, its LambdaRank too (each document's lambda and hessian times its weight, after
    the query's lambdas are summed and normalised); XGBoost's one weight per query is this rule
    with the query's weight on each of its rows.
    """

    constant_hessian = False
    weight = None  # (n_rows,) float64 each row's weight, or None: every row 1

    def baseline(self) -> float:
        r"""$F_0 = \arg\min_c L(c)$, the score of a model without trees."""
        return 0.0

    def gradients(self, scores, queries, g, h) -> None:
        """Write $g_i$, $h_i$ at ``scores`` into ``g``, ``h`` (float64, shape (n_rows,)).

        ``queries``: the round's query sample (rows of other queries get $g = h = 0$
        when the loss is listwise) or None for all.
        """
        raise NotImplementedError

    def weighted(self, g, h) -> None:
        r"""$g_i \leftarrow w_i g_i$ and $h_i \leftarrow w_i h_i$, in place (nothing without weights)."""
        if self.weight is not None:
            g *= self.weight
            h *= self.weight

    def _set_weight(self, weight, n_rows: int) -> None:
        """Keep ``weight`` checked (:func:`~twinrank.reference.io.data.checked_weights`), or None."""
        self.weight = None if weight is None else checked_weights(weight, n_rows)


class SquaredError(Loss):
    r"""$L = \tfrac12 \sum_i w_i (s_i - y_i)^2$ (:func:`squared_error`); $F_0 = \sum_i w_i y_i / \sum_i w_i$,
    the (weighted) mean label."""

    def __init__(self, y, weight=None):
        self.y = _check_pointwise(y, y)[0]
        self._set_weight(weight, len(self.y))
        self.constant_hessian = self.weight is None  # h_i = w_i otherwise

    def baseline(self) -> float:
        if self.weight is None:
            return float(np.mean(self.y))
        return float(np.sum(self.weight * self.y) / np.sum(self.weight))

    def gradients(self, scores, queries, g, h) -> None:
        np.subtract(scores, self.y, out=g)  # (n_rows,) s_i - y_i
        h.fill(1.0)
        self.weighted(g, h)


class Logistic(Loss):
    r"""Binary cross-entropy on a logit (:func:`logistic`), rows weighted by ``weight``; $F_0 = \log(n_1 / n_0)$,
    the prior's log-odds, with $n_1 = \sum_i w_i y_i$ and $n_0 = \sum_i w_i (1 - y_i)$ (row counts unweighted)."""

    def __init__(self, y, weight=None):
        self.y = _check_logistic(y, y)[0]
        self._set_weight(weight, len(self.y))

    def baseline(self) -> float:
        if self.weight is None:
            n_above = self.y.sum()
            return float(np.log(n_above) - np.log(len(self.y) - n_above))
        return float(np.log(np.sum(self.weight * self.y)) - np.log(np.sum(self.weight * (1.0 - self.y))))

    def gradients(self, scores, queries, g, h) -> None:
        g[:], h[:] = logistic(self.y, scores)
        self.weighted(g, h)


def _sigmoid_pair(x):
    r"""$(1 / (1 + e^{-x}),\ 1 / (1 + e^{x}))$ from $e^{-|x|}$: no overflow, no cancellation."""
    e = np.exp(-np.abs(x))
    one_plus_e, positive = 1.0 + e, x >= 0
    big, small = 1.0 / one_plus_e, e / one_plus_e
    return np.where(positive, big, small), np.where(positive, small, big)

r"""Quantized gradients (Shi et al., NeurIPS 2022; LightGBM 4's ``use_quantized_grad``), shared by both twins.

With ``BoostParams.quantized_gradients`` each round's gradients and hessians are
rounded, stochastically, to a few bits before the tree is grown:

$$
s_g = \frac{\max_i |g_i|}{2^{b-1} - 1}, \qquad
\tilde g_i = \left\lfloor \frac{g_i}{s_g} + u_i \right\rfloor \in \{-(2^{b-1}-1), \dots, 2^{b-1}-1\},
\qquad u_i \sim U[0, 1),
$$

and likewise $s_h = \max_i h_i / (2^b - 1)$, $\tilde h_i \in \{0, \dots, 2^b - 1\}$
(``b = gradient_bits``). When every hessian of the round equals one value
$h_0$ (squared error), $\tilde h_i = 1$ and $s_h = h_0$, exactly, and nothing is
drawn for them. Stochastic rounding is unbiased (Shi et al. 2022, Sec. 3.2): with
$x = g / s_g$ and $u$ uniform, $\lfloor x + u \rfloor$ is $\lceil x \rceil$ with
probability $x - \lfloor x \rfloor$ and $\lfloor x \rfloor$ otherwise, so

$$
\mathbb{E}\big[\lfloor x + u \rfloor\big] = \lfloor x \rfloor + (x - \lfloor x \rfloor) = x,
\qquad \mathbb{E}[\tilde g_i]\, s_g = g_i ,
$$

and the histogram sums $s_g \sum \tilde g_i$ are unbiased estimates of $\sum g_i$,
whose rounding errors average out over a node's rows.

**Draws.** One 64-bit key per round from the run's one generator, after the round's
other draws (:mod:`~twinrank.reference.ensembles.boosting`; :func:`round_key`), and the
uniforms from it by a counter-based generator (:func:`uniforms`): the $i$-th row of the
round, ``rows[i]``, rounds its gradient with $u = U(\mathit{key}, 2i)$ and its hessian
with $U(\mathit{key}, 2i + 1)$, where $U$ is SplitMix64's output function (Steele,
Lea and Flood, OOPSLA 2014) on ``key + counter * 0x9E3779B97F4A7C15`` (wrapping in
64 bits), its top 53 bits scaled to $[0, 1)$. A counter-based stream is what lets the
fast twin draw inside its parallel rounding pass, row by row, with the numbers of this
module on any thread count; drawing the uniforms from the generator itself
(``rng.random(m)``, twice, as twinrank did before) took half of the fast twin's
quantization time. Turned off, nothing is
drawn (the exact path's stream is unchanged).

**Growing on integers.** The tree is grown on $\tilde g, \tilde h$: every histogram
sum is a sum of small integers, exact in any order (both twins sum them in
float64, where integers below $2^{53}$ are exact, and the fast twin in packed
int64), so the twins grow the same tree bit for bit. A split's gain is the
gain of the scaled sums, $\sum_{c} (s_g G_c)^2 / (s_h H_c + \lambda_2) - \dots$,
which is the integer gain $\sum_c G_c^2 / (H_c + \lambda_2 / s_h) - \dots$ times
$s_g^2 / s_h$: so the grower runs on the integers with $\lambda_2 / s_h$,
``min_hessian_in_leaf`` $/ s_h$ and ``min_gain_to_split`` and the cost penalties
times $s_h / s_g^2$ (:func:`integer_job`, the one place this is computed), and the
tree's gains are multiplied back by $s_g^2 / s_h$.

**Leaf values** are refit in full precision (LightGBM's ``quant_train_renew_leaf``;
:func:`refit`): a leaf's $G$, $H$ are the float64 sums of the true $g_i$, $h_i$
of its rows, added in the order of ``rows`` (``np.bincount``) within blocks of
``REFIT_BLOCK`` rows and the blocks' sums in block order (the fast twin sums its
blocks in parallel, then adds them in the same order), an internal node's
the sums of its children's (left, right, then a missing child), and
$v = -G / (H + \lambda_2)$. Computed here once for both twins, so the values agree
bit for bit too.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from twinrank.reference._param_checks import check_int
from twinrank.reference.constants import LEAF
from twinrank.reference.errors import ParameterError

MIN_BITS, MAX_BITS = 2, 8  # gradient_bits: g in int8, h in uint8
REFIT_BLOCK = 1 << 16  # rows per block of the refit's leaf sums (**Leaf values**)


@dataclass(frozen=True)
class QuantizedGradients:
    r"""One round's integer gradients: $g_i \approx s_g \tilde g_i$, $h_i \approx s_h \tilde h_i$.

    Attributes
    ----------
    gradients : int8 array (n_rows,), $\tilde g$ (0 for rows outside the round)
    hessians : uint8 array (n_rows,), $\tilde h$
    gradient_scale, hessian_scale : $s_g > 0$, $s_h > 0$
    bits : ``gradient_bits``
    """

    gradients: np.ndarray
    hessians: np.ndarray
    gradient_scale: float
    hessian_scale: float
    bits: int


def check_bits(bits) -> int:
    """``gradient_bits`` must be an int in ``[MIN_BITS, MAX_BITS]``."""
    check_int("gradient_bits", bits, low=MIN_BITS, high=MAX_BITS)
    return int(bits)


def quantize_gradients(rng: np.random.Generator, gradients, hessians, bits: int, rows=None
                       ) -> QuantizedGradients:
    r"""Stochastic rounding of ``gradients[rows]`` and ``hessians[rows]`` to ``bits`` bits (module docstring).

    Draws one key (:func:`round_key`), the uniforms then come from it (:func:`uniforms`).
    ``rows=None``: every row. Hessians must be non-negative (every twinrank loss's are).
    """
    bits = check_bits(bits)
    gradients = np.asarray(gradients, dtype=np.float64)
    hessians = np.asarray(hessians, dtype=np.float64)
    rows = np.arange(len(gradients)) if rows is None else np.asarray(rows)
    g, h = gradients[rows], hessians[rows]  # (m,) the round's rows
    if len(g) and h.min() < 0:
        raise ParameterError("quantized gradients need non-negative hessians")
    key = round_key(rng)
    counters = 2 * np.arange(len(g), dtype=np.uint64)  # row i of the round: 2i for g, 2i + 1 for h
    g_levels, h_levels = 2 ** (bits - 1) - 1, 2 ** bits - 1
    g_scale = _scale(np.abs(g).max(initial=0.0), g_levels)
    g_int = _stochastic_round(g / g_scale, uniforms(key, counters), -g_levels, g_levels)
    if len(h) == 0 or np.all(h == h[0]):  # constant hessians: exact
        h_scale = float(h[0]) if len(h) and h[0] > 0 else 1.0
        h_int = np.full(len(h), 1 if len(h) and h[0] > 0 else 0)
    else:
        h_scale = _scale(h.max(), h_levels)
        h_int = _stochastic_round(h / h_scale, uniforms(key, counters + np.uint64(1)), 0, h_levels)
    out_g = np.zeros(len(gradients), dtype=np.int8)
    out_h = np.zeros(len(gradients), dtype=np.uint8)
    out_g[rows], out_h[rows] = g_int, h_int
    return QuantizedGradients(out_g, out_h, g_scale, h_scale, bits)


def round_key(rng: np.random.Generator) -> np.uint64:
    """The round's key of :func:`uniforms`: one draw of 64 bits from the run's generator."""
    return rng.integers(2**64, dtype=np.uint64)


GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment: 2^64 / the golden ratio, odd
MIX_1, MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)  # its output multipliers
UNIT = 2.0 ** -53  # a 53-bit integer times UNIT: a double in [0, 1), every value exact


def uniforms(key: np.uint64, counters: np.ndarray) -> np.ndarray:
    r"""$U(\mathit{key}, c)$ for each counter $c$ (uint64): SplitMix64's output function on
    $z = \mathit{key} + c \cdot \gamma \bmod 2^{64}$, then its top 53 bits times $2^{-53}$.

    $z \leftarrow (z \oplus z \gg 30) \cdot m_1$, $z \leftarrow (z \oplus z \gg 27) \cdot m_2$,
    $z \leftarrow z \oplus z \gg 31$ (all modulo $2^{64}$): a bijection of 64-bit words that
    passes BigCrush on consecutive counters (Steele et al. 2014).
    """
    z = key + counters * GOLDEN_GAMMA  # uint64 arrays wrap modulo 2^64
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)) * UNIT


def _scale(largest: float, levels: int) -> float:
    """The step ``largest / levels`` (1 when every value is 0: all round to 0)."""
    return float(largest) / levels if largest > 0 else 1.0


def _stochastic_round(x: np.ndarray, u: np.ndarray, low: int, high: int) -> np.ndarray:
    r"""$\lfloor x + u \rfloor$, $u$ uniform in $[0, 1)$, clipped to ``[low, high]``
    (``x`` is within them up to the rounding of the division)."""
    return np.clip(np.floor(x + u), low, high)


def checked_quantized(quantized, n_rows: int) -> QuantizedGradients:
    """``grow_tree``'s ``quantized`` argument, checked (shared by both twins)."""
    if not isinstance(quantized, QuantizedGradients):
        raise ParameterError(f"quantized must be a QuantizedGradients, got {type(quantized).__name__}")
    for name in ("gradients", "hessians"):
        values = getattr(quantized, name)
        if not isinstance(values, np.ndarray) or values.shape != (n_rows,) or values.dtype.kind not in "iu":
            raise ParameterError(f"quantized.{name} must be an integer array of shape ({n_rows},)")
    if not (isinstance(quantized.bits, int) and MIN_BITS <= quantized.bits <= MAX_BITS):
        raise ParameterError(f"quantized.bits must be an int in [{MIN_BITS}, {MAX_BITS}], got {quantized.bits!r}")
    g_levels, h_levels = 2 ** (quantized.bits - 1) - 1, 2 ** quantized.bits - 1
    g_int, h_int = quantized.gradients, quantized.hessians
    if n_rows and (g_int.min() < -g_levels or g_int.max() > g_levels or h_int.min() < 0 or h_int.max() > h_levels):
        raise ParameterError(f"quantized gradients must be integers in [-{g_levels}, {g_levels}] and hessians "
                             f"in [0, {h_levels}] ({quantized.bits} bits)")
    for name in ("gradient_scale", "hessian_scale"):
        value = getattr(quantized, name)
        if not (np.isfinite(value) and value > 0):
            raise ParameterError(f"quantized.{name} must be a finite number > 0, got {value!r}")
    return quantized


def integer_job(job: SimpleNamespace, quantized: QuantizedGradients, dtype=np.float64) -> SimpleNamespace:
    r"""The grower's job on the integers: $\tilde g, \tilde h$ (as ``dtype``, exact), $\lambda_2 / s_h$,
    ``min_hessian_in_leaf / s_h``, ``min_gain_to_split`` and the penalties times $s_h / s_g^2$.

    ``job`` is ``_tree_checks._checked_inputs``'s; the result has the same fields plus
    ``gain_factor`` $= s_g^2 / s_h$. ``dtype`` None keeps the integers as they are (int8,
    uint8): the fast grower sums them packed and needs no float64 copy of a million rows.
    """
    s_g, s_h = quantized.gradient_scale, quantized.hessian_scale
    to_integer_gain = s_h / (s_g * s_g)
    params = job.params
    integer_params = dataclasses.replace(
        params, lambda_l2=params.lambda_l2 / s_h, min_hessian_in_leaf=params.min_hessian_in_leaf / s_h,
        min_gain_to_split=params.min_gain_to_split * to_integer_gain,
        cost_lambda=params.cost_lambda * to_integer_gain)
    return SimpleNamespace(**{
        **vars(job), "params": integer_params,
        "gradients": quantized.gradients if dtype is None else quantized.gradients.astype(dtype),
        "hessians": quantized.hessians if dtype is None else quantized.hessians.astype(dtype),
        "penalty": job.penalty * to_integer_gain,
        "gain_factor": (s_g * s_g) / s_h,
    })


def refit(tree, leaf_of_row: np.ndarray, rows: np.ndarray, gradients: np.ndarray, hessians: np.ndarray,
          l2: float, gain_factor: float):
    r"""``tree`` (grown on integers) with its gains times ``gain_factor`` and its values and
    hessian sums from the true gradients (module docstring, **Leaf values**).

    ``leaf_of_row`` : int array (n_rows,), the leaf of each row of ``rows`` (others: any value).
    """
    leaf = leaf_of_row[rows]  # (m,) in the order of rows
    g_sum, h_sum = np.zeros(tree.n_nodes), np.zeros(tree.n_nodes)
    for start in range(0, len(rows), REFIT_BLOCK):  # block sums (sequential in row order), added in block order
        block = slice(start, start + REFIT_BLOCK)
        g_sum += np.bincount(leaf[block], weights=gradients[rows[block]], minlength=tree.n_nodes)
        h_sum += np.bincount(leaf[block], weights=hessians[rows[block]], minlength=tree.n_nodes)
    return refit_from_leaf_sums(tree, g_sum, h_sum, l2, gain_factor)


def refit_from_leaf_sums(tree, g_sum: np.ndarray, h_sum: np.ndarray, l2: float, gain_factor: float):
    """:func:`refit` from each leaf's sums (n_nodes,) of true gradients and hessians (other nodes: any
    value): an internal node's sums are its children's, then the values and gains."""
    g_sum, h_sum = g_sum.copy(), h_sum.copy()
    n_nodes = tree.n_nodes
    for k in range(n_nodes - 1, -1, -1):  # children have larger ids than their parent
        if tree.left[k] != LEAF:
            children = [tree.left[k], tree.right[k]]
            if tree.missing[k] not in children:
                children.append(tree.missing[k])
            g_sum[k] = h_sum[k] = 0.0
            for child in children:
                g_sum[k] += g_sum[child]
                h_sum[k] += h_sum[child]
    denominator = h_sum + l2
    value = np.divide(-g_sum, denominator, out=np.zeros(n_nodes), where=denominator > 0)
    return dataclasses.replace(tree, value=value, gain=tree.gain * gain_factor, hessian_sum=h_sum)

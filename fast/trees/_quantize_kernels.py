r"""Numba twins of `twinrank.reference.trees._quantize`'s per-round work: the rounding and the leaf refit.

The reference makes a dozen NumPy passes over the round's rows (gather, abs, max,
hash, divide, add, floor, clip, scatter, for g and again for h); at a million rows
they cost about as much as a tree's lambdas, on one thread. Here::

    statistics  over_chunks of row blocks   max |g|, min h, max h, h == h[rows[0]]   O(m)
    rounding    over_chunks of row blocks   u = U(key, 2i), g~ = clip(floor(g / s_g + u)), h~ likewise  O(m)

Each value is $\lfloor x / s + u \rfloor$ clipped, the reference's formula evaluated in
the same floating-point operations, and each uniform is the reference's counter-based
one (``_quantize.uniforms``, the same 64-bit integer operations) from the same key,
drawn from the same generator: the two twins' integers are identical, bit for bit,
on any thread count. The refit's leaf sums are compiled passes over blocks of
``REFIT_BLOCK`` rows in parallel, each in the order of ``rows`` (the order ``np.bincount``
adds in), the blocks' sums then added in block order as the reference does: the same
sums, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from twinrank.fast.runtime._kernel_cache import njit
from twinrank.fast.runtime._threads import over_chunks
from twinrank.reference.errors import ParameterError
from twinrank.reference.trees._quantize import (
    GOLDEN_GAMMA,
    MIX_1,
    MIX_2,
    REFIT_BLOCK,
    UNIT,
    QuantizedGradients,
    _scale,
    check_bits,
    refit_from_leaf_sums,
    round_key,
)

BLOCK_ROWS = 1 << 16  # rows per block of either pass


def quantize_gradients(rng: np.random.Generator, gradients, hessians, bits: int, rows=None
                       ) -> QuantizedGradients:
    """Numba twin of `twinrank.reference.trees._quantize.quantize_gradients` (same draws, same integers)."""
    bits = check_bits(bits)
    gradients = np.ascontiguousarray(gradients, dtype=np.float64)
    hessians = np.ascontiguousarray(hessians, dtype=np.float64)
    every = rows is None  # every row, in order: the kernels index rows by position, no array of ids
    rows = np.empty(0, dtype=np.int64) if every else np.ascontiguousarray(rows, dtype=np.int64)
    m = len(gradients) if every else len(rows)
    n_blocks = (m + BLOCK_ROWS - 1) // BLOCK_ROWS
    stats = np.empty((n_blocks, 5))  # (block, [max |g|, min h, max h, rows with h != h0, unsorted])
    if m:
        over_chunks(_statistics, n_blocks, gradients, hessians, rows, stats)
    largest_g, largest_h = stats[:, 0].max(initial=0.0), stats[:, 2].max(initial=0.0)
    smallest_h = stats[:, 1].min(initial=np.inf)
    if m and smallest_h < 0:
        raise ParameterError("quantized gradients need non-negative hessians")
    g_levels, h_levels = 2 ** (bits - 1) - 1, 2 ** bits - 1
    g_scale = _scale(largest_g, g_levels)
    key = round_key(rng)
    constant = m == 0 or stats[:, 3].sum() == 0  # every hessian equals the first: exact
    if constant:
        h0 = hessians[0 if every else rows[0]] if m else 0.0
        h_scale = float(h0) if h0 > 0 else 1.0
        h_fill = 1 if h0 > 0 else 0  # every h~ is h_fill
    else:
        h_scale, h_fill = _scale(largest_h, h_levels), -1  # -1: h~ rounded as g~
    out_g = np.zeros(len(gradients), dtype=np.int8)
    out_h = np.zeros(len(gradients), dtype=np.uint8)
    # a row listed twice keeps its last value, as NumPy's assignment: in parallel only when rows increase
    over_chunks(_round, n_blocks, gradients, hessians, rows, key, g_scale, h_scale, h_fill,
                g_levels, h_levels, out_g, out_h, parallel=stats[:, 4].sum() == 0)
    return QuantizedGradients(out_g, out_h, g_scale, h_scale, bits)


@njit(cache=True, inline='always')
def _row(rows, i):
    """The ``i``-th row of the round: ``rows[i]``, or ``i`` when ``rows`` is empty (every row)."""
    return rows[i] if len(rows) else i


@njit(cache=True, nogil=True)
def _statistics(first, last, gradients, hessians, rows, stats):
    """Per block of rows: max |g|, min h, max h, how many h differ from ``hessians[rows[0]]``, and
    how many rows do not follow a smaller one. ``rows`` empty: every row, in order."""
    m = len(rows) if len(rows) else len(gradients)
    h0 = hessians[_row(rows, 0)]
    for block in range(first, last):
        largest_g, smallest_h, largest_h, differ, unsorted = 0.0, np.inf, -np.inf, 0, 0
        for i in range(block * BLOCK_ROWS, min(m, (block + 1) * BLOCK_ROWS)):
            g, h = gradients[_row(rows, i)], hessians[_row(rows, i)]
            largest_g = max(largest_g, abs(g))
            smallest_h, largest_h = min(smallest_h, h), max(largest_h, h)
            differ += h != h0
            unsorted += i > 0 and _row(rows, i) <= _row(rows, i - 1)
        stats[block, 0], stats[block, 1], stats[block, 2] = largest_g, smallest_h, largest_h
        stats[block, 3], stats[block, 4] = differ, unsorted


@njit(cache=True, inline='always')
def uniform(key, counter):
    """``_quantize.uniforms`` of one counter (uint64): SplitMix64's output, top 53 bits in [0, 1)."""
    z = key + counter * GOLDEN_GAMMA
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    z ^= z >> np.uint64(31)
    return np.float64(z >> np.uint64(11)) * UNIT


@njit(cache=True, nogil=True)
def _round(first, last, gradients, hessians, rows, key, g_scale, h_scale, h_fill, g_levels,
           h_levels, out_g, out_h):
    r"""Per block: $\tilde g = \mathrm{clip}(\lfloor g / s_g + U(key, 2i) \rfloor)$ and $\tilde h$ with
    $U(key, 2i + 1)$, or $\tilde h$ = ``h_fill`` when that is 0 or 1 (constant hessians). ``rows``
    empty: every row."""
    m = len(rows) if len(rows) else len(gradients)
    for block in range(first, last):
        for i in range(block * BLOCK_ROWS, min(m, (block + 1) * BLOCK_ROWS)):
            row = _row(rows, i)
            counter = np.uint64(2) * np.uint64(i)
            u_g = uniform(key, counter)
            out_g[row] = min(max(math.floor(gradients[row] / g_scale + u_g), -g_levels), g_levels)
            if h_fill < 0:
                u_h = uniform(key, counter + np.uint64(1))
                out_h[row] = min(max(math.floor(hessians[row] / h_scale + u_h), 0), h_levels)
            else:
                out_h[row] = h_fill


def refit(tree, leaf_of_row: np.ndarray, rows: np.ndarray, gradients: np.ndarray, hessians: np.ndarray,
          l2: float, gain_factor: float):
    """Numba twin of `twinrank.reference.trees._quantize.refit` (the same leaf sums, bit for bit): each block's
    sums in parallel, then added in block order as the reference adds them. ``rows`` None: every row,
    read by position (no array of ids to stream through)."""
    m = len(gradients) if rows is None else len(rows)
    rows = np.empty(0, dtype=np.int64) if rows is None else np.ascontiguousarray(rows)
    n_blocks = (m + REFIT_BLOCK - 1) // REFIT_BLOCK
    block_sums = np.zeros((n_blocks, 2, tree.n_nodes))
    over_chunks(_leaf_sums, n_blocks, leaf_of_row, rows, gradients, hessians, block_sums)
    g_sum, h_sum = np.zeros(tree.n_nodes), np.zeros(tree.n_nodes)
    for sums in block_sums:
        g_sum += sums[0]
        h_sum += sums[1]
    return refit_from_leaf_sums(tree, g_sum, h_sum, l2, gain_factor)


@njit(cache=True, nogil=True)
def _leaf_sums(first, last, leaf_of_row, rows, gradients, hessians, block_sums):
    """Per block of ``REFIT_BLOCK`` rows: each leaf's sums of ``gradients`` and ``hessians`` over the
    block's ``rows``, added in their order. ``rows`` empty: every row."""
    m = len(rows) if len(rows) else len(gradients)
    for block in range(first, last):
        for i in range(block * REFIT_BLOCK, min(m, (block + 1) * REFIT_BLOCK)):
            row = _row(rows, i)
            block_sums[block, 0, leaf_of_row[row]] += gradients[row]
            block_sums[block, 1, leaf_of_row[row]] += hessians[row]

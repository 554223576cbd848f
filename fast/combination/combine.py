"""Numba-parallel twin of `twinrank.reference.combination.combine`: the exact line search in bounded memory.

Same inputs, checks, tie rules, breakpoints, path and choice of the best interval
(the shared parts are ``twinrank.reference.combination._combine_setup``). What differs: each
query sweeps its own crossings on its own thread, and the alpha range is cut into
windows of at most :data:`CROSSINGS_PER_CHUNK` crossings (``_combine_kernels``), so
an MSLR-sized fold (tens of millions of crossings) needs memory for one window, plus
the path when ``return_path=True``. Each pair of documents is visited once per
window and twice more (histogram, counts), so the work grows with the number of
windows; the crossings themselves are the same.
"""
from __future__ import annotations

import numpy as np

from twinrank.fast.combination import _combine_kernels as kernels
from twinrank.reference.combination._combine_setup import (
    FORMS,
    Best,
    Combination,
    CombinationPath,
    Lines,
    cluster_breakpoints,
    combined_scores,
    prepare_lines,
    scan_best,
)
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION

__all__ = ["optimal_combination", "combined_scores", "Combination", "CombinationPath", "FORMS",
           "CROSSINGS_PER_CHUNK"]

CROSSINGS_PER_CHUNK = 1 << 21  # crossings per window: ~48 bytes each while a window is swept
HISTOGRAM_BINS = 4096


def optimal_combination(scores_a, scores_b, y, query_offsets, *, form="convex", alpha_range=(0.0, 1.0),
                        metric="ndcg@10", convention=DEFAULT_CONVENTION, ties="expected",
                        return_path=False) -> Combination:
    """Numba-parallel twin of `twinrank.reference.combination.combine.optimal_combination`."""
    lines = prepare_lines(scores_a, scores_b, y, query_offsets, form=form, alpha_range=alpha_range,
                          metric=metric, convention=convention, ties=ties)
    first, histogram = kernels.first_crossings(lines.a, lines.b, lines.query_offsets, lines.active, lines.lo,
                                               lines.hi, lines.boosting, HISTOGRAM_BINS)
    order = kernels.initial_order(lines.a, lines.b, lines.query_offsets, lines.lo, first, lines.boosting)
    position_of = np.empty_like(order)
    position_of[order] = np.arange(len(order))
    dcg = kernels.query_dcg(lines.gains, order, lines.query_offsets, lines.discounts)
    sweep = _Sweep(lines, lines.constant + float(np.sum(dcg * lines.scale)), return_path)
    for bin_lo, bin_hi in plan_windows(histogram, CROSSINGS_PER_CHUNK):
        sweep.add(*_window(lines, bin_lo, bin_hi, order, position_of))
    return sweep.result()


def plan_windows(histogram: np.ndarray, chunk: int) -> list[tuple[int, int]]:
    """Consecutive bins grouped into windows of at most ``chunk`` crossings (a fuller bin alone)."""
    windows, start, held = [], 0, 0
    for k, count in enumerate(histogram):
        if held and held + count > chunk:
            windows.append((start, k))
            start, held = k, 0
        held += count
    return windows + [(start, len(histogram))] if held else windows


def _window(lines: Lines, bin_lo: int, bin_hi: int, order, position_of):
    """The kept events (alpha, delta, point_delta) of one window, in (alpha, query) order."""
    args = (lines.a, lines.b, lines.query_offsets, lines.active, lines.lo, lines.hi, lines.boosting,
            HISTOGRAM_BINS, bin_lo, bin_hi)
    counts, after = kernels.count_window(*args)
    slots = np.r_[0, np.cumsum(counts)].astype(np.int64)  # (n_queries + 1,)
    at, delta, point_delta, keep = kernels.window_events(
        (lines.a, lines.b, lines.gains, lines.discounts, lines.boosting, lines.expected), lines.query_offsets,
        lines.active, lines.scale, (lines.lo, lines.hi, HISTOGRAM_BINS, bin_lo, bin_hi), slots, after,
        (order, position_of))
    by = np.argsort(at[keep], kind="stable")  # queries are laid out in order: (alpha, query) order
    return at[keep][by], delta[keep][by], point_delta[keep][by]


class _Sweep:
    """The path window by window: breakpoints, cumulative values, the best interval so far."""

    def __init__(self, lines: Lines, start: float, keep_path: bool):
        self.lines, self.start, self.keep_path = lines, start, keep_path
        self.cumulative, self.left, self.best = 0.0, lines.lo, Best()
        self.parts = []

    def add(self, at, delta, point_delta):
        breakpoints, group = cluster_breakpoints(at)
        if not len(breakpoints):
            return
        step = np.bincount(group, weights=delta, minlength=len(breakpoints))  # (m,)
        cumulative = np.cumsum(np.r_[self.cumulative, step])  # (m + 1,) sequential, as one cumsum would
        values = self.start + cumulative  # values[0]: the interval still open from the last window
        self.best = scan_best(self.best, np.r_[self.left, breakpoints[:-1]], breakpoints, values[:-1])
        if self.keep_path:
            points = values[:-1] + np.bincount(group, weights=point_delta, minlength=len(breakpoints))
            self.parts.append((breakpoints, values[1:], points))
        self.cumulative, self.left = cumulative[-1], breakpoints[-1]

    def result(self) -> Combination:
        value = self.start + self.cumulative
        best = scan_best(self.best, np.array([self.left]), np.array([self.lines.hi]), np.array([value]))
        path = None
        if self.keep_path:
            breakpoints, values, points = (np.concatenate([p[i] for p in self.parts]) if self.parts else
                                           np.empty(0) for i in range(3))
            path = CombinationPath(breakpoints, np.r_[self.start, values], points)
        return Combination(0.5 * (best.left + best.right), best.value, path)

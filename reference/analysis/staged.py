r"""Staged evaluation: a model's metrics at sizes 1, 2, .., T trees, from one pass over the trees.

An additive model's score after $m$ trees is a running sum,

$$F_m(x) = F_{\mathrm{init}}(x) + F_0 + \sum_{t=1}^{m} w_t f_t(x),$$

so the scores of every prefix come from adding one tree's predictions at a time,
never by scoring each prefix from scratch: $T$ tree evaluations, not $T(T+1)/2$.
Learning curves (test NDCG against the number of trees) use it. A DART or X-DART model
rescales and prunes trees after growing them, so its prefixes are not earlier models: its
stages are its snapshots (``Ensemble.snapshots``) and its final size, each scored whole. The sums are added in :func:`~twinrank.reference.trees.predict.predict_ensemble`'s
order, so the scores at size $m$ equal ``predict(X, n_trees=m)`` bit for bit.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.engine import REFERENCE, Engine
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.model import Ensemble
from twinrank.reference.trees.predict import missing_applied

__all__ = ["staged_scores", "staged_metrics", "run_staged", "run_staged_metrics"]


def _sizes(n_trees: int, every: int, sizes) -> np.ndarray:
    """The sizes asked for: ``sizes``, or every ``every``-th size and always the last, sorted."""
    if sizes is None:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ParameterError(f"every must be an integer >= 1, got {every!r}")
        return np.unique(np.r_[np.arange(every, n_trees + 1, every), n_trees]).astype(np.int64) if n_trees else \
            np.zeros(0, dtype=np.int64)
    sizes = np.unique(np.asarray(sizes, dtype=np.int64))
    if len(sizes) and (sizes[0] < 0 or sizes[-1] > n_trees):
        raise ParameterError(f"sizes must lie in 0..{n_trees} (the model's trees), got {sizes.tolist()}")
    return sizes


def run_staged(engine: Engine, model: Ensemble, X, *, every: int = 1, sizes=None):
    """Yield ``(size, scores)`` for each size asked for, in increasing order, on ``engine``'s kernels."""
    if not isinstance(model, Ensemble):
        raise ParameterError(f"staged evaluation needs an additive model (Ensemble), got {type(model).__name__}")
    X = missing_applied(model, np.asarray(X))
    if model.sizes_only:
        yield from _snapshot_stages(engine, model, X, sizes)
        return
    wanted = _sizes(model.n_trees, every, sizes)
    scores = engine.predict_ensemble(model.truncated(0), X)  # (n_rows,) prior model + base score
    if len(wanted) and wanted[0] == 0:
        yield 0, scores.copy()
    for m, (tree, weight) in enumerate(zip(model.trees[:wanted[-1] if len(wanted) else 0],
                                           model.tree_weights), start=1):
        alone = Ensemble(trees=[tree], tree_weights=[weight], n_features=model.n_features)
        scores = scores + engine.predict_ensemble(alone, X)  # 0.0 + w * f(x): the tree's term exactly
        if m in wanted:
            yield m, scores.copy()


def _snapshot_stages(engine: Engine, model: Ensemble, X, sizes):
    """A DART model's stages: its snapshots, if any, and its final size (each scored whole; they are not
    prefixes)."""
    known = sorted({0, *model.snapshot_sizes, model.n_trees})
    wanted = known[1:] if sizes is None else sorted({int(s) for s in sizes})
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise ParameterError(f"this {model.algorithm} model is kept at sizes {known} only "
                             f"(its snapshots and its final size), not {unknown}")
    for size in wanted:
        yield size, engine.predict_ensemble(model.truncated(size), X)


def staged_scores(model: Ensemble, X, *, every: int = 1, sizes=None):
    """Yield ``(size, scores)`` at sizes ``every, 2 every, .., T`` (T always), or at ``sizes``."""
    return run_staged(REFERENCE, model, X, every=every, sizes=sizes)


def staged_metrics(model: Ensemble, data: Dataset, metrics="ndcg@10", *, convention=DEFAULT_CONVENTION,
                   every: int = 1, sizes=None) -> dict:
    """Metrics of ``model`` on ``data`` at each size: ``{"n_trees": (k,), metric: (k,), ...}``.

    Each value is the metric averaged over ``data``'s queries, as
    :func:`~twinrank.reference.evaluation.metrics.evaluate` computes it.
    """
    return run_staged_metrics(REFERENCE, model, data, metrics, convention=convention, every=every, sizes=sizes)


def run_staged_metrics(engine: Engine, model, data, metrics, *, convention, every, sizes) -> dict:
    """:func:`staged_metrics` on ``engine``'s kernels (both twins share it)."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    out = {"n_trees": [], **{name: [] for name in names}}
    for size, scores in run_staged(engine, model, data.X, every=every, sizes=sizes):
        values = engine.evaluate(names, data.y, scores, data.query_offsets, convention=convention)
        out["n_trees"].append(size)
        for name in names:
            out[name].append(values[name])
    return {k: np.asarray(v, dtype=np.int64 if k == "n_trees" else np.float64) for k, v in out.items()}

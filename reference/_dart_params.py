r"""DART's and X-DART's parameters: how many trees each iteration drops, and when the loop ends.

Lucchese, Nardini, Orlando, Perego & Trani, "X-DART: Blending Dropout and Pruning for
Efficient Learning to Rank" (SIGIR 2017), Alg. 1; DART is Vinayak & Gilad-Bachrach (2015).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from twinrank.reference._param_checks import check_int, check_real
from twinrank.reference.errors import ParameterError

DROP_STRATEGIES = ("ratio", "fixed", "adaptive")


@dataclass(frozen=True)
class DARTParams:
    r"""How many trees iteration $i$ drops from the ensemble $E$, and the loop's end.

    Parameters
    ----------
    drop : {"ratio", "fixed", "adaptive"}
        ``ratio``: $k = \lfloor r\,|E| \rfloor$ (DART's rule, $r$ = ``drop_rate``);
        ``fixed``: $k$ = ``drop_k``; ``adaptive`` (X-DART): $k$ starts at 1, grows by
        ``drop_step`` after each iteration and returns to 1 after an iteration that improves
        the best validation loss, capped at ``drop_max``; $\lfloor k \rfloor$ trees are dropped.
        Always at most $|E|$.
    drop_rate : float in [0, 1]
        $r$ of the ratio strategy (the paper's best: 1.5%).
    drop_k : int >= 0
        $k$ of the fixed strategy.
    drop_step : float >= 0
        Growth of the adaptive $k$ per iteration (the paper: 0.5).
    drop_max : float >= 1
        The adaptive strategy's cap UB on $k$ (the paper: 5 or 10).
    drop_max_rate : float in [0, 1] or None
        The cap as a fraction of the ensemble's size instead, at least 1 (the paper's 1.5%).
        UB $= \max(1, \lfloor \rho\,|E| \rfloor)$ for ``drop_max_rate`` $\rho$.
    max_iterations : int or None
        Iteration cap: pruning removes trees, so $|E|$ need not reach ``n_trees``; the loop
        ends when $|E|$ = ``n_trees`` or after ``max_iterations`` iterations. None:
        ``3 * n_trees``.
    prune_metric : str
        X-DART's validation metric $M$ (higher is better); the loss is $1 - M$.
    snapshot_sizes : tuple of int
        Sizes $|E|$ at which the ensemble is kept as it was when it first reached them,
        saved in the model file and scored by ``predict(X, n_trees=size)``.
    """

    drop: str = "ratio"
    drop_rate: float = 0.015
    drop_k: int = 1
    drop_step: float = 0.5
    drop_max: float = 5.0
    drop_max_rate: float | None = None
    max_iterations: int | None = None
    prune_metric: str = "ndcg@10"
    snapshot_sizes: tuple = ()

    def __post_init__(self):
        if self.drop not in DROP_STRATEGIES:
            raise ParameterError(f"drop must be one of {', '.join(DROP_STRATEGIES)}; got {self.drop!r}")
        check_real("drop_rate", self.drop_rate, low=0.0, high=1.0)
        check_int("drop_k", self.drop_k, low=0)
        check_real("drop_step", self.drop_step, low=0.0)
        check_real("drop_max", self.drop_max, low=1.0)
        if self.drop_max_rate is not None:
            check_real("drop_max_rate", self.drop_max_rate, low=0.0, high=1.0)
        if self.max_iterations is not None:
            check_int("max_iterations", self.max_iterations, low=1)
        if not isinstance(self.prune_metric, str) or self.prune_metric.startswith("rmse"):
            raise ParameterError(f"prune_metric must be a ranking metric such as 'ndcg@10', got {self.prune_metric!r}")
        if isinstance(self.snapshot_sizes, (str, bytes)) or not hasattr(self.snapshot_sizes, "__iter__"):
            raise ParameterError(f"snapshot_sizes must be a list of tree counts, got {self.snapshot_sizes!r}")
        for size in self.snapshot_sizes:
            check_int("each of snapshot_sizes", size, low=1)
        object.__setattr__(self, "snapshot_sizes", tuple(sorted({int(s) for s in self.snapshot_sizes})))

    def to_dict(self) -> dict:
        return asdict(self)

    def iteration_cap(self, n_trees: int) -> int:
        """The loop's iteration cap: ``max_iterations``, or ``3 * n_trees``."""
        return self.max_iterations if self.max_iterations is not None else 3 * n_trees

    def cap(self, size: int) -> float:
        """The adaptive strategy's UB at ensemble size ``size``."""
        if self.drop_max_rate is not None:
            return max(1.0, math.floor(self.drop_max_rate * size))
        return self.drop_max

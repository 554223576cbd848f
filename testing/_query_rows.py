"""Registry rows of the per-query tools a paper's protocol needs: rank correlations of two rankings, and LETOR's
query-level normalisation of the features."""
from __future__ import annotations

import numpy as np

from twinrank.testing._inputs import tied_scores
from twinrank.testing._twin import Inputs, Twin

# ---------------------------------------------------------------- rank correlations

RANK_CORRELATIONS = {"kendall_tau": "Kendall's tau-b", "spearman_rho": "Spearman's rho on average ranks",
                     "footrule": "Spearman's footrule over its maximum"}


def _two_rankings(data, rng):
    """Two rankers' scores with ties that agree on about half the rows (the rest drawn afresh)."""
    a = tied_scores(rng, data.n_rows)  # (n_rows,)
    b = np.where(rng.random(data.n_rows) < 0.5, a, tied_scores(rng, data.n_rows))
    return Inputs((a, b, data.query_offsets), note="two rankers' scores with ties, equal on about half the rows")


def _rank_correlation_rows():
    return [Twin(name, "metrics", "rank_correlation", name, "exact", _two_rankings,
                 summary=f"{what} between two rankings of each query (NaN below two documents)")
            for name, what in RANK_CORRELATIONS.items()]


# ---------------------------------------------------------------- features

def _holed_features(data, rng):
    """The features with a tenth of the values missing and the last feature constant."""
    X = data.X.astype(np.float64)  # (n_rows, n_features)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, -1] = 0.5
    return Inputs((X, data.query_offsets), note="a tenth of the values NaN, the last feature constant")


def _feature_rows():
    return [
        Twin("query_level_normalize", "features", "query_norm", "query_level_normalize", "exact",
             lambda data, rng: Inputs((data.X, data.query_offsets), note="the data's features"),
             summary="every feature min-max scaled to [0, 1] within each query (LETOR's QueryLevelNorm)"),
        Twin("query_level_normalize[missing, constant]", "features", "query_norm", "query_level_normalize", "exact",
             _holed_features, summary="the same with missing values and a constant feature"),
    ]

r"""A raw-feature LETOR set, generated: 25 unnormalised text features, ~150 documents per query, grades 0-2.

Shaped like the small raw-feature LETOR collections (OHSUMED in LETOR 3.0): few queries,
long candidate lists drawn by a first-stage retrieval, three grades, and features that are
the raw statistics of a query's terms in a document's title and body, never normalised:

    features   kind                                   values
    1-2        title / body length                    integers, lognormal (heavy tail)
    3-6        sum of tf, sum of log(1 + tf)          integers / reals, mostly 0 in the title
    7-8        sum of tf / length                     small reals, many exact zeros
    9-10       sum of idf, sum of log(idf)            constant within a query
    11-14      tf * idf, log(1 + tf * idf)            heavy-tailed reals, many zeros
    15-16      number of query terms covered          integers 0 .. terms
    17-18      BM25                                   heavy-tailed reals, zeros where no term occurs
    19-24      LMIR.DIR / JM / ABS                    negative reals, one value per length where tf = 0
    25         documents citing it                    heavy-tailed counts, 60 % zero

Every document has a hidden topicality; term frequencies are Poisson with a rate that grows
with it, and the grade is a noisy function of the topicality and of a small citation effect,
cut so that about 70 % of documents are 0, 18 % are 1 and 12 % are 2. Deterministic from a seed.

    python benchmarks/generate_raw.py --queries 106 --seed 1 --write raw.txt
"""
from __future__ import annotations

import argparse

import numpy as np

from twinrank.reference.io.data import Dataset

N_FEATURES = 25
MEAN_DOCS = 150
NOISE = 1.6  # sd of the grade's noise: the best single feature scores ~0.43 test NDCG@10 (LETOR rules)
GRADE_CUTS = (0.70, 0.88)  # utility quantiles: grades 0 / 1 / 2 at 70 / 18 / 12 %
_AVG_LENGTH = np.array([12.0, 180.0])  # title, body
_MU, _K1, _B = 2000.0, 1.2, 0.75  # Dirichlet prior, BM25's k1 and b


def generate(n_queries: int, *, seed=0) -> Dataset:
    """``n_queries`` queries (sizes 60..300, mean ~150) of the raw features above."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.normal(MEAN_DOCS, 50, n_queries).round().astype(np.int64), 60, 300)
    blocks = [_query(rng, n) for n in sizes]
    X = np.vstack([b[0] for b in blocks]).astype(np.float32)
    utility = np.concatenate([b[1] for b in blocks])
    y = np.searchsorted(np.quantile(utility, GRADE_CUTS), utility).astype(np.float64)
    offsets = np.r_[0, np.cumsum(sizes)]
    return Dataset(X, y, offsets, qids=np.arange(1, n_queries + 1).astype(str))


def _query(rng, n):
    """One query's (features (n, 25), utility (n,))."""
    terms = int(rng.integers(1, 6))
    idf = rng.gamma(4.0, 1.0, terms) + 0.5  # (terms,)
    topicality = rng.normal(0.0, 1.0, n) + rng.normal(0.0, 0.6)  # (n,) a query-level shift
    lengths = np.maximum(1, np.rint(_AVG_LENGTH * rng.lognormal(-0.3, 0.8, (n, 2))))  # (n, 2)
    rate = np.exp(0.9 * topicality[:, None, None] - np.array([3.0, 1.0])[None, :, None]
                  + rng.normal(0.0, 0.7, (n, 2, terms)))  # (n, stream, term)
    tf = rng.poisson(rate * (lengths[:, :, None] / _AVG_LENGTH[None, :, None]) ** 0.5)
    citations = np.floor(rng.pareto(1.3, n) * (rng.random(n) > 0.6) * 3)  # (n,) 60 % zero
    columns = [lengths[:, 0], lengths[:, 1]]
    columns += [tf.sum(2)[:, s] for s in (0, 1)] + [np.log1p(tf).sum(2)[:, s] for s in (0, 1)]
    columns += [(tf / lengths[:, :, None]).sum(2)[:, s] for s in (0, 1)]
    columns += [np.full(n, idf.sum()), np.full(n, np.log(idf).sum())]
    tfidf = tf * idf
    columns += [tfidf.sum(2)[:, s] for s in (0, 1)] + [np.log1p(tfidf).sum(2)[:, s] for s in (0, 1)]
    columns += [(tf > 0).sum(2)[:, s] for s in (0, 1)]
    norm = _K1 * (1 - _B + _B * lengths / _AVG_LENGTH)  # (n, 2)
    columns += [(idf * tf * (_K1 + 1) / (tf + norm[:, :, None])).sum(2)[:, s] for s in (0, 1)]
    background = rng.dirichlet(np.ones(terms) * 2) * 1e-3 + 1e-5  # (terms,) collection frequencies
    for s in (0, 1):
        L = lengths[:, s][:, None]
        dirichlet = np.log((tf[:, s] + _MU * background) / (L + _MU)).sum(1)
        jm = np.log(0.5 * tf[:, s] / L + 0.5 * background).sum(1)
        absolute = np.log(np.maximum(tf[:, s] - 0.7, 0) / L + 0.7 * (tf[:, s] > 0).sum(1, keepdims=True)
                          / L * background + 1e-9).sum(1)
        columns += [dirichlet, jm, absolute]
    columns.append(citations)
    X = np.column_stack(columns)  # (n, 25)
    utility = topicality + 0.25 * np.log1p(citations) + rng.normal(0.0, NOISE, n)
    return X, utility


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=106)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--write", required=True, help="LETOR file to write")
    args = p.parse_args(argv)
    from twinrank.reference.io.letor import write_letor

    write_letor(generate(args.queries, seed=args.seed), args.write)


if __name__ == "__main__":
    main()

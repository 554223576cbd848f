r"""MSLR-WEB10K-shaped learning-to-rank data, generated: 136 features, ~120 documents per query, grades 0-4.

The features follow the layout of MSLR-WEB10K (Qin & Liu 2013, "Introducing LETOR
4.0 Datasets", and the MSLR feature list): 25 query-document features for each of
five streams (body, anchor, title, url, whole document), kind-major as in the
original (features 1-5 are "covered query terms" of the five streams, 6-10 their
ratio, ...), then 11 document features::

    kind                  features                                   values
    covered terms, tf     counts; tf heavy-tailed                    integers >= 0
    stream length         counts, lognormal tail                     integers >= 0
    IDF                   sum of the query terms' idf                positive, constant per query
    tf / length, VSM      ratios                                     [0, 1]
    tf*idf, BM25          BM25-like scores                           positive reals
    LMIR.ABS/DIR/JM       language-model log likelihoods             negative reals
    boolean model         all query terms present                    0 / 1
    inlinks, clicks, ...  heavy-tailed counts                        integers >= 0
    PageRank, SiteRank    heavy-tailed reals                         positive, ~5-8 % NaN
    click features        no query log for ~40 % of documents        NaN = missing
    QualityScore2         constant-ish                               98 % exactly 0

Every document has two hidden latents, topicality (its match to the query) and
quality; the features observe them through noisy, nonlinear transforms. The grade
is a hidden utility of a subset of the *features* (BM25 of the whole document and
of the title, title coverage gated by QualityScore, PageRank, QualityScore,
query-url clicks; see ``_utility``) plus a per-query difficulty and per-document
noise, cut at fixed thresholds so that the grades are distributed like
MSLR-WEB10K's (~51.7 % 0, 32.5 % 1, 13.4 % 2, 1.9 % 3, 0.8 % 4). The thresholds
are quantiles of the utility of a calibration sample drawn with a fixed seed, so
every data set (train, test, any seed, any size) is labelled by the same function.
The noise is set so the task is about as hard as MSLR-WEB10K: test NDCG@10
(LightGBM convention) is ~0.22 for random scores, ~0.41 for the best single
feature and ~0.55 for LightGBM's LambdaMART (200 trees, 1000 training queries).
Query sizes are lognormal (median ~87, mean ~120) clipped to [1, 1000].

Deterministic from a seed, vectorized NumPy (1M rows in a few seconds)::

    python benchmarks/generate.py --queries 100 --seed 0 --write train.txt
    python benchmarks/generate.py --rows 1000000 --write train.txt.gz --test-queries 2000 --write-test test.txt.gz
"""
from __future__ import annotations

import argparse
import functools
import time

import numpy as np

from twinrank.reference.io.data import Dataset

STREAMS = ("body", "anchor", "title", "url", "whole")
STREAM_KINDS = (
    "covered_terms", "covered_ratio", "stream_length", "idf",
    "tf_sum", "tf_min", "tf_max", "tf_mean", "tf_var",
    "ntf_sum", "ntf_min", "ntf_max", "ntf_mean", "ntf_var",
    "tfidf_sum", "tfidf_min", "tfidf_max", "tfidf_mean", "tfidf_var",
    "boolean", "vsm", "bm25", "lmir_abs", "lmir_dir", "lmir_jm",
)
DOCUMENT_FEATURES = (
    "url_slashes", "url_length", "inlinks", "outlinks", "pagerank", "siterank",
    "quality", "quality2", "query_url_clicks", "url_clicks", "url_dwell_time",
)
FEATURE_NAMES = tuple(f"{kind}_{s}" for kind in STREAM_KINDS for s in STREAMS) + DOCUMENT_FEATURES
N_FEATURES = len(FEATURE_NAMES)  # 136
GRADE_SHARES = np.array([0.517, 0.325, 0.134, 0.019, 0.008]) / 1.003  # MSLR-WEB10K, normalised
MEAN_DOCS, MAX_DOCS = 120.0, 1000
QUERY_SIZE_SIGMA = 0.8  # lognormal sigma of the query sizes; median = mean * exp(-sigma^2 / 2)
MAX_TERMS = 6  # query terms: 1 + Binomial(MAX_TERMS - 1, 0.35)
CALIBRATION_SEED, CALIBRATION_QUERIES = 20240611, 2048
QUERY_BLOCK = 256  # queries drawn from one child seed
DIFFICULTY, NOISE = 1.0, 1.5  # standard deviations of the utility's query and document noise

# per stream (body, anchor, title, url): latent weight, coverage bias, tf rate per token,
# typical length (BM25's average length), idf scale of the stream's collection
_MATCH = np.array([0.8, 0.6, 0.7, 0.5])
_COVER_BIAS = np.array([1.0, -0.5, -0.3, -1.2])
_TF_RATE = np.array([0.004, 0.05, 0.06, 0.05])
_AVG_LENGTH = np.array([600.0, 20.0, 9.0, 7.0, 640.0])  # (5,) the whole document last
_IDF_SCALE = np.array([1.0, 1.3, 1.15, 1.25, 0.95])


def generate(n_queries: int, *, seed=0, docs_per_query: int | None = None) -> Dataset:
    """``n_queries`` queries of MSLR-WEB10K-shaped data (see the module docstring).

    Queries are drawn in blocks of ``QUERY_BLOCK``, block ``i`` from the ``i``-th child
    of ``numpy.random.SeedSequence(seed)``: the same seed gives the same data set, and
    a larger data set starts with the same whole blocks.

    Parameters
    ----------
    n_queries : int >= 1
    seed : int or numpy.random.SeedSequence
    docs_per_query : int or None; every query gets this many documents instead of
        the lognormal sizes (for cost-versus-query-size measurements)

    Returns
    -------
    Dataset with X float32 (n_rows, 136), NaN = missing; y in {0, ..., 4}; qids "1".."n".
    """
    if n_queries < 1:
        raise ValueError(f"n_queries must be >= 1, got {n_queries}")
    rngs, sizes = query_blocks(n_queries, seed, docs_per_query)
    offsets = np.r_[0, np.cumsum(np.concatenate(sizes))]  # (n_queries + 1,)
    X = np.empty((offsets[-1], N_FEATURES), dtype=np.float32)  # (n_rows, 136)
    y = fill_rows(X, rngs, sizes)
    return Dataset(X, y, offsets, qids=np.arange(1, n_queries + 1).astype(str))


def query_blocks(n_queries: int, seed, docs_per_query: int | None = None) -> tuple[list, list]:
    """Each block's generator (the ``i``-th child of ``SeedSequence(seed)``) and its query sizes."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs, sizes = [], []
    for i, first in enumerate(range(0, n_queries, QUERY_BLOCK)):
        rngs.append(np.random.default_rng(_child(root, i)))
        sizes.append(_query_sizes(rngs[-1], min(QUERY_BLOCK, n_queries - first), docs_per_query))
    return rngs, sizes


def fill_rows(X: np.ndarray, rngs: list, sizes: list) -> np.ndarray:
    """Write the blocks' rows into ``X`` (an array or a memory map of shape (n_rows, 136)), block by
    block; return their grades (n_rows,) in 0..4."""
    utility = np.empty(len(X))  # (n_rows,)
    lo = 0
    for rng, block_sizes in zip(rngs, sizes):
        hi = lo + int(block_sizes.sum())
        X[lo:hi], utility[lo:hi] = _block(rng, block_sizes)
        lo = hi
    return np.searchsorted(_grade_thresholds(), utility).astype(np.float64)


def train_test(n_train_queries: int, n_test_queries: int, *, seed=0) -> tuple[Dataset, Dataset]:
    """A training and a held-out test set: different queries, from two children of ``seed``."""
    root = np.random.SeedSequence(seed)
    return (generate(n_train_queries, seed=_child(root, 0)),
            generate(n_test_queries, seed=_child(root, 1)))


def queries_for_rows(n_rows: int) -> int:
    """The number of queries whose expected total size is ``n_rows`` (mean ~120 documents each)."""
    return max(1, round(n_rows / MEAN_DOCS))


def _child(root: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """``root``'s ``i``-th child, as ``root.spawn`` would make it (without mutating ``root``)."""
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (i,))


def _query_sizes(rng, n_queries, docs_per_query):
    if docs_per_query is not None:
        return np.full(n_queries, int(docs_per_query), dtype=np.int64)
    mu = np.log(MEAN_DOCS) - QUERY_SIZE_SIGMA**2 / 2
    sizes = np.rint(rng.lognormal(mu, QUERY_SIZE_SIGMA, n_queries))  # (n_queries,)
    return np.clip(sizes, 1, MAX_DOCS).astype(np.int64)


def _block(rng, sizes):
    """Features (m, 136) float32 and hidden utilities (m,) of one block of queries."""
    n_queries, m = len(sizes), int(sizes.sum())
    qid = np.repeat(np.arange(n_queries), sizes)  # (m,)
    n_terms = (1 + rng.binomial(MAX_TERMS - 1, 0.35, n_queries))[qid]  # (m,)
    present = np.arange(MAX_TERMS)[:, None] < n_terms  # (T, m) the query's terms
    idf = present * (0.5 + rng.gamma(2.0, 1.5, (MAX_TERMS, n_queries)))[:, qid]  # (T, m), 0 if absent
    topicality = rng.standard_normal(m) + 0.5 * rng.standard_normal(n_queries)[qid]  # (m,)
    quality = rng.standard_normal(m)  # (m,)
    X = np.empty((m, N_FEATURES), dtype=np.float32, order="F")  # columns written one by one
    streams = [_stream(rng, s, topicality, quality, present, idf) for s in range(4)]
    streams.append((sum(tf for tf, _ in streams), sum(length for _, length in streams)))  # whole
    for s, (tf, length) in enumerate(streams):
        columns = _stream_features(tf, length, present, n_terms, idf * _IDF_SCALE[s], _AVG_LENGTH[s])
        for kind, column in columns.items():
            X[:, STREAM_KINDS.index(kind) * len(STREAMS) + s] = column
    X[:, len(STREAM_KINDS) * len(STREAMS):] = _document_features(rng, topicality, quality)
    return X, _utility(rng, X, sizes)


def _stream(rng, s, topicality, quality, present, idf):
    """Term frequencies (T, m) and lengths (m,) of stream ``s`` (body, anchor, title, url)."""
    m = len(topicality)
    match = _MATCH[s] * topicality + np.sqrt(1 - _MATCH[s]**2) * rng.standard_normal(m)  # (m,)
    if s == 0:  # body: lognormal length, longer for better pages
        length = np.floor(rng.lognormal(6.0 + 0.3 * quality, 1.0))
    elif s == 1:  # anchor: none for about half of the pages
        has_anchor = rng.random(m) < 1 / (1 + np.exp(0.3 - quality))
        length = has_anchor * np.floor(1 + rng.lognormal(2.0 + 0.5 * quality, 1.2))
    else:  # title, url: short
        length = 1.0 + rng.poisson(8.0 if s == 2 else 6.0, m)
    logit = 1.5 * match + _COVER_BIAS[s] - 0.25 * idf  # (T, m)
    covered = present & (length > 0) & (rng.random(logit.shape) * (1 + np.exp(-logit)) < 1)
    term, doc = covered.nonzero()  # (n_covered,) each
    rate = _TF_RATE[s] * length[doc] * np.exp(0.5 * match[doc] - 0.1 * idf[term, doc])
    tf = np.zeros(covered.shape)  # (T, m)
    tf[term, doc] = np.minimum(1.0 + rng.poisson(rate), length[doc])  # a term fits in the stream
    return tf, length


def _stream_features(tf, length, present, n_terms, idf, avg_length) -> dict:
    """The 25 features of one stream from its term frequencies (T, m) and lengths (m,).

    ``tf`` and ``idf`` are 0 at the terms a query does not have, so plain sums over
    the term axis are sums over the query's terms.
    """
    n_covered = (tf > 0).sum(axis=0)  # (m,)
    safe_length = np.maximum(length, 1.0)  # (m,)
    tfidf = tf * idf  # (T, m)
    features = {"covered_terms": n_covered, "covered_ratio": n_covered / n_terms,
                "stream_length": length, "idf": idf.sum(axis=0)}
    for name, values in (("tf", tf), ("ntf", tf / safe_length), ("tfidf", tfidf)):
        features.update(_term_stats(name, values, present, n_terms))
    q_norm = np.sqrt((idf**2).sum(axis=0))  # (m,)
    d_norm = np.sqrt((tfidf**2).sum(axis=0)) + np.sqrt(length)  # (m,)
    p_collection = np.exp(-idf)  # (T, m) a term's probability in the collection
    bm25 = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg_length))  # (T, m) k1=1.2, b=0.75
    features.update(
        boolean=(n_covered == n_terms).astype(np.float64),
        vsm=(idf * tfidf).sum(axis=0) / (q_norm * d_norm + 1e-12),
        bm25=bm25.sum(axis=0),
        lmir_abs=_log_likelihood(np.maximum(tf - 0.7, 0.0) / safe_length
                                 + 0.7 * (1 + n_covered) / safe_length * p_collection, present),
        lmir_dir=_log_likelihood((tf + 2000 * p_collection) / (safe_length + 2000), present),
        lmir_jm=_log_likelihood(0.9 * tf / safe_length + 0.1 * p_collection, present),
    )
    return features


def _term_stats(name, values, present, n_terms) -> dict:
    """Sum, min, max, mean and variance of ``values`` (T, m; 0 at absent terms) over the query's terms."""
    total = values.sum(axis=0)  # (m,)
    mean = total / n_terms
    return {f"{name}_sum": total,
            f"{name}_min": np.where(present, values, np.inf).min(axis=0),
            f"{name}_max": values.max(axis=0),
            f"{name}_mean": mean,
            f"{name}_var": (present * (values - mean)**2).sum(axis=0) / n_terms}


def _log_likelihood(p, present):
    """The query's log likelihood under a smoothed language model: sum of log p over its terms."""
    return (present * np.log(p)).sum(axis=0)


def _document_features(rng, topicality, quality) -> np.ndarray:
    """The 11 document features (URL, links, PageRank, quality, clicks), NaN where missing."""
    n = len(quality)
    noise = rng.standard_normal((n, 6))  # (n_rows, 6)
    url_length = 12.0 + rng.poisson(np.exp(3.2 - 0.2 * quality))
    url_slashes = rng.poisson(1.0 + url_length / 20.0)
    inlinks = np.floor(rng.lognormal(1.0 + 1.2 * quality, 1.5))
    outlinks = np.floor(rng.lognormal(3.0 + 0.2 * quality, 1.0))
    pagerank = 1000.0 * np.exp(0.8 * quality + noise[:, 0])
    siterank = 100.0 * np.exp(0.5 * quality + 1.2 * noise[:, 1])
    quality_score = np.clip(np.rint(128 + 40 * quality + 20 * noise[:, 2]), 0, 255)
    quality2 = np.where(rng.random(n) < 0.02, np.rint(50 + 20 * np.abs(noise[:, 3])), 0.0)
    logged = rng.random(n) < 0.6  # documents with query-log data
    query_url_clicks = rng.poisson(np.exp(0.9 * topicality + 0.4 * quality - 1.5))
    url_clicks = rng.poisson(np.exp(1.0 + quality + 0.5 * noise[:, 4]))
    dwell = np.where(url_clicks > 0, np.exp(3.0 + 0.3 * quality + noise[:, 5]), 0.0)
    columns = np.column_stack([
        url_slashes, url_length, inlinks, outlinks,
        np.where(rng.random(n) < 0.05, np.nan, pagerank), np.where(rng.random(n) < 0.08, np.nan, siterank),
        quality_score, quality2,
        np.where(logged, query_url_clicks, np.nan), np.where(logged, url_clicks, np.nan),
        np.where(logged, dwell, np.nan)])  # (n_rows, 11)
    return columns


def _utility(rng, X, sizes) -> np.ndarray:
    r"""The hidden utility: a few features, one interaction, a per-query difficulty and noise.

    .. math:: U = 0.5 \log(1 + \mathrm{BM25}_{whole}) + 0.4 \log(1 + \mathrm{BM25}_{title})
              + 0.5\,\mathrm{covered\_ratio}_{title} \cdot [\mathrm{QualityScore} > 128]
              + 0.25 \log \frac{\mathrm{PageRank}}{1000} + 0.005\,\mathrm{QualityScore}
              + 0.4 \log(1 + \mathrm{clicks}) + d_q + \varepsilon

    with missing values (NaN) contributing 0 (PageRank: its median),
    :math:`d_q \sim N(0, \mathrm{DIFFICULTY}^2)` per query and
    :math:`\varepsilon \sim N(0, \mathrm{NOISE}^2)` per document.
    """
    def column(name):
        return X[:, FEATURE_NAMES.index(name)].astype(np.float64)

    log_pagerank = np.nan_to_num(np.log(column("pagerank") / 1000.0))
    utility = (0.5 * np.log1p(column("bm25_whole")) + 0.4 * np.log1p(column("bm25_title"))
               + 0.5 * column("covered_ratio_title") * (column("quality") > 128) + 0.25 * log_pagerank
               + 0.005 * column("quality") + 0.4 * np.nan_to_num(np.log1p(column("query_url_clicks"))))
    difficulty = np.repeat(DIFFICULTY * rng.standard_normal(len(sizes)), sizes)  # (m,)
    return utility + difficulty + NOISE * rng.standard_normal(len(utility))


@functools.lru_cache(maxsize=1)
def _grade_thresholds() -> np.ndarray:
    """Utility cut points 0|1|2|3|4: quantiles of a fixed-seed calibration sample at MSLR's shares."""
    root = np.random.SeedSequence(CALIBRATION_SEED)
    utilities = []
    for i in range(CALIBRATION_QUERIES // QUERY_BLOCK):
        rng = np.random.default_rng(_child(root, i))
        utilities.append(_block(rng, _query_sizes(rng, QUERY_BLOCK, None))[1])
    return np.quantile(np.concatenate(utilities), np.cumsum(GRADE_SHARES)[:-1])  # (4,)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--queries", type=int, default=100, help="training queries (default 100)")
    size.add_argument("--rows", type=int, help="about this many training rows (~120 per query)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-queries", type=int, default=0, help="also a held-out test set")
    parser.add_argument("--write", metavar="PATH", help="write the training set as LETOR (.gz ok)")
    parser.add_argument("--write-test", metavar="PATH", help="write the test set as LETOR")
    args = parser.parse_args(argv)
    from twinrank.reference.io.letor import write_letor

    n_queries = queries_for_rows(args.rows) if args.rows else args.queries
    start = time.perf_counter()
    train, test = train_test(n_queries, max(args.test_queries, 1), seed=args.seed)
    print(f"generated {train.n_rows} training rows ({train.n_queries} queries) and {test.n_rows} test "
          f"rows in {time.perf_counter() - start:.2f} s; grade shares "
          f"{np.round(np.bincount(train.y.astype(int), minlength=5) / train.n_rows, 3)}")
    for data, path in ((train, args.write), (test, args.write_test if args.test_queries else None)):
        if path:
            write_letor(data, path)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

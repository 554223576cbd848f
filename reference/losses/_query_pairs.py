r"""LambdaRank's document pairs, and running sums down each query's ranking, for all queries at once.

**Pairs.** LambdaRank's forces act on the pairs $(i, j)$ of one query with $y_i > y_j$
(documents of equal labels make no pair). With a query's documents sorted by label,
highest first (:func:`label_order`), they fall into label groups, and document $i$ pairs
with every document after the end of its group, up to the end of its query: the pairs of
every query are the rows of one ragged array, a row per document, which
:func:`pair_blocks` lists as two flat index arrays ``(i, j)``. A query of $n$ documents
has at most $n (n - 1) / 2$ pairs, and only those are listed: on MQ2008, 11% of the
$n \times n$ position pairs.

**Running sums.** The $|\Delta Z|$ of average precision and ERR need, at each ranked
position, sums over the positions above it within the query (:func:`sum_above`,
:func:`product_above`). ``np.cumsum`` has no reset at query boundaries, and subtracting
a running total across queries would round differently from a query summed alone; so
the queries of one length are stacked, (n_queries_of_that_length, n), and summed along
the rows: every query's sums are those of the query alone, bit for bit.
"""
from __future__ import annotations

import numpy as np


def query_of_rows(query_offsets: np.ndarray) -> np.ndarray:
    """The query of every row, (n_rows,) int64 (rows grouped by query, as ``query_offsets`` says)."""
    return np.repeat(np.arange(len(query_offsets) - 1), np.diff(query_offsets))


def labelled_pairs(y: np.ndarray, query_offsets: np.ndarray) -> np.ndarray:
    r"""Each query's pairs of documents with different labels, (n_queries,) int64:
    $(n^2 - \sum_l n_l^2) / 2$, $n_l$ the query's documents of label $l$ (every pair but the
    equal-label ones, counted once)."""
    if len(y) == 0:
        return np.zeros(len(query_offsets) - 1, dtype=np.int64)
    query = query_of_rows(query_offsets)  # (n_rows,)
    order = np.lexsort((y, query))  # (n_rows,) by query, then label
    labels, queries = y[order], query[order]
    starts = np.flatnonzero(np.r_[True, (labels[1:] != labels[:-1]) | (queries[1:] != queries[:-1])])  # (n_groups,)
    counts = np.diff(np.r_[starts, len(y)]).astype(np.float64)  # (n_groups,) documents of one label in a query
    same = np.bincount(queries[starts], counts**2, len(query_offsets) - 1)  # (n_queries,) sum of n_l^2
    sizes = np.diff(query_offsets).astype(np.float64)  # (n_queries,)
    return ((sizes**2 - same) / 2).astype(np.int64)


def label_order(y: np.ndarray, query: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The rows sorted by query, then by label, highest first; equal labels in ranked order
    (``order``, as ``objectives.rank_order`` gives it: ``np.lexsort`` is stable). So every
    sum over a document's pairs adds in an order set by labels and scores, not by the
    input order of the documents."""
    return order[np.lexsort((-y[order], query[order]))]


def pair_blocks(y: np.ndarray, query: np.ndarray, by_label: np.ndarray, computed: np.ndarray, block: int):
    r"""The pairs $(i, j)$, $y_i > y_j$, of the ``computed`` queries, a block at a time.

    Parameters
    ----------
    y : (n_rows,) labels;  query : (n_rows,) the query of each row (:func:`query_of_rows`)
    by_label : (n_rows,) :func:`label_order`
    computed : (n_queries,) bool, the queries whose pairs are listed
    block : a block holds the pairs of whole documents (rows of the ragged array), starting
        a new block once ``block`` pairs are reached: at most ``block + n - 1`` pairs, ``n``
        the longest query

    Yields
    ------
    ``(i, j)``: int64 arrays of one block's pairs, ``y[i] > y[j]``, ``query[i] == query[j]``;
    in the order of ``by_label``: by ``i``, then by ``j``.

    Notes
    -----
    **NumPy idiom for the loop over documents and partners.** The loops
    ``for i in docs: for j in docs[group_end[i]:query_end[i]]: yield i, j`` are one
    ``np.repeat`` of each document by its number of partners, plus a ragged ``arange``
    (each row's offsets 0, 1, ..., count - 1) added to the row's first partner.
    """
    docs = by_label[computed[query[by_label]]]  # (n_docs,) the computed queries' rows, by label
    if len(docs) == 0:
        return
    labels, queries = y[docs], query[docs]
    group_end = _run_ends((labels[1:] != labels[:-1]) | (queries[1:] != queries[:-1]))  # (n_docs,)
    query_end = _run_ends(queries[1:] != queries[:-1])  # (n_docs,)
    partners = query_end - group_end  # (n_docs,) each document's pairs
    pairs_before = np.cumsum(partners) - partners  # (n_docs,)
    cuts = np.searchsorted(pairs_before, np.arange(block, pairs_before[-1] + 1, block), side="left")
    for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(docs)]):
        if partners[start:stop].sum() > 0:
            yield _pairs_of(docs[start:stop], group_end[start:stop], partners[start:stop], docs)


def _pairs_of(rows, first_partner, counts, docs):
    """The pairs ``(i, j)`` of the documents ``rows`` (m,): document ``rows[r]`` with
    ``docs[first_partner[r]:first_partner[r] + counts[r]]``."""
    i = np.repeat(rows, counts)  # (n_pairs,)
    row_start = np.cumsum(counts) - counts  # (m,) each row's first pair
    offset = np.arange(len(i)) - np.repeat(row_start, counts)  # (n_pairs,) 0 .. count - 1 per row
    return i, docs[np.repeat(first_partner, counts) + offset]  # (n_pairs,) each


def _run_ends(boundary: np.ndarray) -> np.ndarray:
    """For sorted items whose neighbours ``t, t + 1`` differ where ``boundary[t]`` is True (n - 1,):
    the index one past the end of each item's run, (n,)."""
    starts = np.flatnonzero(np.r_[True, boundary])  # (n_runs,)
    ends = np.r_[starts[1:], len(boundary) + 1]  # (n_runs,)
    return np.repeat(ends, ends - starts)


def sum_above(x: np.ndarray, query_offsets: np.ndarray) -> np.ndarray:
    """``x`` (n_rows,), in ranked order, summed over the positions above each position in its query:
    ``[0, x0, x0 + x1, ...]`` per query."""
    return _above(np.cumsum, x, query_offsets, 0.0)


def product_above(x: np.ndarray, query_offsets: np.ndarray) -> np.ndarray:
    """``x`` (n_rows,), in ranked order, multiplied over the positions above each position in its
    query: ``[1, x0, x0 * x1, ...]`` per query."""
    return _above(np.cumprod, x, query_offsets, 1.0)


def _above(accumulate, x, query_offsets, first):
    """``accumulate`` (``np.cumsum`` or ``np.cumprod``) along each query, shifted one position down,
    ``first`` at each query's top; the queries of one length as one (n_q, n) batch."""
    out = np.empty_like(x)
    sizes = np.diff(query_offsets)  # (n_queries,)
    for n in np.unique(sizes[sizes > 0]):
        rows = query_offsets[:-1][sizes == n, None] + np.arange(n)  # (n_q, n) the queries of length n
        running = accumulate(x[rows], axis=1)  # (n_q, n)
        out[rows] = np.concatenate((np.full((len(rows), 1), first), running[:, :-1]), axis=1)
    return out

r"""The :class:`Dataset` both twins train on: features, labels and query boundaries.

A learning-to-rank data set is a matrix of feature vectors whose rows are grouped
into queries. Rows of one query are contiguous, and query ``q`` owns rows
``query_offsets[q]:query_offsets[q + 1]``::

    query_offsets = [0, 3, 5, 9]      3 queries with 3, 2 and 4 documents

Missing feature values are NaN. Infinite feature values and NaN labels are
errors, never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import DataFormatError, ParameterError


@dataclass
class Dataset:
    """Features, labels and query groups, plus what the file said about them.

    Attributes
    ----------
    X : ndarray of float32, shape (n_rows, n_features); NaN means missing
    y : ndarray of float64, shape (n_rows,); relevance labels (grades)
    query_offsets : ndarray of int64, shape (n_queries + 1,); starts at 0, ends at n_rows
    qids : ndarray of str, shape (n_queries,), or None; query ids as read
    comments : ndarray of object (str), shape (n_rows,), or None; the text after ``#``
    """

    X: np.ndarray
    y: np.ndarray
    query_offsets: np.ndarray
    qids: np.ndarray | None = None
    comments: np.ndarray | None = None

    def __post_init__(self):
        self.X = np.ascontiguousarray(self.X, dtype=np.float32)
        self.y = np.ascontiguousarray(self.y, dtype=np.float64)
        self.query_offsets = np.ascontiguousarray(self.query_offsets, dtype=np.int64)
        _check_arrays(self)
        if self.qids is not None:
            self.qids = np.asarray(self.qids).astype(str)
            if self.qids.shape != (self.n_queries,):
                raise ParameterError(f"qids has shape {self.qids.shape}, expected ({self.n_queries},)")
        if self.comments is not None:
            self.comments = np.asarray(self.comments, dtype=object)
            if self.comments.shape != (self.n_rows,):
                raise ParameterError(f"comments has shape {self.comments.shape}, expected ({self.n_rows},)")

    @classmethod
    def from_qid(cls, X, y, qid, comments=None) -> "Dataset":
        """Build from a per-row query id array (scikit-learn / XGBoost style).

        Rows of a query must already be contiguous; a query id that reappears after
        another query is an error naming the row, never a silent reorder.
        """
        qid = np.asarray(qid)
        if qid.ndim != 1 or len(qid) != len(np.asarray(y)):
            raise ParameterError(f"qid must be 1-D with one entry per row, got shape {qid.shape}")
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]]) if len(qid) else np.zeros(0, int)
        run_ids = qid[starts]
        _, first = np.unique(run_ids, return_index=True)
        if len(first) != len(run_ids):
            seen = {}
            for s, q in zip(starts, run_ids):
                if q in seen:
                    raise ParameterError(
                        f"query id {q!r} reappears at row {s} after other queries "
                        f"(first seen at row {seen[q]}); rows of a query must be contiguous"
                    )
                seen[q] = s
        offsets = np.r_[starts, len(qid)].astype(np.int64)
        return cls(X, y, offsets, qids=run_ids, comments=comments)

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_queries(self) -> int:
        return len(self.query_offsets) - 1

    @property
    def query_sizes(self) -> np.ndarray:
        return np.diff(self.query_offsets)

    @property
    def qid(self) -> np.ndarray:
        """The query index (0..n_queries-1) of every row, shape (n_rows,)."""
        return np.repeat(np.arange(self.n_queries), self.query_sizes)

    def take_queries(self, queries) -> "Dataset":
        """The data set made of the given queries, in the given order."""
        queries = np.asarray(queries, dtype=np.int64)
        sizes = self.query_sizes[queries]
        rows = _query_rows(self.query_offsets, queries)
        return Dataset(
            self.X[rows], self.y[rows], np.r_[0, np.cumsum(sizes)],
            qids=None if self.qids is None else self.qids[queries],
            comments=None if self.comments is None else self.comments[rows],
        )


def _query_rows(query_offsets: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Row indices of ``queries``, concatenated in order."""
    sizes = query_offsets[queries + 1] - query_offsets[queries]  # (len(queries),)
    starts = np.repeat(query_offsets[queries], sizes)  # (n_rows_out,)
    within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return starts + within


def _check_arrays(ds: Dataset) -> None:
    if ds.X.ndim != 2:
        raise ParameterError(f"X must be 2-D, got shape {ds.X.shape}")
    if ds.y.shape != (ds.X.shape[0],):
        raise ParameterError(f"y has shape {ds.y.shape}, expected ({ds.X.shape[0]},)")
    off = ds.query_offsets
    if off.ndim != 1 or len(off) < 1 or off[0] != 0 or off[-1] != ds.X.shape[0] or np.any(np.diff(off) < 0):
        raise ParameterError(
            "query_offsets must start at 0, end at n_rows and never decrease"
        )
    if np.isinf(ds.X).any():
        r, c = np.argwhere(np.isinf(ds.X))[0]
        raise ParameterError(f"X[{r}, {c}] is infinite; use NaN for a missing value")
    if np.isnan(ds.y).any():
        raise ParameterError(f"y[{np.flatnonzero(np.isnan(ds.y))[0]}] is NaN")

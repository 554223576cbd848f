r"""The :class:`Dataset` both twins train on: features, labels and query boundaries.

A learning-to-rank data set is a matrix of feature vectors whose rows are grouped
into queries. Rows of one query are contiguous, and query ``q`` owns rows
``query_offsets[q]:query_offsets[q + 1]``::

    query_offsets = [0, 3, 5, 9]      3 queries with 3, 2 and 4 documents

Missing feature values are NaN. Infinite feature values and NaN labels are
errors, never silently dropped.

Also here: the bundled LETOR 4.0 MQ2008 data (:func:`load_mq2008`) and
query-level folds and subsamples (:func:`query_folds`, :func:`subsample_queries`), and
the queries that rank nothing, found and dropped (:func:`single_label_queries`,
:func:`drop_single_label_queries`).
Files are read and written by :mod:`twinrank.reference.io.letor`, which imports this
module; MQ2008's files are read by the same private reader, ``_letor_reader``, which
does not.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from importlib import resources

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.io._letor_reader import read_arrays
from twinrank.reference.sampling import make_rng, subsample


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
    has_queries : bool; False only for rows read from a file with neither a ``qid:``
        column nor a group file, which the reader makes one query of all rows (SVMlight's
        meaning). Ranking needs real queries: ``twinrank train`` and ``evaluate`` refuse such
        a file for LambdaMART and query metrics.
    n_features_in_file : int or None; the largest feature id of the file the rows were
        read from (None when not read from a file). ``X`` is wider when the reader was
        asked for more columns (``read_letor(..., n_features=)``), which it fills with 0.0.
    weight : ndarray of float64, shape (n_rows,), or None; each row's training weight
        (finite, >= 0, not all 0), which multiplies its gradient and hessian (``fit(...,
        sample_weight=)``); None weighs every row 1. Metrics never read it.
    """

    X: np.ndarray
    y: np.ndarray
    query_offsets: np.ndarray
    qids: np.ndarray | None = None
    comments: np.ndarray | None = None
    has_queries: bool = True
    n_features_in_file: int | None = None
    weight: np.ndarray | None = None

    def __post_init__(self):
        self.X = dense_features(self.X)
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
        if self.weight is not None:
            self.weight = checked_weights(self.weight, self.n_rows)

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
                        f"query id {_plain(q)!r} reappears at row {s} after other queries "
                        f"(first seen at row {seen[q]}); rows of a query must be contiguous"
                    )
                seen[q] = s
        offsets = np.r_[starts, len(qid)].astype(np.int64)
        return cls(X, y, offsets, qids=run_ids, comments=comments)

    @classmethod
    def from_group(cls, X, y, group) -> "Dataset":
        """Build from query sizes (LightGBM's ``group``, XGBoost's ``group``): the first
        ``group[0]`` rows are one query, the next ``group[1]`` the next, ...; each size an
        integer >= 1, their sum the number of rows."""
        sizes = np.asarray(group)
        n_rows = len(np.asarray(y))
        if sizes.ndim != 1 or not (np.issubdtype(sizes.dtype, np.integer) or (
                np.issubdtype(sizes.dtype, np.floating) and np.all(sizes == np.round(sizes)))):
            raise ParameterError(f"group must be 1-D integer query sizes, got {sizes.dtype} of shape {sizes.shape}")
        if np.any(sizes < 1):
            q = int(np.flatnonzero(sizes < 1)[0])
            raise ParameterError(f"group[{q}] = {_plain(sizes[q])!r}: a query size must be >= 1")
        if int(sizes.sum()) != n_rows:
            raise ParameterError(f"group sums to {int(sizes.sum())} rows but there are {n_rows}: one size per query, "
                                 "in row order (LightGBM's group)")
        return cls(X, y, np.r_[0, np.cumsum(sizes.astype(np.int64))])

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
        rows = query_rows(self.query_offsets, queries)
        return Dataset(
            self.X[rows], self.y[rows], np.r_[0, np.cumsum(sizes)],
            qids=None if self.qids is None else self.qids[queries],
            comments=None if self.comments is None else self.comments[rows],
            has_queries=self.has_queries, n_features_in_file=self.n_features_in_file,
            weight=None if self.weight is None else self.weight[rows],
        )


def checked_weights(weight, n_rows: int) -> np.ndarray:
    """``weight`` as float64 of shape (n_rows,), finite and >= 0 with a positive one; else ParameterError
    naming the first bad entry."""
    w = np.ascontiguousarray(weight, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ParameterError(f"weight has shape {w.shape}, expected ({n_rows},): one weight per row")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if len(bad):
        raise ParameterError(f"weight[{bad[0]}] = {w[bad[0]]!r}: a weight must be finite and >= 0")
    if n_rows and not np.any(w > 0):
        raise ParameterError("every weight is 0: nothing would be learned")
    return w


def stacked_weights(parts: list) -> np.ndarray | None:
    """The rows' weights of the data sets ``parts`` one after the other, or None when none has weights.

    A set without weights weighs each of its rows 1 (as training on it alone would), so that stacking
    a weighted set with an unweighted one drops no weight and invents none.
    """
    if all(data.weight is None for data in parts):
        return None
    return np.concatenate([np.ones(data.n_rows) if data.weight is None else data.weight for data in parts])


VALID = "valid"  # the name of the first eval set: history keys "valid:ndcg@10"


def eval_set_name(i: int) -> str:
    """The default name of the ``i``-th eval set (0-based): ``"valid"``, then ``"valid_1"``, ``"valid_2"``, ..."""
    return VALID if i == 0 else f"{VALID}_{i}"


def named_sets(valid) -> list:
    """Validation data as the loops take it: a list of ``(name, Dataset)`` pairs, the first one
    the set early stopping watches. None is no set; a lone Dataset is ``[("valid", it)]``; a
    list of pairs is itself."""
    if valid is None:
        return []
    if isinstance(valid, Dataset):
        return [(VALID, valid)]
    return list(valid)


def first_set(valid) -> Dataset | None:
    """The first validation set of ``valid`` (as :func:`named_sets` reads it), or None."""
    sets = named_sets(valid)
    return sets[0][1] if sets else None


def dense_features(X, block_rows: int = 4096) -> np.ndarray:
    """``X`` as the C-contiguous float32 matrix both twins train on; a ``scipy.sparse`` matrix and a
    pandas DataFrame (:func:`frame_features`) too.

    A sparse matrix (anything with ``tocsr`` and ``nnz``: scipy is not imported) is
    densified ``block_rows`` rows at a time, so the peak is the dense float32 matrix plus
    one block: absent entries are 0.0 (the LETOR convention), stored NaN stays missing.
    twinrank's trees work on dense binned features; for genuinely wide sparse data, select
    features first. A matrix too large for memory is a ParameterError giving its size.
    """
    if is_frame(X):
        return frame_features(X)
    if not (hasattr(X, "tocsr") and hasattr(X, "nnz")):
        return np.ascontiguousarray(X, dtype=np.float32)
    X = X.tocsr()
    n_rows, n_features = X.shape
    try:
        dense = np.empty((n_rows, n_features), dtype=np.float32)  # (n_rows, n_features)
    except (MemoryError, ValueError):
        raise ParameterError(f"a sparse X of shape {X.shape} takes {n_rows * n_features * 4 / 2**30:.1f} GiB as "
                             "the dense float32 matrix twinrank trains on; select fewer features") from None
    for start in range(0, n_rows, block_rows):
        dense[start:start + block_rows] = X[start:start + block_rows].toarray()
    return dense


def is_frame(X) -> bool:
    """Whether ``X`` is a pandas DataFrame. pandas is not imported here: a DataFrame exists only once
    its user imported pandas, so pandas stays optional."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(X, pandas.DataFrame)


def frame_names(X) -> np.ndarray | None:
    """The column names of a DataFrame whose every column name is a string, as an object array
    (scikit-learn's rule for ``feature_names_in_``); None for anything else."""
    if not is_frame(X) or not all(isinstance(name, str) for name in X.columns):
        return None
    return np.asarray(X.columns, dtype=object)


def frame_features(frame) -> np.ndarray:
    """A DataFrame's columns as the float32 matrix ``X``, one column each, in order.

    Numbers are read as they are and booleans as 0 and 1; a missing value (NaN, and pandas'
    ``pd.NA`` of the nullable ``Int64``, ``Float64`` and ``boolean`` columns) is NaN, missing.
    A column of anything else (strings, Python objects, categories, dates) is a ParameterError
    naming it: twinrank trains on numbers and guesses no encoding.
    """
    X = np.empty(frame.shape, dtype=np.float32)  # (n_rows, n_columns)
    for j, (name, column) in enumerate(frame.items()):
        if column.dtype.kind not in "biuf":
            raise ParameterError(f"column {name!r} (position {j}) is {column.dtype}, not numbers: twinrank trains "
                                 "on numeric features; encode it first (or drop it)")
        X[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return X


def _plain(value):
    """A NumPy scalar as the Python value it holds (``np.int64(463)`` -> ``463``), for messages."""
    return value.item() if isinstance(value, np.generic) else value


def query_rows(query_offsets: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Row indices (int64) of ``queries``, concatenated in the given order."""
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


MQ2008_N_FEATURES = 46


def load_mq2008(fold: int = 1) -> tuple[Dataset, Dataset, Dataset]:
    r"""The bundled LETOR 4.0 MQ2008 data set: ``(train, vali, test)`` of one of its five folds.

    MQ2008 holds the 784 queries of the TREC 2008 Million Query track that have
    judged documents: 15,211 query-document pairs, 46 features (the
    query-level normalised "Querylevelnorm" version), relevance labels 0, 1, 2,
    5 to 121 documents per query; 220 queries have no relevant document. The
    queries come in five parts S1..S5 (bundled verbatim, gzip); fold $k$
    trains on $S_k, S_{k+1}, S_{k+2}$, validates on $S_{k+3}$ and
    tests on $S_{k+4}$ (indices mod 5, 1-based), exactly as the LETOR
    distribution's ``Fold{k}/{train,vali,test}.txt``. Query ids and the comments
    (``docid = GX... inc = ... prob = ...``) are kept.

    Provenance: LETOR 4.0 (Microsoft Research), copied from the MQ2008 files in
    pull request #194 of meta-toolkit/meta; ``datasets/mq2008/PROVENANCE.md``
    gives the commits and blob ids. Released for research; cite
    T. Qin and T.-Y. Liu, "Introducing LETOR 4.0 Datasets", arXiv:1306.2597, 2013.

    Parameters
    ----------
    fold : int, 1..5

    Returns
    -------
    train, vali, test : Dataset, each with 46 features and fresh arrays
    """
    if fold not in (1, 2, 3, 4, 5):
        raise ParameterError(f"fold must be one of 1, 2, 3, 4, 5, got {fold!r}")
    part = [(fold - 1 + i) % 5 + 1 for i in range(5)]  # S numbers in fold order
    train = _concatenate([_mq2008_part(k) for k in part[:3]])
    return train, _concatenate([_mq2008_part(part[3])]), _concatenate([_mq2008_part(part[4])])


@functools.lru_cache(maxsize=5)
def _mq2008_part(k: int) -> Dataset:
    """MQ2008's part ``S{k}``, parsed once per process (callers copy it), as ``letor.read_letor`` reads it."""
    source = resources.files(__package__) / "datasets" / "mq2008" / f"S{k}.txt.gz"
    with resources.as_file(source) as path:
        return Dataset(*read_arrays(path, n_features=MQ2008_N_FEATURES))


def _concatenate(parts: list) -> Dataset:
    """The data sets one after the other, as new arrays (queries keep their order)."""
    sizes = np.concatenate([p.query_sizes for p in parts])  # (n_queries,)
    return Dataset(
        np.concatenate([p.X for p in parts]), np.concatenate([p.y for p in parts]),
        np.r_[0, np.cumsum(sizes)],
        qids=np.concatenate([p.qids for p in parts]),
        comments=np.concatenate([p.comments for p in parts]),
        has_queries=all(p.has_queries for p in parts),
        n_features_in_file=max(p.n_features_in_file for p in parts),
    )


def query_folds(n_queries: int, n_folds: int = 5, *, seed=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Query-level k-fold cross-validation: ``n_folds`` pairs ``(train_queries, test_queries)``.

    The queries are cut into ``n_folds`` blocks, as ``numpy.array_split`` cuts
    (the first ``n_queries % n_folds`` blocks hold one query more); fold ``i``
    tests on block ``i`` and trains on the others, so every query is tested
    exactly once. Without ``seed`` the blocks are contiguous runs of query
    indices in order; with ``seed`` they are cut from one permutation,
    ``make_rng(seed).permutation(n_queries)``. Both arrays of a fold are sorted
    int64 query indices, so :meth:`Dataset.take_queries` keeps file order.
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ParameterError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if not isinstance(n_queries, (int, np.integer)) or n_queries < n_folds:
        raise ParameterError(f"n_queries must be an integer >= n_folds={n_folds}, got {n_queries!r}")
    order = np.arange(n_queries) if seed is None else make_rng(seed).permutation(n_queries)  # (n_queries,)
    blocks = np.array_split(order.astype(np.int64), n_folds)
    return [(np.sort(np.concatenate(blocks[:i] + blocks[i + 1:])), np.sort(blocks[i]))
            for i in range(n_folds)]


def subsample_queries(dataset: Dataset, fraction: float, *, seed) -> Dataset:
    """A random ``fraction`` of the queries of ``dataset``, whole and in file order.

    The queries kept are ``sampling.subsample(make_rng(seed), n_queries, fraction)``:
    ``max(1, round(fraction * n_queries))`` of them, without replacement; the
    same seed keeps the same queries. ``fraction`` is in ``(0, 1]``.
    """
    if not 0.0 < fraction <= 1.0:
        raise ParameterError(f"fraction must be in (0, 1], got {fraction!r}")
    return dataset.take_queries(subsample(make_rng(seed), dataset.n_queries, fraction))


def single_label_queries(y, query_offsets) -> np.ndarray:
    r"""Which queries have one label only: bool, shape (n_queries,).

    Query $q$ is single-label when every document of it has the label of its first document,
    $l_i = l_{\text{first}(q)}$ for all $i \in q$; an empty query is single-label too (no two
    documents differ). Such a query ranks nothing: every ordering of it scores the same under every
    metric (Wu, Burges, Svore & Gao 2010, Sec. 5.1).
    """
    y = np.asarray(y, dtype=np.float64)
    offsets = np.asarray(query_offsets, dtype=np.int64)
    if y.ndim != 1 or offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(y) \
            or np.any(np.diff(offsets) < 0):
        raise ParameterError(f"y must be 1-D and query_offsets must start at 0, end at n_rows={len(y)} and "
                             "never decrease")
    if np.isnan(y).any():
        raise ParameterError(f"y[{np.flatnonzero(np.isnan(y))[0]}] is NaN")
    sizes = np.diff(offsets)  # (n_queries,)
    query = np.repeat(np.arange(len(sizes)), sizes)  # (n_rows,)
    differs = y != y[np.repeat(offsets[:-1], sizes)]  # (n_rows,) label unlike its query's first
    return np.bincount(query, weights=differs, minlength=len(sizes)) == 0


def drop_single_label_queries(dataset: Dataset) -> Dataset:
    """A new Dataset without the queries whose documents all have the same label.

    Wu, Burges, Svore & Gao (2010, Sec. 5.1) remove such queries: every ranking of one scores
    the same, so it carries no ranking information (LambdaRank gives it no gradient), yet it counts
    in a metric's mean over queries with the same value for every ranker (NDCG 1 when all its
    documents are relevant; the convention's value when none is), narrowing their differences.
    Queries of one document and empty queries are single-label (:func:`single_label_queries`).
    The kept queries keep their order and their rows their order, with their ``qids`` and
    ``comments`` (the ``docid = ...`` of each row); the arrays are new (:meth:`Dataset.take_queries`).
    """
    if not isinstance(dataset, Dataset):
        raise ParameterError(f"drop_single_label_queries takes a Dataset, got {type(dataset).__name__}")
    return dataset.take_queries(np.flatnonzero(~single_label_queries(dataset.y, dataset.query_offsets)))

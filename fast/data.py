"""Data sets, bundled MQ2008, query folds (shared data model, defined once in ``twinrank.reference.data``).

The data model and its helpers are data, not algorithm: both twins use the same
NumPy code, so folds and subsamples drawn with one seed are the same queries in
either twin.
"""
from twinrank.reference.data import Dataset, load_mq2008, query_folds, query_rows, subsample_queries

__all__ = ["Dataset", "load_mq2008", "query_folds", "query_rows", "subsample_queries"]

"""Metric names (shared, defined once in ``twinrank.reference.metric_names``).

Parsing ``"ndcg@10"`` is not algorithm: both twins parse names with the same code.
``twinrank.fast.metrics.metric_by_name`` and ``evaluate`` bind the names to the fast
metric functions.
"""
from twinrank.reference.metric_names import Metric, parse_metric

__all__ = ["Metric", "parse_metric"]

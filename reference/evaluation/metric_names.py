r"""Metric names: ``"ndcg@10"``, ``"map"``, ``"p@5"`` as the command line, LightGBM and XGBoost write them.

:func:`parse_metric` turns a name into the name of a per-query metric function and
its arguments (a cutoff ``k``, or pAUC's ``p``); a :class:`Metric` binds them, so it is
called like the function itself. Most metrics give one value per query; the pooled ones
(:data:`POOLED`, ``global_auc`` and ``global_pauc_raw``) give one value for all documents of all
queries together. Which function a name stands for is looked up in a
twin's own table: ``metric_by_name`` and ``evaluate`` of :mod:`twinrank.reference.evaluation.metrics`
and of ``twinrank.fast.evaluation.metrics`` differ only in that table, and both average named
metrics over queries with the same code, here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.conventions import DEFAULT_CONVENTION, check_k

_NAME = re.compile(r"^(?P<family>[a-z][a-z_]*)(?:@(?P<arg>[0-9.eE+-]+))?$")
_FAMILIES = {  # family: (function name, argument name or None, argument required)
    "ndcg": ("ndcg", "k", False), "dcg": ("dcg", "k", False), "map": ("average_precision", "k", False),
    "p": ("precision", "k", True), "precision": ("precision", "k", True), "err": ("err", "k", False),
    "rr": ("reciprocal_rank", "k", False), "mrr": ("reciprocal_rank", "k", False),
    "auc": ("auc", None, False), "pauc": ("pauc", "p", False), "meanndcg": ("mean_ndcg", None, False),
    "rmse": ("rmse_per_query", None, False),
    "global_auc": ("global_auc", None, False), "global_pauc_raw": ("global_pauc_raw", "p", False),
}
POOLED = ("global_auc", "global_pauc_raw")
"""The functions of one value over all documents pooled, not one per query: no ``per_query`` values."""


def parse_metric(name: str) -> tuple[str, dict]:
    """``"ndcg@10"`` -> ``("ndcg", {"k": 10})``: the per-query function's name and its arguments.

    Names: ``ndcg[@k] dcg[@k] map[@k] p@k err[@k] rr[@k] mrr[@k] auc pauc[@p] meanndcg rmse``
    per query, ``global_auc global_pauc_raw[@p]`` over all documents pooled (case-insensitive).
    ``pauc`` and ``global_pauc_raw`` alone mean ``@0.05``.
    """
    m = _NAME.match(str(name).strip().lower())
    if m is None or m["family"] not in _FAMILIES:
        raise ParameterError(f"unknown metric {name!r}; known: {', '.join(sorted(_FAMILIES))} (e.g. ndcg@10, map, p@5)")
    function, arg_name, required = _FAMILIES[m["family"]]
    if m["arg"] is None:
        if required:
            raise ParameterError(f"metric {name!r} needs a cutoff, e.g. {m['family']}@10")
        return function, {}
    if arg_name is None:
        raise ParameterError(f"metric {name!r} takes no @ argument")
    try:
        value = int(m["arg"]) if arg_name == "k" else float(m["arg"])
    except ValueError:
        raise ParameterError(f"metric {name!r}: {m['arg']!r} is not a valid {arg_name}") from None
    if arg_name == "k":
        check_k(value, f"the cutoff of {name!r}")
    elif not 0.0 < value <= 1.0:
        raise ParameterError(f"metric {name!r}: p must be in (0, 1]")
    return function, {arg_name: value}


@dataclass(frozen=True)
class Metric:
    """A metric parsed from its name: call it like a per-query metric function."""

    name: str
    function: Callable = field(repr=False)
    arguments: dict = field(default_factory=dict)

    def __call__(self, y, scores, query_offsets, *, convention=DEFAULT_CONVENTION,
                 doc_ids=None) -> np.ndarray | float:
        return self.function(y, scores, query_offsets, convention=convention, doc_ids=doc_ids, **self.arguments)


def _metric_from(functions: dict, name: str) -> Metric:
    """The :class:`Metric` ``name`` built from a twin's table of per-query functions."""
    function, arguments = parse_metric(name)
    return Metric(name, functions[function], arguments)


def _evaluate(functions: dict, metrics, y, scores, query_offsets, *, convention, doc_ids, per_query) -> dict:
    """:func:`evaluate` on a twin's table of per-query functions (both twins share this)."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(query_offsets) < 2:
        raise ParameterError("there are no queries to evaluate")
    pooled = [name for name in names if parse_metric(name)[0] in POOLED]
    if per_query and pooled:
        raise ParameterError(f"{pooled[0]!r} is one value over the documents of all queries pooled: it has no "
                             "per-query values; evaluate it without per_query (--per-query)")
    out = {}
    for name in names:
        values = _metric_from(functions, name)(y, scores, query_offsets, convention=convention, doc_ids=doc_ids)
        if per_query or name in pooled:
            out[name] = values
        elif parse_metric(name)[0] == "rmse_per_query":
            out[name] = functions["rmse"](y, scores)
        else:
            out[name] = float(np.mean(values))
    return out

"""``twinrank verify``: run every twinned component on both twins, on your data, and compare."""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from twinrank.cli._common import add_reading_options, add_threads_option, reading_options
from twinrank.reference.errors import DataFormatError, ParameterError

DEFAULT_MAX_ROWS = 20_000

DESCRIPTION = """\
Check, on this machine and on your data, that the fast twin computes what the reference
twin (the specification) computes. Every component of the twin registry runs on both
twins from the same inputs, built from the data: metrics under every convention, rank
correlations of two rankings, the query-level normalisation of the features, bins,
histograms, best splits, grown trees, lambdas of every objective, ensemble scores and
whole fitted estimators (LambdaMART, GBRT, RandomForest, IGBRT, McRank) compared on
held-out queries. One line per component: the largest absolute and relative
difference, the tolerance the component is held to, pass or FAIL.

data: LETOR / SVMlight files (--data, .gz ok, a sibling .query group file is used);
several files are pooled, query after query (narrower files padded with zeros, the
format's absent-feature value). Without --data: the bundled MQ2008 (all 784 queries).
Data of more than --max-rows rows is verified on a deterministic subsample of whole
queries, drawn with --seed (the report says so); the reference twin is slow.

exit status: 0 when every component agrees, 1 when any disagrees, 2 on bad input
(the message names the file and line).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check that the two twins agree, on your data",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", nargs="+", action="extend", metavar="FILE",
                   help="LETOR / SVMlight file(s) (default: the bundled MQ2008)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list, one object per component: component, layer, passed, "
                        "max_abs_diff, max_rel_diff, tolerance (the largest absolute difference "
                        "allowed on this data), tolerance_rule, rtol, atol, detail, diagnosis, "
                        "inputs, seconds")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of every random input (scores, gradients, samples) and of the subsample (default 0)")
    p.add_argument("--max-rows", type=int, default=DEFAULT_MAX_ROWS, metavar="N",
                   help=f"verify on whole queries of at most N rows in all (default {DEFAULT_MAX_ROWS:,})")
    p.add_argument("--max-queries", type=int, metavar="N", help="and of at most N queries (default: no limit)")
    p.add_argument("--component", action="append", metavar="NAME",
                   help="run only this component (repeatable; --list shows the names)")
    p.add_argument("--list", action="store_true", help="list the components and their tolerances, and exit")
    add_reading_options(p)
    add_threads_option(p, "the fast twin")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.testing import registry

    if args.list:
        print(_listing(registry))
        return 0
    for name in args.component or []:
        if name not in registry.names():
            raise ParameterError(f"unknown component {name!r}; `twinrank verify --list` shows them")
    for option in ("max_rows", "max_queries"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ParameterError(f"--{option.replace('_', '-')} must be at least 1, got {value}")
    return _verify(args)


def _verify(args) -> int:
    from twinrank.fast.runtime._threads import threads
    from twinrank.testing.agree import run_registry, sample_queries

    data, source = load(args.data, reading_options(args))
    data, sampled = sample_queries(data, max_rows=args.max_rows, max_queries=args.max_queries,
                                   seed=args.seed)
    header = [f"# twinrank verify: {source}", f"# {_shape(data)}; seed {args.seed}"]
    if sampled:
        header.append(f"# verified on {sampled} (--max-rows {args.max_rows:,}"
                      + (f", --max-queries {args.max_queries:,}" if args.max_queries else "") + ")")
    if not args.quiet:
        print("\n".join(header), file=sys.stderr)
    start = time.perf_counter()
    with threads(args.threads):
        results = run_registry(data, seed=args.seed, components=args.component,
                               progress=None if args.quiet else _progress(start))
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps([_record(r) for r in results], indent=1))
    else:
        print(_report(header, results, elapsed))
    return 0 if all(r.passed for r in results) else 1


def load(paths, options=None):
    """The pooled data of ``paths`` (the bundled MQ2008 if none) and a description of it."""
    from twinrank.reference.io.data import Dataset, load_mq2008
    from twinrank.reference.io.letor import read_letor

    if not paths:
        parts = load_mq2008(fold=1)
        return _pooled(Dataset, parts), "the bundled MQ2008 (S1-S5, all 784 queries)"
    parts = [read_letor(path, **(options or {})) for path in paths]
    for path, part in zip(paths, parts):
        if part.n_features == 0:
            raise DataFormatError(path, None, "no row has a feature")
    return _pooled(Dataset, parts), ", ".join(paths)


def _pooled(Dataset, parts):
    """The data sets one after the other, narrower ones padded with zeros (absent features)."""
    if len(parts) == 1:
        return parts[0]
    width = max(p.n_features for p in parts)
    X = np.concatenate([np.pad(p.X, ((0, 0), (0, width - p.n_features))) for p in parts])
    comments = None
    if all(p.comments is not None for p in parts):
        comments = np.concatenate([p.comments for p in parts])
    return Dataset(X, np.concatenate([p.y for p in parts]),
                   np.r_[0, np.cumsum(np.concatenate([p.query_sizes for p in parts]))],
                   comments=comments)


def _shape(data) -> str:
    labels = ", ".join(f"{v:g}" for v in np.unique(data.y)[:8])
    more = ", ..." if len(np.unique(data.y)) > 8 else ""
    return (f"{data.n_queries:,} queries, {data.n_rows:,} rows, {data.n_features} features, "
            f"labels {labels}{more}")


def _progress(start):
    def progress(i, n, result):
        verdict = "pass" if result.passed else "FAIL"
        print(f"[{i:>2}/{n}] {result.component:<40} {verdict}  {time.perf_counter() - start:6.1f} s",
              file=sys.stderr, flush=True)
    return progress


WIDTH = 40


def _report(header: list, results: list, elapsed: float) -> str:
    columns = (f"{'component':<{WIDTH}} {'max abs':>9} {'max rel':>9}  {'tolerance':<34} result")
    lines = header + [columns] + [r.line(WIDTH) for r in results]
    failed = [r.component for r in results if not r.passed]
    lines.append(f"# {len(results)} components: {len(results) - len(failed)} agree, {len(failed)} disagree"
                 + (f" ({', '.join(failed)})" if failed else "") + f"; {elapsed:.1f} s")
    notes = [f"#   {r.component}: {r.inputs}" for r in results if r.layer == "whole models" and r.inputs]
    if notes:
        lines += ["# whole models (fitted on the training queries, scored on the test queries):"] + notes
    return "\n".join(lines)


def _record(result) -> dict:
    """The JSON object of one component (``tolerance``: the largest absolute difference allowed)."""
    from twinrank.testing.registry import Tolerance

    d = result.to_dict()
    rule = Tolerance(**result.tolerance)
    return {"component": d["component"], "layer": d["layer"], "passed": d["passed"],
            "max_abs_diff": d["max_abs_diff"], "max_rel_diff": d["max_rel_diff"],
            "tolerance": d["allowed_abs_diff"], "tolerance_rule": rule.describe(),
            "tolerance_name": d["tolerance_name"], "rtol": rule.rtol, "atol": rule.atol,
            "atol_scaled": rule.scaled, "n_values": d["n_values"], "detail": d["detail"],
            "diagnosis": d["diagnosis"],
            "function": f"{d['module']}.{d['function']}", "inputs": d["inputs"], "seconds": d["seconds"]}


def _listing(registry) -> str:
    lines = [f"{'component':<{WIDTH}} {'layer':<14} {'reference / fast function':<34} tolerance"]
    for row in registry.REGISTRY:
        lines.append(f"{row.name:<{WIDTH}} {row.layer:<14} {row.module + '.' + row.function:<34} "
                     f"{row.tol.describe()}")
    return "\n".join(lines)

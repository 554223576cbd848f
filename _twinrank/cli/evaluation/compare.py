"""``twinrank compare``: is ranker A better than ranker B on these queries? Paired significance tests.

Both score files are evaluated per query (``--metric``, ``--convention``), then the
paired randomization test (Smucker, Allan & Carterette 2007; ``--permutations`` sign
flips, seeded) and the paired t-test with its Student-t interval compare them:
:mod:`twinrank.reference.evaluation.stats`.
"""
from __future__ import annotations

import argparse
import json

from twinrank.cli._common import add_engine_option, check_input, engine_module, require_queries
from twinrank.cli.evaluation.evaluate import _doc_ids
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import CONVENTIONS, DEFAULT_CONVENTION, parse_metric

DESCRIPTION = """\
Compare two score files on the same LETOR data: each system's mean metric, the mean
difference A - B, the two-sided randomization-test p-value (sign flips of the per-query
differences) and the paired t-test's t, p and confidence interval. A small p says the
difference is unlikely under "A and B are interchangeable"; it does not say the
difference is large.

exit status: 0 on success, 2 on bad input (the message names the file and line).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="paired significance tests of two score files (randomization, t-test)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="LETOR / SVMlight file with labels and qid: (.gz ok)")
    p.add_argument("--scores", required=True, action="append", metavar="FILE",
                   help="score file (one number per line per data row); give it twice: A, then B")
    p.add_argument("--metric", default="ndcg@10", help="the per-query metric compared (default: ndcg@10)")
    p.add_argument("--convention", choices=sorted(CONVENTIONS), default=DEFAULT_CONVENTION,
                   help=f"evaluation convention (default: {DEFAULT_CONVENTION})")
    p.add_argument("--permutations", type=int, default=10_000,
                   help="sign-flip permutations of the randomization test (default: 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the permutations (default: 0)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the t interval of the mean difference (default: 0.95)")
    p.add_argument("--json", action="store_true", help="print JSON with keys mean_a, mean_b, difference, "
                                                       "randomization_p, t_statistic, t_p, df, ci_low, ci_high")
    add_engine_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.reference.io.letor import read_letor, read_scores

    if len(args.scores) != 2:
        raise ParameterError(f"--scores: give exactly two score files (A, then B), got {len(args.scores)}")
    parse_metric(args.metric)
    for path, option in ((args.data, "--data"), *((s, "--scores") for s in args.scores)):
        check_input(path, option)
    data = read_letor(args.data)
    require_queries(data, args.data, "--data", f"{args.metric} is computed per query")
    metrics, stats = engine_module(args.engine, "metrics"), engine_module(args.engine, "stats")
    doc_ids = _doc_ids(metrics, args, data)
    per_query = [metrics.evaluate(args.metric, data.y, read_scores(path, n_rows=data.n_rows), data.query_offsets,
                                  convention=args.convention, doc_ids=doc_ids, per_query=True)[args.metric]
                 for path in args.scores]
    result = stats.compare(*per_query, n_permutations=args.permutations, seed=args.seed,
                           confidence=args.confidence)
    print(json.dumps(result.as_dict()) if args.json else _render(result, args))
    return 0


def _render(result, args) -> str:
    a, b = args.scores
    t = "undefined (the differences have no variance)" if result.t_p != result.t_p else (
        f"t = {result.t_statistic:.4f}, df = {result.df}, p = {result.t_p:.4g}")
    return "\n".join([
        f"# {result.n_queries} queries, {args.metric}, convention {args.convention}, engine {args.engine}",
        f"A  {result.mean_a:.6f}  {a}",
        f"B  {result.mean_b:.6f}  {b}",
        f"A - B  {result.difference:+.6f}  ({result.confidence:.0%} t interval "
        f"[{result.ci_low:+.6f}, {result.ci_high:+.6f}])",
        f"randomization test: p = {result.randomization_p:.4g} ({result.n_permutations} permutations, two-sided)",
        f"paired t-test: {t}",
    ])

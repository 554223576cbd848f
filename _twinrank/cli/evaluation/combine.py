"""``twinrank combine``: the exact best linear combination of two score files (Wu et al. 2010)."""
from __future__ import annotations

import argparse
import json

from twinrank.cli._common import add_engine_option, check_input, engine_module, require_queries
from twinrank.reference.combination._combine_setup import COMBINE_TIES, FORMS, check_range, metric_cutoff
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import CONVENTIONS, DEFAULT_CONVENTION

DESCRIPTION = """\
Find the alpha that maximises the mean NDCG (or DCG) of two rankers' combined scores,
exactly: the combined score of each document is a line in alpha, the ranking of a query
changes only where two lines cross, so every crossing inside the range is visited in
order (Wu, Burges, Svore & Gao 2010, Sec. 4). The answer is the midpoint of the best
interval between crossings, and the metric there.

  --form convex     (1 - alpha) * A + alpha * B   (default range 0,1)
  --form boosting   A + alpha * B                 (e.g. --alpha-range 0.1,5;
                                                   a negative LO as --alpha-range=-1,2)

Tied documents count with the expected metric over random orders of the tie
(--ties expected, the default) or in file order (--ties stable).

output: "alpha <a>" and "<metric> <value>"; --json prints {"alpha": a, "value": v}, and with
--path also "breakpoints", "values" (one per interval) and "values_at_breakpoints".
exit status: 0 on success, 2 on bad input (the message names the file).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("combine", help="exact best linear combination of two score files",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="LETOR / SVMlight file with labels and qid: (.gz ok)")
    p.add_argument("--scores", action="append", required=True, metavar="FILE",
                   help="score file, one number per data row; give exactly two: --scores A --scores B")
    p.add_argument("--form", choices=FORMS, default="convex", help="how alpha combines them (default: convex)")
    p.add_argument("--alpha-range", default="0,1", metavar="LO,HI", help="open range of alpha (default: 0,1)")
    p.add_argument("--metric", default="ndcg@10", help="ndcg[@k] or dcg[@k] (default: ndcg@10)")
    p.add_argument("--convention", choices=sorted(CONVENTIONS), default=DEFAULT_CONVENTION,
                   help=f"gains, discounts and edge cases (default: {DEFAULT_CONVENTION}; ties by --ties)")
    p.add_argument("--ties", choices=COMBINE_TIES, default="expected", help="tie rule (default: expected)")
    p.add_argument("--query-file", help="group file of query sizes (default: <data>.query if present)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--path", action="store_true", help="also print the piecewise-constant path")
    p.add_argument("--threads", type=int, help="threads of the fast engine (default: all cores)")
    add_engine_option(p)
    p.set_defaults(run=run)


def alpha_range(text: str) -> tuple[float, float]:
    """``"0.1,5"`` -> (0.1, 5.0), checked (finite, lo < hi)."""
    parts = text.split(",")
    try:
        values = [float(v) for v in parts]
    except ValueError:
        values = []
    if len(values) != 2:
        raise ParameterError(f"--alpha-range {text!r}: expected two numbers LO,HI such as 0,1")
    try:
        return check_range(values)
    except ParameterError as e:
        raise ParameterError(f"--alpha-range {text!r}: {e}") from None


def run(args) -> int:
    from twinrank.fast.runtime._threads import threads
    from twinrank.reference.io.letor import read_letor, read_scores

    if len(args.scores) != 2:
        raise ParameterError(f"give exactly two score files (--scores A --scores B), got {len(args.scores)}")
    lo_hi = alpha_range(args.alpha_range)
    metric_cutoff(args.metric)
    for path, option in ((args.data, "--data"), *((s, "--scores") for s in args.scores),
                         (args.query_file, "--query-file")):
        check_input(path, option)
    data = read_letor(args.data, query_file=args.query_file)
    require_queries(data, args.data, "--data", "the metric is computed per query")
    a, b = (read_scores(path, n_rows=data.n_rows) for path in args.scores)
    combine = engine_module(args.engine, "combine")
    with threads(args.threads):
        result = combine.optimal_combination(a, b, data.y, data.query_offsets, form=args.form, alpha_range=lo_hi,
                                             metric=args.metric, convention=args.convention, ties=args.ties,
                                             return_path=args.path)
    print(_render(result, args))
    return 0


def _render(result, args) -> str:
    if args.json:
        out = {"alpha": result.alpha, "value": result.value}
        if args.path:
            out.update({name: getattr(result.path, name).tolist() for name in result.path._fields})
        return json.dumps(out)
    lines = [f"alpha {result.alpha!r}", f"{args.metric} {result.value!r}"]
    if args.path:
        lines.append("# alpha_from alpha_to value (then: breakpoint value_at_breakpoint)")
        p = result.path
        lo, hi = alpha_range(args.alpha_range)
        edges = [lo, *p.breakpoints.tolist(), hi]
        lines += [f"{edges[t]!r} {edges[t + 1]!r} {v!r}" for t, v in enumerate(p.values.tolist())]
        lines += [f"{x!r} {v!r}" for x, v in zip(p.breakpoints.tolist(), p.values_at_breakpoints.tolist())]
    return "\n".join(lines)

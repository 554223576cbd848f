"""``twinrank evaluate``: ranking metrics of a score file against LETOR data, under a convention."""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from twinrank.cli._common import (
    add_engine_option,
    add_reading_options,
    add_threads_option,
    check_input,
    engine_module,
    reading_options,
    require_queries,
)
from twinrank.reference.errors import DataFormatError
from twinrank.reference.evaluation.metrics import CONVENTIONS, DEFAULT_CONVENTION, parse_metric

DEFAULT_METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map", "p@10", "err@10", "mrr"]
DROPS = ["single-label"]  # --drop: the queries left out before evaluating

DESCRIPTION = """\
Evaluate scores against the labels of a LETOR / SVMlight file: one score per line in
--scores, aligned with the rows of --data. Documents are ranked by descending score
inside each query and each metric is averaged over queries (every query counts once).

metrics (repeat --metric or give a comma list; default: {default}):
  ndcg[@k] dcg[@k]   (normalised) discounted cumulative gain of the top k (all if no @k)
  map[@k]            mean average precision
  p@k                precision at k
  err[@k]            expected reciprocal rank (Chapelle et al. 2009)
  rr[@k], mrr[@k]    reciprocal rank of the first relevant document
  auc, pauc[@p]      per-query ROC area; partial area over FPR in [0, p] (McClish), p=0.05
  global_auc         one ROC area over all documents pooled (a tie counts 1/2; Mohan 2010)
  global_pauc_raw[@p]  its raw partial area over FPR in [0, p], at most p (p=0.05)
  meanndcg           LETOR's MeanNDCG: mean of NDCG@1..NDCG@n of each query
  rmse               root mean squared error of the scores against the labels, over rows

conventions (--convention, default {convention}): how ties, gains and edge cases are counted
  lightgbm, xgboost  gain 2^l-1, discount 1/log2(1+r), a query without relevant document
                     scores 1 (ndcg, meanndcg, map, rr, auc, pauc), ties keep file order
  ranklib            as lightgbm, but such a query scores 0, relevant = label > 0
  letor              LETOR 4.0 Eval-Score-4.0.pl: gains 0/1/3, discount 1 at ranks 1-2 then
                     1/log2(r), NDCG@k = 0 for a query of fewer than k documents (so on
                     short queries ndcg@10 can be far below ndcg@5); no relevant document: 0;
                     grades 0-2 only (its gain table): other labels are refused
  mslr               the MSLR-WEB script: as letor for grades 0-4 (gains 2^l-1); relevant for
                     p@k and map = label >= 2
  mohan              as lightgbm, but a query without relevant document scores 1/2 (Mohan 2010)
  trec               trec_eval: gain = label, ties by '#docid = ...' comment, descending;
                     no relevant document: 0
  dcg, p@k and err have no best value to divide by: a query without relevant document
  scores 0 on them under every convention. The output names the convention.

Every metric but rmse is computed per query: a file without query ids (no qid: column,
no group file) is refused unless --single-query makes all its rows one query.

--drop single-label leaves out the queries whose documents all have the same label
(queries of one document too) before evaluating, as Wu, Burges, Svore & Gao (2010,
Sec. 5.1) do: every ranking of such a query scores the same. Stderr says how many.

exit status: 0 on success, 2 on bad input (the message names the file and line).
"""


def add_parser(sub) -> None:
    p = sub.add_parser(
        "evaluate", help="ranking metrics (NDCG, MAP, ERR, ...) of a score file",
        description=DESCRIPTION.format(default=",".join(DEFAULT_METRICS), convention=DEFAULT_CONVENTION),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="LETOR / SVMlight file with labels and qid: (.gz ok)")
    p.add_argument("--scores", required=True, help="score file: one number per line, one line per data row")
    p.add_argument("--metric", action="append", metavar="NAME[,NAME...]",
                   help="metric(s) to compute, e.g. ndcg@10 or map,p@5 (repeatable)")
    p.add_argument("--convention", choices=sorted(CONVENTIONS), default=DEFAULT_CONVENTION,
                   help=f"evaluation convention (default: {DEFAULT_CONVENTION})")
    p.add_argument("--query-file", help="group file of query sizes (default: <data>.query if present)")
    p.add_argument("--single-query", action="store_true",
                   help="accept a file without query ids (no qid:, no group file) as one query of all "
                        "rows (default: refused for every metric but rmse)")
    p.add_argument("--drop", choices=DROPS,
                   help="single-label: leave out the queries whose documents all have one label, before "
                        "evaluating; stderr says how many (default: every query counts)")
    p.add_argument("--per-query", action="store_true", help="print every query's values, not only the means")
    p.add_argument("--json", action="store_true",
                   help='print JSON: {"convention": "lightgbm", "ndcg@10": 0.5, ...}; with --per-query '
                        '{"convention": ..., "qids": [...], "ndcg@10": [...], ...}; a value that is '
                        'not a finite number is null')
    add_reading_options(p)
    add_threads_option(p)
    add_engine_option(p)
    p.set_defaults(run=run)


def metric_names(values) -> list:
    """The metric names of the repeated, comma-separated ``--metric`` options, checked."""
    names = [n.strip() for v in (values or [",".join(DEFAULT_METRICS)]) for n in v.split(",") if n.strip()]
    for name in names:
        parse_metric(name)
    return names


def run(args) -> int:
    from twinrank.fast.runtime._threads import threads
    from twinrank.reference.io.letor import read_letor, read_scores

    names = metric_names(args.metric)
    for path, option in ((args.data, "--data"), (args.scores, "--scores"), (args.query_file, "--query-file")):
        check_input(path, option)
    data = read_letor(args.data, query_file=args.query_file, **reading_options(args))
    by_query = [n for n in names if parse_metric(n)[0] != "rmse_per_query"]
    if by_query and not args.single_query:
        require_queries(data, args.data, "--data", f"{by_query[0]} is computed per query "
                        "(--single-query makes all rows one query)")
    scores = read_scores(args.scores, n_rows=data.n_rows)
    dropped = 0
    if args.drop == "single-label":
        data, scores, dropped = _drop_single_label(data, scores, args.data)
    metrics = engine_module(args.engine, "metrics")
    doc_ids = _doc_ids(metrics, args, data)
    with threads(args.threads):
        values = metrics.evaluate(names, data.y, scores, data.query_offsets, convention=args.convention,
                                  doc_ids=doc_ids, per_query=args.per_query)
    qids = [str(q) for q in (data.qids if data.qids is not None else range(data.n_queries))]
    print(_render(values, qids, args, data, dropped))
    return 0


def _drop_single_label(data, scores, path):
    """The data and scores without the single-label queries, and how many those were (said on stderr)."""
    from twinrank.reference.io.data import query_rows, single_label_queries

    kept = np.flatnonzero(~single_label_queries(data.y, data.query_offsets))  # (n_kept,)
    dropped = data.n_queries - len(kept)
    print(f"dropped {dropped} of {data.n_queries} queries whose documents all have one label "
          "(--drop single-label)", file=sys.stderr)
    if len(kept) == 0:
        raise DataFormatError(path, None, "every query has documents of one label only: nothing is left to "
                                          "evaluate after --drop single-label")
    return data.take_queries(kept), scores[query_rows(data.query_offsets, kept)], dropped


def _doc_ids(metrics, args, data):
    """Doc ids from the ``#docid = X`` comments, when the convention breaks ties by them."""
    if metrics.get_convention(args.convention).ties != "trec":
        return None
    if data.comments is None:
        raise DataFormatError(args.data, None, f"the {args.convention} convention ranks tied scores by "
                                               "document id, but no row has a '# docid = ...' comment")
    try:
        return metrics.doc_ids_from_comments(data.comments)
    except ValueError as e:
        raise DataFormatError(args.data, None, str(e)) from None


def _json_numbers(values):
    """A metric's value (or per-query values) for JSON: non-finite numbers as None (``null``)."""
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(array), array, None).tolist()


def _render(values: dict, qids: list, args, data, dropped: int) -> str:
    if args.json:  # strict JSON: a value that is not a finite number is null, never NaN
        if args.per_query:
            return json.dumps({"convention": args.convention, "qids": qids,
                               **{k: _json_numbers(v) for k, v in values.items()}}, allow_nan=False)
        return json.dumps({"convention": args.convention,
                           **{k: _json_numbers(v) for k, v in values.items()}}, allow_nan=False)
    header = f"# {data.n_queries} queries, {data.n_rows} rows, convention {args.convention}, engine {args.engine}"
    if args.drop == "single-label":
        header += f"; {dropped} single-label queries dropped"
    if not args.per_query:
        width = max(len(n) for n in values)
        return "\n".join([header] + [f"{name:<{width}}  {value:.6f}" for name, value in values.items()])
    columns = ["qid", *values]
    rows = [[q, *(f"{values[n][i]:.6f}" for n in values)] for i, q in enumerate(qids)]
    widths = [max(len(str(c)), *(len(r[j]) for r in rows)) for j, c in enumerate(columns)]
    lines = [header, "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths))]
    lines += ["  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)

"""``twinrank predict``: score a LETOR file with a saved model, one score per line."""
from __future__ import annotations

import sys

from ._cli_common import add_engine_option, engine_module


def add_parser(sub) -> None:
    p = sub.add_parser("predict", help="score data with a saved model",
                       description="Score LETOR data with a twinrank model; writes one score per line, "
                                   "aligned with the data rows.")
    p.add_argument("--model", required=True, help="model file (JSON, from either engine)")
    p.add_argument("--data", required=True, help="data to score (LETOR format, .gz ok)")
    p.add_argument("--output", required=True, help="scores file to write (atomically)")
    p.add_argument("--threads", type=int, help="threads of the fast engine (default: all cores)")
    add_engine_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.reference.model import McRankModel, load_model
    from twinrank.reference.letor import read_letor, write_scores

    from ._threads import threads

    model = load_model(args.model)  # an Ensemble, or an McRank model (its own document)
    data = read_letor(args.data, n_features=model.n_features)
    if isinstance(model, McRankModel):
        predict = engine_module(args.engine, "classification").expected_relevance
    else:
        predict = engine_module(args.engine, "predict").predict_ensemble
    with threads(args.threads):
        scores = predict(model, data.X)
    write_scores(args.output, scores)
    print(f"scored {data.n_rows} rows of {data.n_queries} queries; scores written to {args.output}",
          file=sys.stderr)
    return 0

"""``twinrank cost``: the mean cost of scoring a data file with a model, per tree, with early exits.

The cost (:mod:`twinrank.reference.analysis.cost`) of a document scored by $t$ trees is
``tree_cost * t`` plus the costs of the features those trees use, each paid once;
``--json`` prints ``mean_cost``, ``mean_feature_cost``, ``cost_per_tree`` (the
cumulative mean after each tree) and the exit trees' counts. The exit flags are
shared with ``twinrank predict``. A model of several ensembles (McRank, cumulative
regression, a BL-MART bag) scores every document with all their trees, in order, and
takes no early exits.
"""
from __future__ import annotations

import json
import sys

import numpy as np

from twinrank.cli._common import (
    add_accept_edited_option,
    add_engine_option,
    check_input,
    engine_module,
    read_model,
)
from twinrank.reference.errors import ParameterError


def add_exit_options(p) -> None:
    """``--exit-every X --exit-fraction Y --exit-scope --exited`` (early exits; none by default)."""
    p.add_argument("--exit-every", type=int, metavar="X",
                   help="early exits: every X trees the bottom --exit-fraction of the active documents "
                        "stop (default: no exit)")
    p.add_argument("--exit-fraction", type=float, metavar="Y",
                   help="the share of active documents that exit at each checkpoint, in [0, 1) "
                        "(default with --exit-every: 0.2)")
    p.add_argument("--exit-scope", choices=("query", "global"), default="query",
                   help="the bottom of each query, or of all documents (default: query)")
    p.add_argument("--exited", choices=("below", "keep"), default="below",
                   help="exited documents rank below the survivors, or keep their partial score "
                        "(default: below)")


def exits_from_args(args):
    """The :class:`~twinrank.reference.costs.exits.EarlyExit` of the flags, or None."""
    from twinrank.reference.costs.exits import EarlyExit

    if args.exit_every is None:
        if args.exit_fraction is not None:
            raise ParameterError("--exit-fraction needs --exit-every (how many trees between exits)")
        return None
    fraction = 0.2 if args.exit_fraction is None else args.exit_fraction
    return EarlyExit(every=args.exit_every, fraction=fraction, scope=args.exit_scope, exited=args.exited)


def add_parser(sub) -> None:
    p = sub.add_parser("cost", help="the mean feature and tree cost of scoring data with a model",
                       description="The mean cost per document of scoring --data with --model: each "
                                   "tree costs --tree-cost, each feature its cost once per document "
                                   "(free after first use); with early exits, documents that exit "
                                   "skip the remaining trees.")
    p.add_argument("--model", required=True, help="model file (JSON, from either engine)")
    p.add_argument("--data", required=True, help="data to score (LETOR format, .gz ok)")
    p.add_argument("--feature-costs", metavar="FILE",
                   help="'feature cost' lines, one per feature (default: the costs the model stores; "
                        "a model without costs: every feature costs 0, only the trees count)")
    p.add_argument("--tree-cost", type=float, default=1.0,
                   help="the cost of evaluating one tree for one document (default: 1)")
    add_exit_options(p)
    p.add_argument("--json", action="store_true", help="print JSON (mean_cost, cost_per_tree, ...)")
    add_engine_option(p)
    add_accept_edited_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.reference.io.letor import read_letor

    check_input(args.model, "--model")
    check_input(args.data, "--data")
    if args.feature_costs is not None:
        check_input(args.feature_costs, "--feature-costs")
    exits = exits_from_args(args)
    model = read_model(args)
    if exits is not None and not hasattr(model, "trees"):
        kind = getattr(model, "described", "a BL-MART bag")
        raise ParameterError(f"{args.model}: {kind} ({model.algorithm}) scores every document with all the "
                             "trees of its ensembles, combined after the last: no early exits")
    data = read_letor(args.data, n_features=model.n_features)
    costs = args.feature_costs
    if costs is None and (getattr(model, "params", None) or {}).get("feature_costs") is None:
        print("the model stores no feature costs and --feature-costs is not given: features cost 0",
              file=sys.stderr)
        costs = np.zeros(model.n_features)
    if hasattr(model, "members"):
        result = bag_cost(model, data.n_rows, costs, args.tree_cost)
    else:
        result = engine_module(args.engine, "cost").model_cost(model, data, costs,
                                                               tree_cost=args.tree_cost, exits=exits)
    exited = np.bincount(result.exit_tree, minlength=len(result.cost_per_tree) + 1)
    report = {"mean_cost": result.mean_cost, "mean_feature_cost": result.mean_feature_cost,
              "cost_per_tree": result.cost_per_tree.tolist(), "n_documents": data.n_rows,
              "exits": {str(t): int(n) for t, n in enumerate(exited) if n}}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"mean cost {result.mean_cost:.6g} per document ({result.mean_feature_cost:.6g} of it "
              f"features) over {data.n_rows} documents and {len(result.cost_per_tree)} trees")
        print("trees  cost")
        for t, c in enumerate(result.cost_per_tree, start=1):
            print(f"{t:5d}  {c:.6g}")
    return 0


def bag_cost(model, n_rows: int, feature_costs, tree_cost: float):
    """The :class:`~twinrank.reference.costs.cumulative.ModelCost` of a BL-MART bag on ``n_rows``
    documents: every member's trees (each prior model's first), member after member, score every
    document, and each feature is paid once over them all."""
    from twinrank.reference.costs.cumulative import cost_summary, costs_of, cumulative_cost
    from twinrank.reference.costs.exits import flat_model

    trees = [tree for member in model.members for tree in flat_model(member)[0]]
    C, new = cumulative_cost(trees, costs_of(model, feature_costs), tree_cost)
    return cost_summary(C, new, np.full(n_rows, len(trees), dtype=np.int64), tree_cost)

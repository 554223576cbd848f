"""``twinrank inspect``: what a model file holds, which features its trees split on, and the trees.

Feature importance is read off the trees, as LightGBM's ``split`` and ``gain``
importances are: for each feature, the number of internal nodes splitting on it and
the sum of those nodes' gains (the loss reduction the grower recorded, before
shrinkage and tree weights), over every tree of the model, its prior model (IGBRT's
forest), every classifier of McRank and cumulative regression and every member of a
BL-MART bag. Features are numbered as in the data file (1-based): ``fK`` is feature K, column
K - 1 of ``X`` (a file read with ``--zero-based`` has its id 0 as ``f1``); a model imported from
LightGBM (``twinrank import``) that carries its own ``feature_names`` is shown with those.
"""
from __future__ import annotations

import argparse
import json
import textwrap

import numpy as np

from twinrank.cli._common import add_accept_edited_option, check_input, read_model
from twinrank.reference.trees.explain import feature_importances

DESCRIPTION = __doc__.split("\n", 1)[1].strip()


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="summary, feature importance and trees of a model file",
                       description="Print a model file's summary (algorithm, trees, leaves, parameters, "
                                   "best iteration, metric history) and its feature importance; "
                                   "--dump adds every tree, one node per line.\n\n" + DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model file (JSON, from either engine)")
    p.add_argument("--top", type=int, metavar="N", help="show only the N features of largest gain (default: all used)")
    p.add_argument("--dump", action="store_true", help="also print every tree, one node per line")
    p.add_argument("--json", action="store_true",
                   help='print JSON: {"summary": {...}, "importance": [{"feature", "splits", "gain"}, ...]} '
                        '(and "name" for a model imported with its feature names)')
    add_accept_edited_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    check_input(args.model, "--model")
    model = read_model(args)
    names = feature_names(model)
    table = importance(model, names)
    n_used, total_gain = len(table), sum(row["gain"] for row in table)
    if args.top is not None:
        table = table[:args.top]
    if args.json:
        print(json.dumps({"summary": summary(model), "importance": table}))
        return 0
    lines = [f"{k:<16}{v}" for k, v in summary_lines(model, args.model)]
    lines += ["", *importance_lines(table, model.n_features, n_used, total_gain)]
    if args.dump:
        for name, ensemble in ensembles(model):
            lines += ["", *dump_lines(ensemble, name, names)]
    print("\n".join(lines))
    return 0


def feature_names(model) -> list | None:
    """The feature names a model imported from LightGBM carries (``params["feature_names"]``, one per
    column of ``X``; the importer keeps a file's own names, not LightGBM's ``Column_j`` defaults), else
    None: features are then ``fK``, 1-based."""
    return (getattr(model, "params", None) or {}).get("feature_names")


def ensembles(model) -> list:
    """``[(name, Ensemble)]``: every ensemble of the model, each prior model before the ensemble it
    starts (IGBRT's forest), McRank's and cumulative regression's classifiers, a bag's members."""
    if hasattr(model, "trees"):
        prior = [] if model.init_model is None else [
            (f"prior model, {n}".rstrip(", "), e) for n, e in ensembles(model.init_model)]
        return prior + [("", model)]
    return [(f"{part} {n}".strip(), e) for part, top in _parts(model) for n, e in ensembles(top)]


def _parts(model) -> list:
    """``[(name, Ensemble)]``: the top-level ensembles of a model made of several (McRank's
    classifiers, a bag's members); an Ensemble is one part, unnamed."""
    if hasattr(model, "classifiers"):
        return [(f"classifier {i + 1} (y > {model.labels[i]:g})", c) for i, c in enumerate(model.classifiers)]
    if hasattr(model, "members"):
        return [(f"member {m + 1}", member) for m, member in enumerate(model.members)]
    return [("", model)]


def importance(model, names=None) -> list:
    """``[{"feature": id, "splits": n, "gain": g}]`` of the features split on, largest gain first.

    ``feature`` is 1-based, as in the data file; ``splits`` counts the internal nodes
    on the feature and ``gain`` sums their gains, over every tree of every ensemble; with
    ``names`` (an imported model's feature names), each row also has its ``"name"``.
    """
    parts = [e for _, e in ensembles(model)]
    splits = sum(feature_importances(e, "split") for e in parts)  # (n_features,)
    gain = sum(feature_importances(e, "gain") for e in parts)  # (n_features,)
    used = np.flatnonzero(splits)
    order = used[np.lexsort((used, -gain[used]))]  # largest gain first, then lowest id
    return [{"feature": int(f) + 1, "splits": int(splits[f]), "gain": float(gain[f]),
             **({"name": names[f]} if names else {})} for f in order]


def importance_lines(table: list, n_features: int, n_used: int, total_gain: float) -> list:
    """The importance table as text; ``share`` is the feature's part of the gain of every split; rows
    with a ``name`` (an imported model's feature names) get a column of it."""
    total = total_gain or 1.0
    shown = "" if len(table) == n_used else f", the top {len(table)} shown"
    named = any("name" in r for r in table)
    lines = [f"feature importance ({n_used} of {n_features} features split on{shown}; ids as in the data file)",
             f"{'feature':>8}  {'splits':>7}  {'gain':>12}  {'share':>6}" + ("  name" if named else "")]
    lines += [f"{r['feature']:>8}  {r['splits']:>7}  {r['gain']:>12.6g}  {r['gain'] / total:>6.1%}"
              + (f"  {r['name']}" if named else "") for r in table]
    return lines


def summary(model) -> dict:
    """The model's facts as a JSON-ready dict."""
    parts = ensembles(model)
    trees = [t for _, e in parts for t in e.trees]
    leaves = [t.n_leaves for t in trees] or [0]
    tops = [e for _, e in _parts(model)]
    strategies = sorted({(e.missing or {}).get("strategy") for e in tops} - {None})
    return {"algorithm": model.algorithm, "n_features": int(model.n_features),
            "n_trees": len(trees), "leaves": {"min": min(leaves), "mean": float(np.mean(leaves)), "max": max(leaves)},
            "best_iteration": model.best_iteration,
            "prior_trees": sum(len(e.trees) for _, e in parts[:-1]) or None if hasattr(model, "trees") else None,
            "classifiers": len(getattr(model, "classifiers", [])) or None,
            "members": len(getattr(model, "members", [])) or None,
            "combine": getattr(model, "combine", None),
            "missing": ", ".join(strategies) or None,
            "history": {k: history_summary(k, v) for k, v in (getattr(model, "history", None) or {}).items() if v},
            "params": model.params}


def history_summary(key: str, values: list) -> dict:
    """``{"n", "last", "best"}`` of one history series.

    ``best`` is the largest value of a metric (``valid:ndcg@10``: every metric is larger
    when better), the smallest of a loss (``valid_loss``), absent for other numbers (DART's
    ``dropped`` and ``size``, the line search's ``alpha``); a series of words (DART's
    ``branch``) gives ``{"n", "last", "counts"}``, how often each word occurs.
    """
    found = {"n": len(values), "last": values[-1]}
    if any(isinstance(v, str) for v in values):
        found["counts"] = {str(v): values.count(v) for v in sorted(set(map(str, values)))}
    elif ":" in key:
        found["best"] = max(values)
    elif key.endswith("_loss"):
        found["best"] = min(values)
    return found


BRANCHES = {  # what a DART / X-DART iteration did, by the word its history records (the order shown)
    "add": "added a tree, none dropped",
    "normalize": "kept the dropped trees, rescaled by DART's normalisation (k/(k + learning_rate)), "
                 "and added a tree",
    "prune": "pruned the dropped trees (X-DART) and added a tree",
}


def _branch_text(h: dict) -> str:
    """``"212 iterations: 1 added a tree, none dropped; 160 kept the dropped trees, ..."``."""
    done = [f"{h['counts'][word]} {what}" for word, what in BRANCHES.items() if word in h["counts"]]
    done += [f"{n} {word}" for word, n in h["counts"].items() if word not in BRANCHES]
    return f"{h['n']} iterations: " + "; ".join(done)


def _history_text(h: dict) -> str:
    if "counts" in h:
        return f"{h['n']} values, last {h['last']}; " + ", ".join(f"{w} {n}" for w, n in h["counts"].items())
    best = f", best {_number(h['best'])}" if "best" in h else ""
    return f"{h['n']} values, last {_number(h['last'])}{best}"


def _number(value) -> str:
    """A history value as text: a count as it is, a real number to six decimals."""
    return str(value) if isinstance(value, int) else f"{value:.6f}"


def summary_lines(model, path) -> list:
    s = summary(model)
    leaves = s["leaves"]
    rows = [("model", path), ("algorithm", s["algorithm"]), ("features", s["n_features"]),
            ("trees", f"{s['n_trees']} (leaves per tree: min {leaves['min']}, mean {leaves['mean']:.1f}, "
                      f"max {leaves['max']})")]
    if s["prior_trees"]:
        rows.append(("prior model", f"{s['prior_trees']} of the trees (the starting forest); "
                                    f"{s['n_trees'] - s['prior_trees']} boosted on it"))
    if s["classifiers"]:
        rows.append(("classifiers", f"{s['classifiers']} (labels {', '.join(f'{v:g}' for v in model.labels)})"))
    if s["members"]:
        rows.append(("members", f"{s['members']}, scores combined per query by {s['combine']}"))
    if hasattr(model, "base_score"):
        rows.append(("base score", f"{model.base_score:g}"))
    if s["best_iteration"] is not None:
        rows.append(("best iteration", s["best_iteration"]))
    if s["missing"]:
        rows.append(("missing values", s["missing"]))
    for key, h in s["history"].items():
        text = _branch_text(h) if key == "branch" and "counts" in h else _history_text(h)
        rows += [(key if i == 0 else "", line) for i, line in enumerate(textwrap.wrap(text, 84))]
    shown = {k: v for k, v in s["params"].items() if v is not None}
    text = " ".join(f"{k}={v}" for k, v in shown.items()) or "(none stored)"
    rows += [("parameters" if i == 0 else "", line) for i, line in enumerate(textwrap.wrap(text, 84))]
    return rows


def dump_lines(ensemble, name: str = "", names=None) -> list:
    """Every tree of ``ensemble``, one node per line, children indented under their parent; features
    named ``fK`` (1-based), or by ``names`` (one per column of ``X``)."""
    lines = []
    for t, (tree, weight) in enumerate(zip(ensemble.trees, ensemble.tree_weights)):
        lines.append(f"{name + ': ' if name else ''}tree {t} (weight {weight:g}, {tree.n_leaves} leaves)")
        lines += _node_lines(tree, 0, 1, names)
    return lines


def _node_lines(tree, k: int, depth: int, names=None) -> list:
    pad = "  " * depth
    if tree.left[k] < 0:
        return [f"{pad}{k}: leaf {tree.value[k]:.6g} (rows {tree.count[k]})"]
    f, thr = int(tree.feature[k]), tree.threshold[k]
    feature = names[f] if names else f"f{f + 1}"
    children = {int(tree.left[k]): f"{feature} <= {thr:.6g}", int(tree.right[k]): f"{feature} > {thr:.6g}"}
    missing = int(tree.missing[k])
    if missing in children:
        children[missing] += " or missing"
    else:
        children[missing] = f"{feature} missing"
    lines = [f"{pad}{k}: split on {feature} at {thr:.6g} (gain {tree.gain[k]:.6g}, rows {tree.count[k]})"]
    for child, test in children.items():
        lines.append(f"{pad}  if {test}:")
        lines += _node_lines(tree, child, depth + 2, names)
    return lines

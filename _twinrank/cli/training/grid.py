"""``twinrank grid``: a parameter grid over LETOR folds and seeds, BL-MART's protocol.

Each configuration (every combination of the ``--param`` values) is trained on each
fold's ``train.txt`` with ``--seeds`` seeds, early-stopped on ``vali.txt``, and
evaluated on ``vali.txt`` and ``test.txt``; configurations are ranked by the mean
validation metric over folds and seeds (:mod:`twinrank.reference.analysis.grid`). The runs go
through :mod:`twinrank.reference.ensembles.runs`: in this process, ``--jobs N`` local processes,
or Dask (``--workers N`` starts a local cluster; ``--scheduler ADDRESS`` uses yours).

Each run is recorded as it finishes in ``<output>.runs.jsonl``
(:mod:`twinrank.reference.ensembles.run_record`). Ctrl-C stops the runs, writes the table
of the finished ones and says how many are left; the same command with ``--resume`` trains
only those (the runs that failed are tried again). A record of other settings is refused,
naming what differs; without ``--resume``, the record of an unfinished grid is refused
rather than replaced.

``--sample-weight NAME`` weighs each fold's training rows by the file ``NAME`` in its
folder (LightGBM's ``train.txt.weight``, one number per line, per row or per query);
without it, no weight file is read, and one lying beside a fold's training data is named
on stderr.
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import re
import sys
import time

from twinrank.cli._common import add_engine_option, check_input, check_output, check_overwrites, engine_module
from twinrank.cli.training.train import (
    ALGORITHMS,
    _kind,
    _metric,
    estimator_classes,
    field_of,
    flag,
    note_unread_weights,
    weighted,
)
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import CONVENTIONS, DEFAULT_CONVENTION

RECORD = ".runs.jsonl"  # each finished run's row, appended as it ends: <output>.runs.jsonl

EXAMPLE = """\
example (MQ2008's five folds, 2 x 2 configurations x 3 seeds = 60 runs on two workers):
  for k in 1 2 3 4 5; do twinrank data mq2008 --fold $k --out mq2008/Fold$k; done
  twinrank grid --folds mq2008 --param max_leaves=7,15 --param learning_rate=0.05,0.1 \\
      --seeds 3 --metric ndcg@3 --output results.csv --workers 2 --plot overfit.png
"""


def add_parser(sub) -> None:
    p = sub.add_parser("grid", help="grid search over LETOR folds and seeds (in process, processes or Dask)",
                       description=__doc__.split("\n", 1)[1].strip() + "\n\n" + EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="lambdamart",
                   help="the ranker (default: lambdamart); its parameters are those of twinrank train")
    p.add_argument("--folds", required=True, metavar="DIR",
                   help="folder of Fold1..FoldK, each with train.txt, vali.txt, test.txt (LETOR, MSLR layout)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="a parameter and the values to try (repeatable), e.g. max_leaves=7,15")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter fixed for every run (repeatable), e.g. query_subsample=0.5")
    p.add_argument("--sample-weight", metavar="NAME",
                   help="the name of a weight file in every fold folder, e.g. train.txt.weight (LightGBM's): that "
                        "fold's training rows' weights, one number per line, per row or per query (default: none)")
    p.add_argument("--seeds", type=int, default=3, help="seeds (repeats) per configuration and fold (default 3)")
    p.add_argument("--seed", type=int, default=0, help="the master seed the runs' seeds come from (default 0)")
    p.add_argument("--metric", type=_metric, default="ndcg@10",
                   help="validation metric (early stopping, selection) and reported test metric (default ndcg@10)")
    p.add_argument("--convention", choices=sorted(CONVENTIONS), default=DEFAULT_CONVENTION,
                   help=f"evaluation convention (default: {DEFAULT_CONVENTION})")
    p.add_argument("--trees", type=int, help="most trees per run (default: the algorithm's n_trees)")
    p.add_argument("--early-stopping", type=int, default=50, metavar="ROUNDS",
                   help="patience on each fold's validation set (default 50; 0: none)")
    p.add_argument("--output", required=True, help="the result table, one row per run: CSV, or JSON if "
                                                   "the name ends in .json (written atomically); each run is "
                                                   f"also recorded in <output>{RECORD} as it finishes")
    p.add_argument("--resume", action="store_true",
                   help=f"train only the runs <output>{RECORD} does not hold finished (after Ctrl-C or a crash); "
                        "the grid, folds, seeds and parameters must be those it was written for (default: a new "
                        "grid, refused if the record holds an unfinished one)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, help="local worker processes (default: runs one after another here)")
    where.add_argument("--workers", type=int, help="start a Dask LocalCluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--top", type=int, default=10, help="configurations shown in the top table (default 10)")
    p.add_argument("--plot", metavar="PNG", help="hyper-parameter overfitting curve as PNG (needs matplotlib) "
                                                 "and its data beside it as <name>.csv")
    p.add_argument("--draws", type=int, default=1000, help="random draws per point of the curve (default 1000)")
    p.add_argument("--quiet", action="store_true", help="no progress line per run")
    add_engine_option(p)
    p.set_defaults(run=run)


def parse_params(texts: list, algorithm: str, *, many: bool) -> dict:
    """``["max_leaves=7,15"]`` -> ``{"max_leaves": [7, 15]}`` (``many=False``: one value each)."""
    accepted = set(estimator_classes()[algorithm]._param_names())
    out = {}
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip().replace("-", "_")
        option = "--param" if many else "--set"
        if not sep or not values.strip():
            raise ParameterError(f"{option} {text!r}: expected NAME=VALUE{',VALUE...' if many else ''}")
        if name not in accepted:
            raise ParameterError(f"{option} {text!r}: --algorithm {algorithm} has no parameter {name!r}")
        field = field_of(name)[0]
        kind = _kind(name, str(field.type))
        try:
            parsed = [_value(kind, v.strip()) for v in (values.split(",") if many else [values])]
        except (argparse.ArgumentTypeError, ValueError) as e:
            raise ParameterError(f"{option} {text!r}: {e}") from None
        out[name] = parsed if many else parsed[0]
    return out


def _value(kind, text: str):
    return None if text.lower() == "none" else kind(text)


def run(args) -> int:
    from twinrank.executors import make_executor
    from twinrank.reference.ensembles.runs import Interrupted, read_folds

    grid = parse_params(args.param, args.algorithm, many=True)
    fixed = parse_params(args.set, args.algorithm, many=False)
    clash = sorted(set(grid) & set(fixed))
    if clash:
        raise ParameterError(f"{flag(clash[0])}: given both in --param and --set")
    if args.seeds < 1:
        raise ParameterError(f"--seeds must be >= 1, got {args.seeds}")
    record = args.output + RECORD
    check_output(args.output, "--output")
    check_output(args.plot, "--plot")
    check_overwrites({"--output": args.output, "--output's record": record, "--plot": args.plot,
                      "--plot's data": _curve_path(args.plot)}, _fold_files(args.folds))
    if args.plot:
        _require_matplotlib()
    weight_files = _weight_files(args.folds, args.sample_weight)
    module, name = ALGORITHMS[args.algorithm]
    estimator = getattr(engine_module(args.engine, module), name)
    fixed.update(_fixed(args, estimator))
    folds = weighted_folds(read_folds(args.folds), weight_files)
    executor = make_executor(n_jobs=args.jobs, workers=args.workers, scheduler=args.scheduler)
    try:
        result = engine_module(args.engine, "grid").grid_search(
            estimator, folds, grid, n_seeds=args.seeds, metric=args.metric, convention=args.convention,
            fixed=fixed, seed=args.seed, executor=executor, progress=None if args.quiet else RunProgress(),
            record=record, resume=args.resume)
    except Interrupted as e:  # the finished runs are in the record; the table of them too
        if e.results.rows:
            write_table(e.results, args.output)
        left = e.total - sum(not row["error"] for row in e.results.rows)  # a failed run is tried again
        raise KeyboardInterrupt(f"{len(e.results.rows)} of {e.total} runs written to {args.output} and recorded in "
                                f"{record}; the same command with --resume trains the other {left}") from None
    finally:
        executor.close()
    write_table(result.results, args.output)
    _report_failures(result)
    print(top_table(result, args.top))
    if args.plot:
        curve = result.overfitting_curve(draws=args.draws)
        write_curve(curve, _curve_path(args.plot))
        plot_curve(curve, args.plot, result.metric)
    print(f"{len(result.results.rows)} runs written to {args.output}", file=sys.stderr)
    return 0


def write_table(results, path) -> None:
    """The runs' table at ``path``: JSON if its name ends in ``.json``, else CSV (atomically)."""
    (results.to_json if path.endswith(".json") else results.to_csv)(path)


def _curve_path(plot):
    """Where ``--plot``'s curve data go: beside it, as ``<name>.csv``."""
    return None if plot is None else os.path.splitext(plot)[0] + ".csv"


def _fold_files(folder) -> dict:
    """``{"--folds's Fold1/train.txt": path}``: every file of the folds folder's ``Fold*`` folders."""
    found = {}
    for fold in sorted(glob.glob(os.path.join(glob.escape(folder), "Fold*"))):
        for path in sorted(glob.glob(os.path.join(glob.escape(fold), "*"))):
            found[f"--folds's {os.path.basename(fold)}/{os.path.basename(path)}"] = path
    return found


def _weight_files(folder, name) -> dict | None:
    """``{fold name: path}`` of ``--sample-weight NAME`` in every ``Fold*`` folder, each checked to exist;
    without it None, and a note for each LightGBM weight file beside a fold's training data (left unread)."""
    folds = sorted((path for path in glob.glob(os.path.join(glob.escape(folder), "Fold*"))
                    if re.fullmatch(r"Fold\d+", os.path.basename(path)) and os.path.isdir(path)),
                   key=lambda path: int(os.path.basename(path)[4:]))
    if name is None:
        for fold in folds:
            for train in ("train.txt", "train.txt.gz"):
                note_unread_weights(os.path.join(fold, train))
        return None
    paths = {os.path.basename(fold): os.path.join(fold, name) for fold in folds}
    for path in paths.values():
        check_input(path, "--sample-weight")
    return paths


def weighted_folds(folds: list, weight_files: dict | None) -> list:
    """Each fold with its training set weighted by its file of ``weight_files`` (unchanged if None)."""
    if weight_files is None:
        return folds
    return [dataclasses.replace(fold, train=weighted(fold.train, weight_files[fold.name])) for fold in folds]


def _fixed(args, estimator) -> dict:
    accepted = set(estimator._param_names())
    fixed = {}
    if args.trees is not None:
        fixed["n_trees"] = args.trees
    if args.early_stopping and "early_stopping_rounds" in accepted:
        fixed["early_stopping_rounds"] = args.early_stopping
    return fixed


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ParameterError("--plot needs matplotlib, which the 'distributed' extra brings: "
                             "pip install -e \".[distributed]\" in a clone, or pip install matplotlib") from None


def _report_failures(result) -> None:
    failed = result.results.failed
    if len(failed) == len(result.results.rows):
        raise ParameterError(f"every run failed; the first: {failed[0]['error']}")
    for row in failed[:3]:
        params = ", ".join(f"{k}={row[k]}" for k in result.configs[row["config"]])
        print(f"run {row['run']} ({params}; {row['fold']}, seed {row['seed']}) failed: {row['error']}",
              file=sys.stderr)
    if len(failed) > 3:
        print(f"... {len(failed)} runs failed in all (column 'error' of the table)", file=sys.stderr)


class RunProgress:
    """One line per finished run on stderr: ``[runs 3/40] Fold2 seed 1: valid:ndcg@3 0.5123 (12 trees) 4.1 s``."""

    def __init__(self, stream=None):
        self.stream, self.start = stream or sys.stderr, time.perf_counter()

    def __call__(self, done: int, total: int, row: dict) -> None:
        metric = next((k for k in row if k.startswith("valid:")), None)
        what = f"failed: {row['error']}" if row["error"] else (
            f"{metric} {row[metric]:.4f} ({row['n_trees']} trees)" if metric else "")
        print(f"[runs {done}/{total}] config {row['config']} {row['fold']} repeat {row['repeat']}: {what}  "
              f"{time.perf_counter() - self.start:.1f} s", file=self.stream, flush=True)


def top_table(result, n: int) -> str:
    """The ``n`` best configurations (mean validation metric over folds and seeds), as a text table."""
    rows = result.summary()[:n]
    names = list(result.configs[0])
    header = ["rank", *names, f"valid {result.metric}", "(std)", f"test {result.metric}", "trees", "runs"]
    body = [[str(r["rank"]), *(str(r[k]) for k in names), f"{r['valid']:.4f}", f"{r['valid_std']:.4f}",
             f"{r['test']:.4f}", f"{r['n_trees']:.1f}", f"{r['runs'] - r['failed']}/{r['runs']}"] for r in rows]
    widths = [max(len(h), *(len(b[j]) for b in body)) for j, h in enumerate(header)]
    lines = [f"# top {len(rows)} of {len(result.configs)} configurations, by mean validation {result.metric} "
             "over folds and seeds"]
    lines += ["  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [header, *body]]
    return "\n".join(lines)


def write_curve(curve: dict, path) -> None:
    """The overfitting curve as CSV: ``size,valid,test`` (``draws`` in a comment line)."""
    from twinrank.reference.io._atomic import atomic_output

    lines = [f"# mean over {curve['draws']} draws of the best-on-validation of n random configurations",
             "size,valid,test"]
    lines += [f"{n},{v!r},{t!r}" for n, v, t in zip(curve["size"].tolist(), curve["valid"].tolist(),
                                                       curve["test"].tolist())]
    with atomic_output(path) as f:
        f.write(("\n".join(lines) + "\n").encode())


def plot_curve(curve: dict, path, metric: str) -> None:
    """BL-MART's Fig. 1: validation and test metric of the chosen configuration against n, as PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twinrank.reference.io._atomic import atomic_output

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(curve["size"], curve["valid"], label="validation (selected on)")
    ax.plot(curve["size"], curve["test"], label="test")
    ax.set_xlabel("configurations tried (n)")
    ax.set_ylabel(f"mean {metric} of the best on validation")
    ax.set_title(f"hyper-parameter overfitting ({curve['draws']} draws per n)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_output(path) as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)

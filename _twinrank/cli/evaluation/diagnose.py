"""``twinrank diagnose bias-variance``: pointwise and listwise bias and variance of a ranker.

Trains ``--models`` models on samples of the training queries (``--method bootstrap``:
``--fraction`` of them each; ``twofold``: ``--repeats`` random halvings, both halves
trained), scores the test set with each and reports, per setting of the swept
``--param``, the pointwise bias^2, variance and MSE and the listwise SRE, VRE, signed
VRE and mean ranking error (1 - NDCG) of :mod:`twinrank.reference.analysis.diagnostics`.
``--save-scores DIR`` writes every setting's score matrix (models x documents, ``.npy``),
the labels, the query offsets and the settings, so anyone can recompute the numbers: a new
folder (or an empty one), written after the report is printed and renamed into place when
complete, so a full disk loses no number and leaves no half-written folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from twinrank.cli._common import (
    add_engine_option,
    add_reading_options,
    check_input,
    check_output,
    check_overwrites,
    engine_module,
    reading_options,
    require_queries,
)
from twinrank.cli.training.grid import _require_matplotlib, parse_params
from twinrank.cli.training.train import ALGORITHMS, _metric
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import CONVENTIONS, DEFAULT_CONVENTION
from twinrank.reference.evaluation.variance import NUMBERS

EXAMPLE = """\
example (RF-point's per-tree query sub-sample p on MQ2008, both methods' data saved):
  twinrank data mq2008 --fold 1 --out mq2008
  twinrank diagnose bias-variance --algorithm random-forest --train mq2008/train.txt \\
      --test mq2008/test.txt --set n_trees=50 --set bootstrap=false \\
      --param query_subsample=0.05,0.2,0.5,1.0 --json --plot bv.png --save-scores bv
"""


def add_parser(sub) -> None:
    p = sub.add_parser("diagnose", help="diagnose a ranker: bias and variance (pointwise; listwise SRE/VRE)",
                       description="Diagnose a ranker.")
    kinds = p.add_subparsers(dest="diagnosis", metavar="DIAGNOSIS", required=True)
    q = kinds.add_parser("bias-variance", help="bias^2/variance and SRE/VRE over models trained on samples",
                         description=__doc__.split("\n", 1)[1].strip() + "\n\n" + EXAMPLE,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("--algorithm", choices=sorted(ALGORITHMS), required=True,
                   help="the ranker; its parameters are those of twinrank train")
    q.add_argument("--train", required=True, help="the pool of training queries (LETOR file)")
    q.add_argument("--test", required=True, help="the fixed test set every model scores (LETOR file)")
    q.add_argument("--method", choices=["bootstrap", "twofold"], default="bootstrap",
                   help="bootstrap: --models samples of --fraction of the queries; twofold: --repeats "
                        "random halvings, both halves trained (default bootstrap)")
    q.add_argument("--models", type=int, default=10, metavar="B", help="models of --method bootstrap (default 10)")
    q.add_argument("--repeats", type=int, default=5, metavar="J",
                   help="halvings of --method twofold, 2 J models (default 5)")
    q.add_argument("--fraction", type=float, default=0.63,
                   help="fraction of the training queries in each bootstrap sample, in (0, 1] (default 0.63, "
                        "the paper's)")
    q.add_argument("--pooled", action="store_true",
                   help="twofold: decompose all 2 J models around one mean (1/(2J-1)) instead of the paper's "
                        "mean of the repeats' estimates")
    q.add_argument("--param", metavar="NAME=V1,V2,...",
                   help="the one parameter to sweep and its values, e.g. query_subsample=0.05,0.2,0.5,1")
    q.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter fixed for every model (repeatable), e.g. n_trees=100")
    q.add_argument("--metric", type=_metric, default="ndcg",
                   help="the listwise metric, loss = 1 - metric: ndcg, ndcg@k or meanndcg (default ndcg)")
    q.add_argument("--convention", choices=sorted(CONVENTIONS), default=DEFAULT_CONVENTION,
                   help=f"evaluation convention (default: {DEFAULT_CONVENTION})")
    q.add_argument("--ddof", type=int, default=1, help="variance and VRE divide by B - ddof (default 1)")
    q.add_argument("--include-no-relevant", action="store_true",
                   help="average the queries without a relevant document too (default: count, leave out)")
    q.add_argument("--seed", type=int, default=0, help="master seed of the samples and the models (default 0)")
    where = q.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, help="local worker processes (default: one model after another here)")
    where.add_argument("--workers", type=int, help="start a Dask LocalCluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://host:8786")
    q.add_argument("--json", action="store_true", help="print the numbers as JSON (default: a table)")
    q.add_argument("--plot", metavar="PNG", help="bias^2/variance and SRE/VRE against --param as PNG (matplotlib)")
    q.add_argument("--save-scores", metavar="DIR",
                   help="write every setting's score matrix (.npy), the labels, query offsets and settings "
                        "into a new folder DIR (an empty one will do; one holding files is refused), after "
                        "the report is printed; the folder appears complete or not at all")
    q.add_argument("--quiet", action="store_true", help="no progress line per model")
    add_reading_options(q)
    add_engine_option(q)
    q.set_defaults(run=run)


def run(args) -> int:
    from twinrank.executors import make_executor
    from twinrank.reference.io.letor import read_letor

    name, values = _sweep(args)
    fixed = parse_params(args.set, args.algorithm, many=False)
    if name in fixed:
        raise ParameterError(f"--param {name}: also given in --set")
    for path, flag in ((args.train, "--train"), (args.test, "--test")):
        check_input(path, flag)
    check_output(args.plot, "--plot")
    check_overwrites({"--plot": args.plot}, {"--train": args.train, "--test": args.test})
    if args.plot:
        _require_matplotlib()
    if args.save_scores:
        _check_folder(args.save_scores)
    train = read_letor(args.train, **reading_options(args))
    test = read_letor(args.test, **reading_options(args))
    require_queries(train, args.train, "--train", "the samples are drawn query by query")
    require_queries(test, args.test, "--test", "the listwise terms are per query")
    module, cls = ALGORITHMS[args.algorithm]
    estimator = getattr(engine_module(args.engine, module), cls)
    executor = make_executor(n_jobs=args.jobs, workers=args.workers, scheduler=args.scheduler)
    try:
        diagnostics = engine_module(args.engine, "diagnostics")
        options = dict(method=args.method, n_models=args.models, n_repeats=args.repeats, fraction=args.fraction,
                       metric=args.metric, convention=args.convention, ddof=args.ddof, seed=args.seed,
                       executor=executor, include_no_relevant=args.include_no_relevant, pooled=args.pooled,
                       params=fixed,
                       progress=None if args.quiet else ModelProgress())
        results = (diagnostics.sweep(estimator, train, test, name, values, **options) if name
                   else [diagnostics.bias_variance(estimator, train, test, **options)])
    finally:
        executor.close()
    report = _report(args, name, results, saved=bool(args.save_scores))
    print(json.dumps(report, indent=1) if args.json else table(report), flush=True)  # first: a full disk
    if args.save_scores:                                                              # loses no number
        save_scores(args.save_scores, results, report)
    if args.plot:
        plot(report, args.plot)
    return 0


def _check_folder(folder) -> None:
    """``--save-scores``: a new folder, or an empty one, in a folder that exists (checked before training)."""
    from twinrank.reference.io._atomic import refuse_filled_folder

    try:
        refuse_filled_folder(folder)
    except OSError as e:
        raise ParameterError(f"--save-scores {folder}: {e.strerror}") from None
    parent = os.path.dirname(os.path.abspath(folder))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(f"--save-scores {folder}: cannot make a folder in {parent} (no such folder, or "
                             "permission denied)")


def _sweep(args) -> tuple:
    """The swept parameter and its values (``(None, None)`` without ``--param``: one setting)."""
    if args.param is None:
        return None, None
    swept = parse_params([args.param], args.algorithm, many=True)
    return next(iter(swept.items()))


def _report(args, name, results, saved: bool = False) -> dict:
    """The numbers of every setting, and how they were made; ``saved``: each setting names its matrix file."""
    settings = [{"params": dict(r.params), **r.numbers(), "n_models": int(r.scores.scores.shape[0]),
                 **({"scores": f"setting{i}.npy"} if saved else {})} for i, r in enumerate(results)]
    return {"algorithm": args.algorithm, "engine": args.engine, "method": args.method,
            "param": name, "metric": args.metric, "convention": args.convention,
            "ddof": args.ddof, "include_no_relevant": args.include_no_relevant, "seed": args.seed,
            "n_queries": int(results[0].scores.query_offsets.size - 1), **_estimator_of(args),
            "settings": settings}


def _estimator_of(args) -> dict:
    """How the numbers were estimated (Ibrahim Sec. 5.2), and the row order of the saved matrices."""
    if args.method == "bootstrap":
        return {"fraction": args.fraction, "estimator": "one decomposition of all models"}
    if args.pooled:
        return {"estimator": "pooled: all 2J models around one mean, 1/(2J-1)",
                "rows": "repeat order: rows 2j and 2j+1 are repeat j's two halves"}
    return {"estimator": "per repeat (Eqs. 16-17): each repeat's two models around their own mean, 1/(2-1), "
                         "averaged over the repeats",
            "rows": "repeat order: rows 2j and 2j+1 are repeat j's two halves"}


def save_scores(folder, results, report) -> None:
    """``setting<i>.npy`` (models x documents) per setting, ``labels.npy``, ``query_offsets.npy`` and
    ``settings.json`` (the report, each setting naming its matrix file), as one new folder: it
    appears whole or not at all (:func:`~twinrank.reference.io._atomic.atomic_folder`)."""
    from twinrank.reference.io._atomic import atomic_folder

    arrays = {"labels.npy": results[0].scores.y, "query_offsets.npy": results[0].scores.query_offsets,
              **{setting["scores"]: r.scores.scores for r, setting in zip(results, report["settings"])}}
    try:
        with atomic_folder(folder) as tmp:
            for file, array in arrays.items():
                np.save(os.path.join(tmp, file), np.asarray(array))
            with open(os.path.join(tmp, "settings.json"), "w") as f:
                f.write(json.dumps(report, indent=1))
    except OSError as e:
        raise OSError(e.errno, f"{e.strerror}; nothing was saved there (the report above is complete)",
                      folder) from None


def table(report: dict) -> str:
    """One line per setting: the swept value and every number."""
    name = report["param"] or "setting"
    header = [name, *NUMBERS, "excluded"]
    body = [[str(s["params"].get(report["param"], "-")), *(f"{s[k]:.6f}" for k in NUMBERS), str(s["n_excluded"])]
            for s in report["settings"]]
    widths = [max(len(h), *(len(b[j]) for b in body)) for j, h in enumerate(header)]
    lines = [f"# {report['algorithm']}, {report['method']}, {report['settings'][0]['n_models']} models; "
             f"listwise loss 1 - {report['metric']} ({report['convention']}); queries without a relevant "
             f"document {'included' if report['include_no_relevant'] else 'left out'}"]
    lines += ["  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [header, *body]]
    return "\n".join(lines)


def plot(report: dict, path) -> None:
    """Two panels against the swept value: bias^2 and variance; SRE and VRE (the paper's Figs. 5-7)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twinrank.reference.io._atomic import atomic_output

    settings = report["settings"]
    x = [s["params"].get(report["param"], i) for i, s in enumerate(settings)]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, names, title in ((axes[0], ("bias2", "variance"), "pointwise"), (axes[1], ("sre", "vre"), "listwise")):
        for key in names:
            ax.plot(x, [s[key] for s in settings], marker="o", label=key)
        ax.set_xlabel(report["param"] or "setting")
        ax.set_title(f"{title} ({report['method']})")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    with atomic_output(path) as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)


class ModelProgress:
    """One line per trained model on stderr: ``[models 3/20] setting 0 sample2: test:ndcg 0.4712  8.1 s``."""

    def __init__(self, stream=None):
        self.stream, self.start = stream or sys.stderr, time.perf_counter()

    def __call__(self, done: int, total: int, row: dict) -> None:
        metric = next((k for k in row if k.startswith("test:")), None)
        what = f"failed: {row['error']}" if row["error"] else f"{metric} {row[metric]:.4f}"
        print(f"[models {done}/{total}] setting {row['config']} {row['fold']}: {what}  "
              f"{time.perf_counter() - self.start:.1f} s", file=self.stream, flush=True)

"""``twinrank import``: a model of another library as a twinrank model file.

``--format lightgbm`` reads LightGBM's text model (``Booster.save_model``'s output):
both engines then score it as LightGBM's ``predict(raw_score=True)`` (for a random
forest, ``boosting=rf``, the average of its trees, as LightGBM's ``predict``).
Multiclass models, categorical splits and linear trees cannot be expressed by
twinrank's trees and are refused, naming the line and the field.
"""
from __future__ import annotations

import argparse
import sys

from twinrank.cli._common import check_input, check_output, check_overwrites

FORMATS = ("lightgbm",)


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="read a LightGBM text model into a twinrank model file",
                       description=__doc__.split("\n", 1)[1].strip(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model file to import, e.g. LightGBM's model.txt")
    p.add_argument("--output", required=True, help="twinrank model file to write (JSON, atomically)")
    p.add_argument("--format", choices=FORMATS, default="lightgbm",
                   help="the format of --model (default: lightgbm, LightGBM's text model)")
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.interop.lightgbm_text import load_lightgbm

    check_input(args.model, "--model")
    check_output(args.output, "--output")
    check_overwrites({"--output": args.output}, {"--model": args.model})
    model = load_lightgbm(args.model)
    model.save(args.output)
    print(f"imported {model.n_trees} trees ({model.n_features} features, LightGBM objective "
          f"{model.params.get('objective') or 'not given'}) from {args.model} into {args.output}", file=sys.stderr)
    return 0

"""``twinrank export``: a twinrank model file written in another library's model format.

``--format lightgbm`` writes LightGBM's text model, which LightGBM loads with
``lightgbm.Booster(model_file=...)`` and scores as twinrank does (the rules:
``twinrank.interop.lightgbm_text``). McRank and cumulative-regression models, BL-MART
bags and ``--missing iterative`` models cannot be expressed there and are refused in one
line naming the file, the kind and the reason.
"""
from __future__ import annotations

import argparse
import sys

from twinrank.cli._common import (
    STDOUT,
    add_accept_edited_option,
    check_input,
    check_output,
    check_overwrites,
    read_model,
)
from twinrank.cli.training.predict import first_trees
from twinrank.reference.errors import ModelFormatError

FORMATS = ("lightgbm",)


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write a model in LightGBM's text model format",
                       description=__doc__.split("\n", 1)[1].strip(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="twinrank model file to export (JSON, from either engine)")
    p.add_argument("--output", required=True,
                   help="file to write (atomically), e.g. model.txt; '-' for standard output")
    p.add_argument("--format", choices=FORMATS, default="lightgbm",
                   help="the model format to write (default: lightgbm, LightGBM's text model, version v4)")
    p.add_argument("--trees", metavar="K|best",
                   help="export the first K trees only, or 'best': the first best-iteration trees "
                        "(default: every tree, as predict scores by default)")
    add_accept_edited_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from twinrank.interop.lightgbm_text import save_lightgbm, to_lightgbm_text

    check_input(args.model, "--model")
    check_output(args.output, "--output")
    check_overwrites({"--output": args.output}, {"--model": args.model})
    model = first_trees(read_model(args), args.trees)
    try:
        if args.output == STDOUT:
            sys.stdout.write(to_lightgbm_text(model))
            where = "standard output"
        else:
            save_lightgbm(model, args.output)
            where = args.output
    except ModelFormatError as e:
        raise ModelFormatError(f"{args.model}: {e}") from None
    print(f"exported {model.n_trees} trees of {args.model} ({model.algorithm}) as a LightGBM text model to "
          f"{where}; load it with lightgbm.Booster(model_file=...)", file=sys.stderr)
    return 0

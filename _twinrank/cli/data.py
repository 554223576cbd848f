"""``twinrank data``: where the bundled data lives, and one MQ2008 fold written as LETOR files.

``twinrank data path mq2008`` prints the folder of the bundled parts ``S1.txt.gz`` ..
``S5.txt.gz``; ``twinrank data mq2008 --fold 1 --out DIR`` writes ``DIR/train.txt``,
``DIR/vali.txt`` and ``DIR/test.txt`` as the LETOR 4.0 distribution's ``Fold1`` holds them
(train: S1-S3, vali: S4, test: S5; fold k starts at S_k), the parts' text unchanged.
"""
from __future__ import annotations

import argparse
import gzip
import os
import sys
from importlib import resources

from twinrank.cli._common import check_output
from twinrank.reference.errors import ParameterError
from twinrank.reference.io._atomic import atomic_output

DATASETS = ("mq2008",)
FOLD_FILES = ("train", "vali", "test")


def add_parser(sub) -> None:
    p = sub.add_parser("data", help="where the bundled MQ2008 lives; write a fold's LETOR files",
                       description=__doc__.split("\n", 1)[1].strip(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    path = actions.add_parser("path", help="print the folder of a bundled data set")
    path.add_argument("name", choices=DATASETS, help="the data set")
    path.set_defaults(run=run_path)
    mq = actions.add_parser("mq2008", help="write one MQ2008 fold as train.txt, vali.txt, test.txt")
    mq.add_argument("--fold", type=int, default=1, choices=range(1, 6), help="the fold, 1..5 (default 1)")
    mq.add_argument("--out", required=True, metavar="DIR",
                    help="folder to write train.txt, vali.txt and test.txt into (created if needed)")
    mq.set_defaults(run=run_mq2008)


def bundled(name: str):
    """The folder of a bundled data set (a Traversable; a real folder in any ordinary install)."""
    return resources.files("twinrank.reference.io") / "datasets" / name


def fold_parts(fold: int) -> dict:
    """``{"train": [k, ...], "vali": [k], "test": [k]}``: the S-parts of each split of ``fold``."""
    part = [(fold - 1 + i) % 5 + 1 for i in range(5)]  # as data.load_mq2008 orders them
    return {"train": part[:3], "vali": [part[3]], "test": [part[4]]}


def run_path(args) -> int:
    print(os.fspath(bundled(args.name)))
    return 0


def run_mq2008(args) -> int:
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ParameterError(f"--out {args.out}: is a file, not a folder")
    os.makedirs(args.out, exist_ok=True)
    targets = {split: os.path.join(args.out, f"{split}.txt") for split in FOLD_FILES}
    for target in targets.values():
        check_output(target, "--out")
    for split, parts in fold_parts(args.fold).items():
        with atomic_output(targets[split]) as out:
            for k in parts:
                with resources.as_file(bundled("mq2008") / f"S{k}.txt.gz") as source, gzip.open(source) as f:
                    while chunk := f.read(1 << 20):
                        out.write(chunk)
    names = ", ".join(f"{s}.txt (S{'+S'.join(map(str, p))})" for s, p in fold_parts(args.fold).items())
    print(f"MQ2008 Fold{args.fold} written to {args.out}: {names}", file=sys.stderr)
    return 0

"""``--zero-based`` on every command that reads data: the file's ids start at 0, and nothing else moves.

Id j of a 0-based file is column j of ``X``, as id j + 1 of a 1-based file is: twinrank names column j
``f{j+1}`` (1-based) whatever the file's base. So each command gives the same answer on a 1-based file
and on the same data written 0-based and read with ``--zero-based``, and a model trained on the 0-based
file names its most useful feature, id 0, ``f1``.
"""
import argparse
import json

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import build_parser, main


def write(path, data, base: int) -> str:
    """``data`` as a LETOR file whose feature ids start at ``base``."""
    query = np.repeat(np.arange(data.n_queries), np.diff(data.query_offsets))
    path.write_text("".join(f"{data.y[i]:g} qid:{query[i]} "
                            + " ".join(f"{j + base}:{float(v)!r}" for j, v in enumerate(data.X[i])) + "\n"
                            for i in range(data.n_rows)))
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{1: (train, test), 0: (train, test)}``: the same data, 1-based and 0-based, and one model."""
    d = tmp_path_factory.mktemp("zero")
    train, test = ranking_data(30, 10, 3, seed=5), ranking_data(12, 10, 3, seed=6)
    found = {base: (write(d / f"train{base}.txt", train, base), write(d / f"test{base}.txt", test, base))
             for base in (0, 1)}
    assert main(["train", "--train", found[1][0], "--model", str(d / "m.json"), "--trees", "3",
                 "--leaves", "4", "--min-samples-leaf", "3", "--quiet"]) == 0
    (d / "scores.txt").write_text("".join(f"{v}\n" for v in np.random.default_rng(0).random(test.n_rows)))
    return d, found


COMMANDS = {  # every command that reads data, with {train}, {test}, {d} (the folder), {out} (its output)
    "train": ["train", "--train", "{train}", "--model", "{out}", "--trees", "3", "--leaves", "4",
              "--min-samples-leaf", "3", "--quiet"],
    "predict": ["predict", "--model", "{d}/m.json", "--data", "{test}", "--output", "{out}"],
    "evaluate": ["evaluate", "--data", "{test}", "--scores", "{d}/scores.txt", "--json"],
    "verify": ["verify", "--data", "{train}", "--component", "grow_tree", "--json", "--quiet"],
    "diagnose bias-variance": ["diagnose", "bias-variance", "--algorithm", "lambdamart", "--train", "{train}",
                               "--test", "{test}", "--models", "2", "--set", "n_trees=2", "--set",
                               "min_samples_leaf=3", "--json"],
    "experiment variance": ["experiment", "variance", "--train", "{train}", "--test", "{test}",
                            "--samples", "2", "--convention", "lightgbm", "--models", "2", "--set", "n_trees=2",
                            "--set", "min_samples_leaf=3", "--json", "--quiet"],
}


def timeless(value):
    """``value`` without its ``seconds`` (verify times each twin)."""
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return {k: timeless(v) for k, v in value.items() if k != "seconds"} if isinstance(value, dict) else value


def commands_with(option: str, parser=None, prefix=()) -> set:
    """The (sub-)commands of ``twinrank`` whose parser has ``option``."""
    parser = parser or build_parser()
    found = set()
    for action in parser._actions:
        if option in action.option_strings:
            found.add(" ".join(prefix))
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= commands_with(option, sub, (*prefix, name))
    return found


def test_every_command_with_zero_based_is_tested_and_says_what_it_means(capsys):
    assert commands_with("--zero-based") == set(COMMANDS)
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            main([*command.split(), "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "which twinrank names f(j+1) as always" in text and "id 0 is f1" in text, command


@pytest.mark.parametrize("command", COMMANDS)
def test_a_zero_based_file_gives_what_the_one_based_file_gives(files, command, capsys, tmp_path):
    d, found = files
    results = []
    for base in (1, 0):
        out = tmp_path / f"out{base}"
        argv = [a.format(train=found[base][0], test=found[base][1], d=d, out=out) for a in COMMANDS[command]]
        assert main(argv + (["--zero-based"] if base == 0 else [])) == 0
        printed = capsys.readouterr().out.replace(found[base][0], "TRAIN").replace(found[base][1], "TEST")
        kept = out.read_text() if out.exists() and command != "train" else None
        results.append((timeless(json.loads(printed)) if "--json" in argv else printed, kept))
        if command == "train":
            assert main(["inspect", "--model", str(out), "--json"]) == 0
            results[-1] = json.loads(capsys.readouterr().out)
    assert results[0] == results[1]
    if command == "train":  # feature id 0 of the 0-based file (the labels' main driver) is f1
        assert results[1]["importance"][0]["feature"] == 1
        assert main(["inspect", "--model", str(tmp_path / "out0"), "--dump"]) == 0
        assert "split on f1 at" in capsys.readouterr().out

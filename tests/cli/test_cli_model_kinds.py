"""Every command that reads a model file (``--model``) on every kind of model twinrank writes.

One small model of each kind is trained by ``twinrank train`` on the bundled MQ2008 (and one
imported from LightGBM's text format); each command either succeeds or refuses in one line
naming the file, the kind and the reason (exit 2), never with a traceback: an exception
escaping ``main`` fails the test.
"""
import json

import pytest

from twinrank.cli import main

SMALL = ["--max-leaves", "4", "--quiet"]
KINDS = {  # file stem: the train flags of one small model of that kind
    "lambdamart": ["--algorithm", "lambdamart", "--n-trees", "3"],
    "lambdamart-optimal-step": ["--algorithm", "lambdamart", "--n-trees", "2", "--step", "optimal"],
    "cost-aware": ["--algorithm", "lambdamart", "--n-trees", "2", "--feature-costs", "COSTS"],
    "gbrt": ["--algorithm", "gbrt", "--n-trees", "3"],
    "random-forest": ["--algorithm", "random-forest", "--n-trees", "2"],
    "igbrt": ["--algorithm", "igbrt", "--n-trees", "2", "--rf-n-trees", "2", "--rf-max-leaves", "4"],
    "mcrank": ["--algorithm", "mcrank", "--n-trees", "2"],
    "cumulative-regression": ["--algorithm", "cumulative-regression", "--n-trees", "2", "--rf-n-trees", "2",
                              "--rf-max-leaves", "4"],
    "dart": ["--algorithm", "dart", "--n-trees", "3"],
    "x-dart": ["--algorithm", "x-dart", "--n-trees", "4", "--snapshot-sizes", "2"],
    "bl-mart": ["--algorithm", "bl-mart", "--n-trees", "2", "--n-models", "2"],
}
MODEL_KINDS = [*KINDS, "lightgbm"]
ALGORITHM = {"lambdamart-optimal-step": "lambdamart", "cost-aware": "lambdamart", "random-forest": "random_forest"}
SEVERAL = ("mcrank", "cumulative-regression", "bl-mart")  # models of several ensembles, combined nonlinearly
KIND_NAMES = {"mcrank": "McRank", "cumulative-regression": "cumulative-regression", "bl-mart": "BL-MART"}


COMMANDS = {  # every command taking --model, with its variants: the arguments after --model FILE
    "predict": ["predict", "--data", "{d}/test.txt", "--output", "{d}/scores.txt"],
    "predict --trees 1": ["predict", "--data", "{d}/test.txt", "--output", "{d}/scores.txt", "--trees", "1"],
    "predict --exit-every 1": ["predict", "--data", "{d}/test.txt", "--output", "{d}/scores.txt",
                               "--exit-every", "1"],
    "predict --contributions": ["predict", "--data", "{d}/test.txt", "--output", "{d}/contributions.txt",
                                "--contributions"],
    "inspect": ["inspect", "--dump"],
    "inspect --json": ["inspect", "--json"],
    "export": ["export", "--output", "{d}/model.txt"],
    "export --trees 1": ["export", "--output", "{d}/model.txt", "--trees", "1"],
    "cost": ["cost", "--data", "{d}/test.txt"],
    "cost --exit-every 1": ["cost", "--data", "{d}/test.txt", "--exit-every", "1"],
}


def refused(kind: str, command: str) -> bool:
    """Whether ``command`` must refuse a model of ``kind`` (and why, in the comments)."""
    if kind in SEVERAL and command in ("export", "export --trees 1"):
        return True  # not one sum of trees: LightGBM's model cannot hold it
    if kind in SEVERAL and ("--exit-every" in command or "--contributions" in command):
        return True  # early exits stop one sum of trees; contributions are shares of one (the bag's minmax)
    if kind == "bl-mart" and "--trees" in command:
        return True  # a bag is scored whole
    return kind in ("dart", "x-dart") and "--trees 1" in command  # rescaled trees: no model of 1 tree


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """``(folder, {kind: model file})``: MQ2008 fold 1 and one small model of every kind."""
    d = tmp_path_factory.mktemp("kinds")
    assert main(["data", "mq2008", "--fold", "1", "--out", str(d)]) == 0
    (d / "costs.txt").write_text("".join(f"{j} {j % 5 + 1}\n" for j in range(1, 47)))
    files = {}
    for kind, flags in KINDS.items():
        files[kind] = d / f"{kind}.json"
        flags = [str(d / "costs.txt") if f == "COSTS" else f for f in flags]
        assert main(["train", "--train", str(d / "train.txt"), "--valid", str(d / "vali.txt"),
                     "--model", str(files[kind]), *flags, *SMALL]) == 0
    assert main(["export", "--model", str(files["lambdamart"]), "--output", str(d / "lightgbm.txt")]) == 0
    files["lightgbm"] = d / "lightgbm.json"
    assert main(["import", "--model", str(d / "lightgbm.txt"), "--output", str(files["lightgbm"])]) == 0
    return d, files


def test_the_kinds_are_every_algorithm_train_offers(models, capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    usage = capsys.readouterr().out
    offered = usage[usage.index("--algorithm {") + len("--algorithm {"):].split("}")[0].split(",")
    assert set(offered) <= {flags[1] for flags in KINDS.values()}
    _, files = models
    stored = {kind: json.loads(files[kind].read_text())["algorithm"] for kind in MODEL_KINDS}
    assert stored == {kind: ALGORITHM.get(kind, kind) for kind in MODEL_KINDS}
    assert json.loads(files["cost-aware"].read_text())["params"]["feature_costs"] is not None


@pytest.mark.parametrize("kind", MODEL_KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reads_or_refuses_every_kind_in_one_line(models, kind, command, capsys):
    d, files = models
    argv = [a.format(d=d) for a in COMMANDS[command]]
    code = main([argv[0], "--model", str(files[kind]), *argv[1:]])
    out, err = capsys.readouterr()
    if not refused(kind, command):
        assert code == 0, err
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"twinrank {argv[0]}: error: ") and "Traceback" not in err
    assert KIND_NAMES.get(kind, kind) in lines[0], lines[0]
    if "--trees" not in command:  # a flag's refusal names the flag; the others name the file
        assert str(files[kind]) in lines[0], lines[0]


def test_inspect_shows_dart_branches_and_bag_members(models, capsys):
    _, files = models
    assert main(["inspect", "--model", str(files["x-dart"]), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)["summary"]["history"]
    assert sum(history["branch"]["counts"].values()) == history["branch"]["n"]
    assert history["valid_loss"]["best"] == min(json.loads(files["x-dart"].read_text())["history"]["valid_loss"])
    assert "best" not in history["size"]
    assert main(["inspect", "--model", str(files["bl-mart"]), "--dump"]) == 0
    out = capsys.readouterr().out
    assert "members         2, scores combined per query by minmax" in out
    assert "member 2: tree 1" in out


def test_cost_of_a_bag_counts_every_member_tree(models, capsys):
    d, files = models
    assert main(["cost", "--model", str(files["bl-mart"]), "--data", str(d / "test.txt"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["cost_per_tree"]) == 4 and report["mean_cost"] == 4.0  # 2 members x 2 trees, features free

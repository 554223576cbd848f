"""Model files are not trusted: every fault is refused with ModelFormatError naming the file and field.

The fuzz tests mutate real model files (digits, bytes, truncation, typed values at
any field, deleted fields) and score them in both engines in a separate process, so
that a crash or a hang fails the test instead of the suite. With the checksum
verified, every mutated file is refused or scores exactly as the original; with
``verify_checksum=False`` (a file edited on purpose), every file is refused or the
two engines score it identically: no index a loader let through can be read out of
bounds by either engine.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twinrank import cli
from twinrank.fast.rankers.classification import McRank
from twinrank.fast.rankers.forest import RandomForest
from twinrank.fast.rankers.lambdamart import LambdaMART
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble, load_model
from twinrank.reference.rankers import lambdamart as reference_lambdamart

SCORER = Path(__file__).parents[1] / "_score_model_files.py"
FUZZ_EXAMPLES = 6 if os.environ.get("CI") else 40  # hypothesis examples; each scores a batch of files
BATCH = 25  # mutated files per example, scored by one process
SMALL = dict(n_trees=4, max_leaves=6, min_samples_leaf=5, seed=3)


@pytest.fixture(scope="module")
def mq2008():
    train, _, test = load_mq2008(1)
    return train.take_queries(np.arange(60)), test.take_queries(np.arange(20))


@pytest.fixture(scope="module")
def model_files(mq2008, tmp_path_factory):
    """Saved models of four kinds: LambdaMART, LambdaSMART (a prior model inside), a forest, McRank."""
    train, _ = mq2008
    folder = tmp_path_factory.mktemp("models")
    prior = LambdaMART(**SMALL).fit(train)
    kinds = {"lambdamart": LambdaMART(**SMALL, missing="mean"), "lambdasmart": LambdaMART(**SMALL, init_model=prior),
             "forest": RandomForest(n_trees=3, max_leaves=6, seed=3), "mcrank": McRank(**SMALL)}
    files = {}
    for name, est in kinds.items():
        files[name] = folder / f"{name}.json"
        est.fit(train).save(files[name])
    return files


@pytest.fixture(scope="module")
def features(mq2008, tmp_path_factory):
    """The test rows, a few features set missing so that every route is taken."""
    X = mq2008[1].X.copy()
    X[::7, ::3] = np.nan
    path = tmp_path_factory.mktemp("features") / "X.npy"
    np.save(path, X)
    return path


def edited(path, tmp_path, edit, name="edited.json"):
    """A copy of the model file ``path`` with ``edit(doc)`` applied (its checksum now stale)."""
    doc = json.loads(Path(path).read_text())
    edit(doc)
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def set_in(doc, keys, value):
    for key in keys[:-1]:
        doc = doc[key]
    doc[keys[-1]] = value


# ---------------------------------------------------------------- each fault, named

FAULTS = {  # what the issue found, as edits of a LambdaMART file, and the field the error must name
    "cycle": (("trees", 0, "left", 0), 0, r"trees\[0\]\.left\[0\] = 0"),
    "child out of range": (("trees", 1, "right", 0), 999, r"trees\[1\]\.right\[0\] = 999"),
    "missing out of range": (("trees", 1, "missing", 0), 10 ** 6, r"trees\[1\]\.missing\[0\]"),
    "negative child": (("trees", 2, "left", 0), -5, r"trees\[2\]\.left\[0\] = -5"),
    "negative feature": (("trees", 0, "feature", 0), -3, r"trees\[0\]\.feature\[0\] = -3"),
    "feature beyond width": (("trees", 0, "feature", 0), 46, r"trees\[0\]\.feature: splits on column 46 \(f47\)"),
    "trees not a list": (("trees",), 5, r"trees: expected a list, got the number 5"),
    "null tree": (("trees", 0), None, r"trees\[0\]: expected an object, got null"),
    "threshold not a number": (("trees", 0, "threshold", 0), "abc", r"trees\[0\]\.threshold\[0\]: 'abc' is not a number"),
    "base_score not a number": (("base_score",), "hello", r"base_score: 'hello' is not a number"),
    "version true": (("version",), True, r"version True is not supported"),
    "version 1.0": (("version",), 1.0, r"version 1.0 is not supported"),
    "int as float": (("trees", 0, "left", 0), 1.0, r"trees\[0\]\.left\[0\]: 1.0 is not an integer"),
    "unknown field": (("treez",), [], r"treez: unknown field"),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_refused_naming_file_and_field(model_files, tmp_path, fault):
    keys, value, message = FAULTS[fault]
    path = edited(model_files["lambdamart"], tmp_path, lambda d: set_in(d, keys, value))
    with pytest.raises(ModelFormatError, match=message) as refused:
        load_model(path, verify_checksum=False)
    assert str(refused.value).startswith(str(path))
    with pytest.raises(ModelFormatError):  # and, verified, by the checksum or the header first
        load_model(path)


def test_invalid_utf8_is_refused(model_files, tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(model_files["lambdamart"].read_bytes()[:40] + b"\xff\xfe" + b"}")
    with pytest.raises(ModelFormatError, match=r"binary.json: not UTF-8 text \(byte 40\)"):
        load_model(path)


def test_a_changed_file_fails_its_checksum_and_an_accepted_edit_is_scored_as_edited(model_files, mq2008,
                                                                                    tmp_path):
    X = mq2008[1].X
    original = load_model(model_files["lambdamart"])
    path = edited(model_files["lambdamart"], tmp_path, lambda d: set_in(d, ("base_score",), 1.25))
    with pytest.raises(ModelFormatError, match="does not match its checksum.*verify_checksum=False"):
        load_model(path)
    accepted = load_model(path, verify_checksum=False)
    from twinrank.fast.trees.predict import predict_ensemble

    np.testing.assert_allclose(predict_ensemble(accepted, X) - predict_ensemble(original, X),
                               1.25 - original.base_score, rtol=0, atol=1e-12)
    accepted.save(tmp_path / "resealed.json")  # saving writes a fresh checksum
    assert load_model(tmp_path / "resealed.json").base_score == 1.25


def test_a_version_1_file_without_checksum_is_read(model_files, tmp_path):
    def as_version_1(doc):
        doc["version"] = 1
        del doc["checksum"]
    path = edited(model_files["lambdamart"], tmp_path, as_version_1)
    assert load_model(path).n_trees == load_model(model_files["lambdamart"]).n_trees


def test_load_of_the_wrong_kind_names_both_kinds(model_files):
    with pytest.raises(ModelFormatError, match="'random_forest' model, not a 'lambdamart' model"):
        LambdaMART.load(model_files["forest"])
    with pytest.raises(ModelFormatError, match="'lambdamart' model, not a 'random_forest' model"):
        RandomForest.load(model_files["lambdamart"])
    with pytest.raises(ModelFormatError, match="'lambdamart' model is not an McRank model"):
        McRank.load(model_files["lambdamart"])
    assert reference_lambdamart.LambdaMART.load(model_files["lambdasmart"]).model_.init_model is not None


def test_a_tree_splitting_beyond_the_width_cannot_be_built():
    tree = load_model_tree()
    with pytest.raises(ModelFormatError, match=r"splits on column 3 \(f4\) but the model takes n_features = 2"):
        Ensemble(trees=[tree], tree_weights=[1.0], n_features=2)


def load_model_tree():
    from twinrank.reference.io.model import Tree

    return Tree(feature=[3, -1, -1], threshold=[0.5, 0, 0], bin_threshold=[1, 0, 0], left=[1, -1, -1],
                right=[2, -1, -1], missing=[1, -1, -1], value=[0.0, -1.0, 1.0], gain=[1.0, 0, 0],
                count=[2, 1, 1], hessian_sum=[2.0, 1.0, 1.0])


@pytest.mark.parametrize("command", ["predict", "train-init-model"])
def test_the_cli_refuses_a_bad_model_in_one_line(model_files, mq2008, tmp_path, capsys, command):
    data = tmp_path / "data.txt"
    write_letor(mq2008[1], data)
    bad = edited(model_files["lambdamart"], tmp_path, lambda d: set_in(d, ("trees", 0, "left", 0), 0))
    argv = (["predict", "--model", str(bad), "--data", str(data), "--output", str(tmp_path / "s.txt")]
            if command == "predict" else
            ["train", "--train", str(data), "--model", str(tmp_path / "m.json"), "--init-model", str(bad),
             "--n-trees", "1"])
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "does not match its checksum" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert cli.main(argv + ["--accept-edited-model"]) == 2
    err = capsys.readouterr().err
    assert r"trees[0].left[0] = 0" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "s.txt").exists() and not (tmp_path / "m.json").exists()


# ---------------------------------------------------------------- fuzzing, in a process of its own

VALUES = [-2, -1, 0, 1, 2, 45, 46, 2 ** 31, -(2 ** 31) - 1, 1.5, 1e308, "abc", "inf", "nan", None, True, False,
          [], {}, [0]]


def scalar_paths(doc, prefix=()):
    """Every (keys) path to a number, string, null or boolean in the document (list elements included)."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, value in items:
        if isinstance(value, (dict, list)) and value:
            yield from scalar_paths(value, prefix + (key,))
        else:
            yield prefix + (key,)


@st.composite
def mutations(draw, text: str, paths: list):
    """One mutation of a model file's text: a digit, a byte, a cut, a typed value at a field, a deleted key."""
    kind = draw(st.sampled_from(["digit", "byte", "truncate", "value", "value", "delete"]))
    if kind == "digit":
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        i = draw(st.sampled_from(digits))
        return (text[:i] + str((int(text[i]) + draw(st.integers(1, 9))) % 10) + text[i + 1:]).encode()
    if kind == "byte":
        i = draw(st.integers(0, len(text) - 1))
        return text[:i].encode() + bytes([draw(st.integers(0, 255))]) + text[i + 1:].encode()
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text) - 1))].encode()
    doc = json.loads(text)
    keys = draw(st.sampled_from(paths))
    if kind == "value":
        set_in(doc, keys, draw(st.sampled_from(VALUES)))
    else:
        while not isinstance(_get(doc, keys[:-1]), dict):
            keys = keys[:-1]
        del _get(doc, keys[:-1])[keys[-1]]
    return json.dumps(doc, separators=(",", ":")).encode()


def _get(doc, keys):
    for key in keys:
        doc = doc[key]
    return doc


def scored(files, features, verify: bool, tmp_path) -> list:
    """Score ``files`` in both engines in a new process; fail on a crash, a signal or a hang."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"features": str(features), "verify_checksum": verify,
                                 "files": [str(f) for f in files]}))
    run = subprocess.run([sys.executable, str(SCORER), str(cases)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"the scoring process ended with {run.returncode}:\n{run.stderr[-3000:]}"
    return [json.loads(line) for line in run.stdout.splitlines()]


def fuzz_batches(model_files):
    texts = {kind: path.read_text() for kind, path in model_files.items()}
    return st.sampled_from(sorted(texts)).flatmap(
        lambda kind: st.tuples(st.just(kind), st.lists(mutations(texts[kind], list(scalar_paths(json.loads(
            texts[kind])))), min_size=BATCH, max_size=BATCH)))


def write_batch(batch, tmp_path):
    folder = tmp_path / f"batch{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    files = []
    for i, raw in enumerate(batch):
        files.append(folder / f"m{i}.json")
        files[-1].write_bytes(raw)
    return files


@pytest.mark.slow
@pytest.mark.parametrize("verify", [True, False], ids=["checksum-verified", "edits-accepted"])
def test_fuzzed_model_files_are_refused_or_scored_safely(model_files, features, tmp_path_factory, verify):
    originals = {kind: row for kind, row in zip(model_files, scored(model_files.values(), features, True,
                                                                    tmp_path_factory.mktemp("originals")))}
    for row in originals.values():
        assert "scores" in row["reference"] and row["reference"] == row["fast"]

    @settings(max_examples=FUZZ_EXAMPLES)
    @given(fuzz_batches(model_files))
    def check(kind_and_batch):
        kind, batch = kind_and_batch
        tmp_path = tmp_path_factory.mktemp("fuzz")
        for row in scored(write_batch(batch, tmp_path), features, verify, tmp_path):
            reference, fast = row["reference"], row["fast"]
            assert ("refused" in reference) == ("refused" in fast), row
            if "refused" in reference:
                continue
            if verify:  # an accepted file is the original, as far as any score can tell
                assert reference == originals[kind]["reference"] and fast == originals[kind]["fast"], row["file"]
            else:  # the twins score whatever the loader accepts identically
                np.testing.assert_array_equal(np.array(reference["scores"], dtype=float),
                                              np.array(fast["scores"], dtype=float), err_msg=row["file"])

    check()

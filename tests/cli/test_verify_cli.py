"""``twinrank verify``: the registry on a user's file, its report and JSON, bad input (exit 2),
a perturbed fast kernel caught (exit 1), and no hypothesis needed."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.reference.io.data import Dataset
from twinrank.reference.io.letor import write_letor
from twinrank.testing import REGISTRY

pytestmark = pytest.mark.slow  # its module fixture runs `twinrank verify` on a LETOR file

SHIM = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def letor_file(tmp_path_factory):
    """A small LETOR file: 40 queries of up to 20 documents, continuous features, NaNs (~400 rows).

    Seed 2: some seeds (1, 9, 10) make a McRank classifier split a node whose gain is zero in
    exact arithmetic (all its rows of one class) on rounding noise, differently in each twin;
    ``verify`` reports it as a near-tie (see the split tie rule, docs/agreement.md).
    """
    path = tmp_path_factory.mktemp("verify") / "small.txt"
    write_letor(ranking_data(seed=2, n_queries=40, max_docs=20, missing=0.1), path)
    return str(path)


def verify(capsys, *argv):
    code = main(["verify", "--quiet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def component_lines(out: str) -> dict:
    """{component: line} of the report's table."""
    names = {row.name for row in REGISTRY}
    return {line.split("  ")[0].strip(): line for line in out.splitlines()
            if line.split("  ")[0].strip() in names}


@pytest.fixture(scope="module")
def report(letor_file):
    """The text report and the JSON of one full run each (the slowest part of this file)."""
    import contextlib
    import io

    outputs = {}
    for form in ("text", "json"):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
            code = main(["verify", "--quiet", "--data", letor_file, *(["--json"] if form == "json" else [])])
        outputs[form] = (code, buffer.getvalue())
    return outputs


def test_every_component_agrees_on_a_small_letor_file(report, letor_file):
    code, out = report["text"]
    assert code == 0, out
    lines = component_lines(out)
    assert len(lines) == len(REGISTRY) >= 7
    # labels 0-4: the letor convention's gain table has grades 0-2, so both twins refuse alike
    assert all(line.rstrip().endswith("pass") for name, line in lines.items() if name != "metrics[letor]"), out
    assert " pass  (both twins raise ParameterError: y[" in lines["metrics[letor]"]
    assert f"# twinrank verify: {letor_file}" in out
    assert f"# {len(REGISTRY)} components: {len(REGISTRY)} agree, 0 disagree" in out
    assert "#   LambdaMART: train 30 queries, test 10 queries; n_trees=10" in out  # what was fitted is recorded


def test_json_is_a_list_of_component_records(report):
    code, out = report["json"]
    records = json.loads(out)
    assert code == 0 and isinstance(records, list) and len(records) == len(REGISTRY) >= 7
    for record in records:
        assert {"component", "max_abs_diff", "max_rel_diff", "tolerance", "passed"} <= set(record)
        assert record["passed"] is True and isinstance(record["tolerance"], float)
        assert 0.0 <= record["max_abs_diff"] <= record["tolerance"]
    by_name = {r["component"]: r for r in records}
    assert by_name["grow_tree"]["tolerance"] == 0.0 and by_name["grow_tree"]["tolerance_rule"] == "exact"
    assert by_name["LambdaMART"]["rtol"] == 1e-9 and by_name["LambdaMART"]["atol"] == 1e-12


def test_a_perturbed_fast_kernel_fails_and_is_named(capsys, monkeypatch, letor_file):
    """LambdaRank's fast gradients off by one part in a million: exactly the components that use them fail."""
    from twinrank.fast.losses import objectives

    original = objectives._lambdarank_into  # the one path of the fast twin's lambdas (function and loss)

    def perturbed(y, scores, query_offsets, queries, options, g, h, ranking):
        original(y, scores, query_offsets, queries, options, g, h, ranking)
        g *= 1 + 1e-6

    monkeypatch.setattr(objectives, "_lambdarank_into", perturbed)
    code, out, _ = verify(capsys, "--data", letor_file)
    assert code == 1
    failed = {name for name, line in component_lines(out).items() if " FAIL" in line}
    lambda_models = {"LambdaMART", "LambdaMART[A.L.R.]", "LambdaMART[quantized]", "LambdaMART[least squares]",
                     "LambdaMART[OC]", "DART", "XDART"}  # grown on lambdas
    expected = {row.name for row in REGISTRY if row.name.startswith("lambdarank")} | lambda_models
    assert failed == expected
    assert f"agree, {len(expected)} disagree (lambdarank[ndcg], " in out
    assert "g[" in component_lines(out)["lambdarank[map]"]  # the part and element that differ


def test_a_perturbed_bin_kernel_fails_with_the_element_named(capsys, monkeypatch, letor_file):
    from twinrank.fast.trees import binning

    original = binning.apply_bins

    def off_by_one(X, thresholds):
        binned = np.array(original(X, thresholds))
        binned[3, 1] = (binned[3, 1] + 1) % 255
        return binned

    monkeypatch.setattr(binning, "apply_bins", off_by_one)
    code, out, _ = verify(capsys, "--data", letor_file, "--component", "apply_bins", "--json")
    (record,) = json.loads(out)
    assert code == 1 and record["passed"] is False and record["max_abs_diff"] >= 1
    assert record["detail"].startswith("value[3, 1]: reference ")


@pytest.mark.parametrize("content, where", [
    ("1 qid:1 1:0.5 2:0.1\n0 qid:1 1:abc 2:0.2\n", ":2:"),
    ("1 qid:1 1:0.5\n0 qid:2 1:0.1\n1 qid:1 1:0.3\n", ":3:"),
    ("", "no data rows"),
])
def test_bad_input_exits_2_naming_file_and_line(capsys, tmp_path, content, where):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    code, out, err = verify(capsys, "--data", str(path))
    assert code == 2 and out == ""
    assert err.startswith("twinrank verify: error: ") and str(path) in err and where in err


def test_missing_file_and_bad_options_exit_2(capsys, tmp_path, letor_file):
    assert verify(capsys, "--data", str(tmp_path / "nope.txt"))[0] == 2
    code, _, err = verify(capsys, "--data", letor_file, "--max-rows", "0")
    assert code == 2 and "--max-rows must be at least 1" in err
    code, _, err = verify(capsys, "--component", "no such thing")
    assert code == 2 and "--list" in err


def test_several_files_are_pooled_and_big_data_subsampled(capsys, tmp_path):
    narrow, wide = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    write_letor(ranking_data(seed=2, n_queries=10, n_features=3), narrow)
    write_letor(ranking_data(seed=3, n_queries=15, n_features=5), wide)
    code, out, _ = verify(capsys, "--data", str(narrow), str(wide), "--max-rows", "100",
                          "--component", "bin_thresholds", "--component", "grow_tree")
    assert code == 0, out
    assert f"# twinrank verify: {narrow}, {wide}" in out and "5 features" in out
    assert "# verified on a deterministic subsample (seed 0) of " in out and "of 25 queries" in out


def test_bundled_mq2008_without_data(capsys):
    code, out, _ = verify(capsys, "--max-rows", "300", "--component", "metrics[letor]", "--seed", "3")
    assert code == 0 and "the bundled MQ2008" in out and "46 features" in out and "seed 3" in out


def test_list_and_help(capsys):
    assert main(["verify", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(row.name in out for row in REGISTRY) and "rtol 1e-09, atol 1e-12" in out
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert "exit status: 0 when every component agrees" in capsys.readouterr().out


def test_verify_runs_without_hypothesis(letor_file):
    """twinrank.testing's registry and the command never import hypothesis (not a core dependency)."""
    script = ("import sys; sys.modules['hypothesis'] = None\n"
              "import twinrank.testing\n"
              "from twinrank.cli import main\n"
              f"sys.exit(main(['verify', '--quiet', '--data', {letor_file!r}, '--component', 'apply_bins']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "apply_bins" in done.stdout

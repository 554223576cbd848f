"""``twinrank evaluate``: output formats, conventions, engines, and clear errors with exit code 2."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.evaluation import metrics as ref

LINES = [  # label qid features # docid: two queries, tied scores in the first
    "2 qid:7 1:0.1 2:0.5 #docid = D3",
    "0 qid:7 1:0.9 2:0.1 #docid = D1",
    "1 qid:7 1:0.5 2:0.2 #docid = D2",
    "0 qid:7 1:0.5 2:0.3 #docid = D4",
    "0 qid:9 1:0.2 2:0.0 #docid = E1",
    "1 qid:9 1:0.3 2:0.4 #docid = E2",
]
SCORES = [0.2, 0.9, 0.5, 0.5, 1.0, -1.0]
Y = np.array([2, 0, 1, 0, 0, 1], dtype=float)
OFFSETS = np.array([0, 4, 6])


@pytest.fixture
def files(tmp_path):
    data, scores = tmp_path / "test.txt", tmp_path / "scores.txt"
    data.write_text("\n".join(LINES) + "\n")
    scores.write_text("\n".join(map(str, SCORES)) + "\n")
    return str(data), str(scores), tmp_path


def run(capsys, *argv):
    code = main(["evaluate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("convention", ["lightgbm", "ranklib", "letor"])
def test_json_means_are_the_library_s(capsys, files, engine, convention):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--metric", "ndcg@3,map",
                       "--metric", "err@2", "--convention", convention, "--json", "--engine", engine)
    assert code == 0
    expected = ref.evaluate(["ndcg@3", "map", "err@2"], Y, np.array(SCORES), OFFSETS, convention=convention)
    printed = json.loads(out)
    assert printed.pop("convention") == convention  # every number printed names its convention
    assert printed == pytest.approx(expected, rel=1e-15)
    assert list(printed) == ["ndcg@3", "map", "err@2"]


def test_trec_convention_breaks_ties_by_the_comment_doc_ids(capsys, files):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--metric", "rr", "--convention", "trec",
                       "--per-query", "--json")
    assert code == 0
    # query 7 ranks D1 (0.9), then the tie D4 before D2 (descending id), then D3: first relevant at rank 3
    assert json.loads(out) == {"convention": "trec", "qids": ["7", "9"], "rr": [1 / 3, 1 / 2]}


def test_plain_output_is_an_aligned_table(capsys, files):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--metric", "ndcg@1,meanndcg")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("# 2 queries, 6 rows, convention lightgbm")
    assert lines[1].split() == ["ndcg@1", f"{ref.evaluate('ndcg@1', Y, np.array(SCORES), OFFSETS)['ndcg@1']:.6f}"]
    assert lines[1].index(lines[1].split()[1]) == lines[2].index(lines[2].split()[1])  # values aligned


def test_per_query_table_names_the_convention(capsys, files):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--metric", "p@2", "--per-query",
                       "--convention", "letor")
    assert code == 0 and out.splitlines()[0].startswith("# 2 queries, 6 rows, convention letor")


def test_per_query_table_has_a_row_per_query(capsys, files):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--metric", "p@2", "--per-query")
    assert code == 0
    assert [line.split() for line in out.splitlines()[1:]] == [["qid", "p@2"], ["7", "0.500000"], ["9", "0.500000"]]


def test_default_metrics(capsys, files):
    data, scores, _ = files
    code, out, _ = run(capsys, "--data", data, "--scores", scores, "--json")
    assert code == 0 and list(json.loads(out)) == ["convention", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map",
                                                    "p@10", "err@10", "mrr"]


@pytest.mark.parametrize("case, message", [
    ("short_scores", "holds 5 scores but 6 were expected"),
    ("bad_score", "scores.txt:2"),
    ("bad_metric", "unknown metric 'ndgc@10'"),
    ("missing_data", "--data"),  # "--data .../nope.txt: no such file"
    ("trec_without_ids", "docid"),
])
def test_bad_input_exits_2_with_a_clear_message(capsys, files, case, message):
    data, scores, tmp = files
    argv = ["--data", data, "--scores", scores]
    if case == "short_scores":
        (tmp / "scores.txt").write_text("\n".join(map(str, SCORES[:5])) + "\n")
    elif case == "bad_score":
        (tmp / "scores.txt").write_text("0.1\nabc\n" + "\n".join(map(str, SCORES[2:])) + "\n")
    elif case == "bad_metric":
        argv += ["--metric", "ndcg@3,ndgc@10"]
    elif case == "missing_data":
        argv[1] = str(tmp / "nope.txt")
    else:
        (tmp / "test.txt").write_text("\n".join(line.split("#")[0] for line in LINES) + "\n")
        argv += ["--convention", "trec"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("twinrank evaluate: error:") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("indent", [None, 1])
def test_a_model_file_given_as_scores_is_named_and_not_echoed(capsys, files, indent):
    data, _, tmp = files
    model = {"format": "twinrank-model", "version": 2, "params": {f"p{i}": i for i in range(2000)}}
    (tmp / "m.json").write_text(json.dumps(model, indent=indent))
    code, out, err = run(capsys, "--data", data, "--scores", str(tmp / "m.json"))
    assert code == 2 and len(err.splitlines()) == 1 and len(err) < 250 + len(str(tmp)) and "Traceback" not in err
    assert "m.json:1: '{" in err and "looks like a model file (JSON), not a score file" in err


def test_a_long_bad_score_line_is_cut(capsys, files):
    data, scores, tmp = files
    (tmp / "scores.txt").write_text("0.1\n" + "x" * 5000 + "\n")
    code, out, err = run(capsys, "--data", data, "--scores", scores)
    assert code == 2 and f"scores.txt:2: score '{'x' * 60}...' is not a number" in err and len(err) < 150 + len(str(tmp))


def test_help_describes_metrics_and_conventions(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for word in ("--data", "--scores", "--metric", "--convention", "--per-query", "--json", "--query-file",
                 "--engine", "--drop", "single-label", "meanndcg", "pauc", "Eval-Score-4.0.pl", "trec_eval",
                 "exit status"):
        assert word in out, word


def test_the_installed_command_runs(files):
    data, scores, _ = files
    command = shutil.which("twinrank")
    argv = [command] if command else [sys.executable, "-m", "twinrank.cli"]
    done = subprocess.run([*argv, "evaluate", "--data", data, "--scores", scores, "--metric", "ndcg@3", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    printed = {k: v for k, v in json.loads(done.stdout).items() if k != "convention"}
    assert printed == pytest.approx(ref.evaluate(["ndcg@3"], Y, np.array(SCORES), OFFSETS))


DROP_LINES = LINES + ["1 qid:11 1:0.4 2:0.1 #docid = G1", "1 qid:11 1:0.6 2:0.2 #docid = G2",
                      "0 qid:12 1:0.1 2:0.1 #docid = H1"]  # query 11: one label twice; query 12: one document


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_drop_single_label_evaluates_the_other_queries_and_says_how_many(capsys, tmp_path, engine):
    data, scores = tmp_path / "test.txt", tmp_path / "scores.txt"
    data.write_text("\n".join(DROP_LINES) + "\n")
    scores.write_text("\n".join(map(str, SCORES + [0.3, -0.2, 0.0])) + "\n")
    argv = ["--data", str(data), "--scores", str(scores), "--metric", "ndcg,map", "--engine", engine]
    code, out, err = run(capsys, *argv, "--drop", "single-label", "--per-query", "--json")
    assert code == 0
    assert "dropped 2 of 4 queries whose documents all have one label" in err
    printed = json.loads(out)
    expected = ref.evaluate(["ndcg", "map"], Y, np.array(SCORES), OFFSETS, per_query=True)
    assert printed["qids"] == ["7", "9"]
    assert printed["ndcg"] == list(expected["ndcg"]) and printed["map"] == list(expected["map"])
    code, out, err = run(capsys, *argv, "--drop", "single-label")
    assert code == 0 and "; 2 single-label queries dropped" in out.splitlines()[0]
    assert out.splitlines()[0].startswith("# 2 queries, 6 rows")
    code, out, _ = run(capsys, *argv)  # without --drop every query counts
    assert code == 0 and out.startswith("# 4 queries, 9 rows")


def test_drop_leaving_no_query_exits_2(capsys, tmp_path):
    data, scores = tmp_path / "test.txt", tmp_path / "scores.txt"
    data.write_text("1 qid:1 1:0.5\n1 qid:1 1:0.2\n0 qid:2 1:0.1\n")
    scores.write_text("0.1\n0.2\n0.3\n")
    code, out, err = run(capsys, "--data", str(data), "--scores", str(scores), "--drop", "single-label")
    assert code == 2 and out == ""
    assert "nothing is left to evaluate after --drop single-label" in err and "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["evaluate", "--data", str(data), "--scores", str(scores), "--drop", "one-label"])
    assert "invalid choice: 'one-label'" in capsys.readouterr().err

"""The course's exercises: every stub fails its check with a counterexample, every
reference solution passes, every plausible mistake is caught; the CLI's exit codes and JSON."""
import ast
import inspect
import json

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.grading import _mistakes as mistakes, exercises
from twinrank.grading._grader import check
from twinrank.grading._worker import load_function
from twinrank.testing.registry import TOLERANCES, names as registry_names

EXERCISES = exercises.EXERCISES
IDS = [e.name for e in EXERCISES]


def write(directory, exercise, source):
    (directory / f"{exercise.name}.py").write_text(source)
    return directory


def test_at_least_ten_exercises_two_per_lesson_one_to_five():
    assert len(EXERCISES) >= 10 and len(set(IDS)) == len(IDS)
    for lesson in range(1, 6):
        assert sum(e.lesson == lesson for e in EXERCISES) >= 2, lesson


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_each_row_names_real_things(exercise):
    assert exercise.lesson in exercises.LESSONS and exercise.tolerance in TOLERANCES
    assert exercise.registry is None or exercise.registry in registry_names()
    module, name = exercise.twin.split(".")
    assert callable(getattr(__import__(f"twinrank.fast.{module}", fromlist=[name]), name))
    assert callable(getattr(mistakes, exercise.name)) and exercise.solution.__doc__


def imported(text: str) -> list:
    """The modules a file imports from, one entry per imported name."""
    nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return [getattr(node, "module", None) or alias.name for node in nodes for alias in node.names]


def in_reference(module: str) -> bool:
    return module == "twinrank.reference" or module.startswith("twinrank.reference.")


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_each_solution_is_the_reference_twins_own_function(exercise):
    """No third implementation: a solution is a reference function, or calls one (its file imports the reference)."""
    from_reference = [m for m in imported(exercises.solution_source(exercise)) if in_reference(m)]
    assert in_reference(exercise.solution.__module__) or from_reference


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_file_imports_and_the_stub_keeps_the_statement(exercise):
    solution, stub = exercises.solution_source(exercise), exercises.stub_source(exercise)
    assert imported(stub) == ["numpy"]
    assert imported(solution)[0] == "numpy"
    assert all(in_reference(m) for m in imported(solution)[1:])
    assert exercise.solution.__doc__.strip().splitlines()[0] in stub  # the statement, math included
    assert stub.count("$") == solution.count("$") >= 2
    function = ast.parse(stub).body[-1]
    assert isinstance(function.body[-1], ast.Raise) and len(function.body) == 2  # docstring, raise


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_stub_fails_with_a_counterexample(exercise, tmp_path):
    report = check(exercise, write(tmp_path, exercise, exercises.stub_source(exercise)))
    assert report.status == "fail" and report.exit_code == 1
    assert "NotImplementedError" in report.message and report.counterexample and report.expected
    assert "smallest failing input" in report.text()


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_reference_solution_passes(exercise, tmp_path):
    report = check(exercise, write(tmp_path, exercise, exercises.solution_source(exercise)))
    assert report.status == "pass", report.text()
    assert report.exit_code == 0 and report.examples >= 1


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_a_plausible_mistake_fails(exercise, tmp_path):
    source = "import numpy as np\n\n\n" + inspect.getsource(getattr(mistakes, exercise.name))
    report = check(exercise, write(tmp_path, exercise, source), shrink=False)
    assert report.status == "fail", report.text()
    assert report.given is not None  # a wrong value, not an exception
    assert report.counterexample is not None


def test_shrinking_finds_a_small_counterexample_and_grades_are_reproducible(tmp_path):
    exercise = exercises.get("minmax_per_query")
    write(tmp_path, exercise, "import numpy as np\n\n\n" + inspect.getsource(mistakes.minmax_per_query))
    first, second = check(exercise, tmp_path), check(exercise, tmp_path)
    assert first.text() == second.text()  # derandomized: the same examples, the same report
    np.testing.assert_array_equal(first.counterexample["query_offsets"], [0, 1])  # one document
    assert first.expected["value"].tolist() == [[0.5]] and first.given["value"].tolist() == [[0.0]]


def test_a_file_that_cannot_be_graded_is_an_error(tmp_path):
    exercise = exercises.get("dcg")
    assert check(exercise, tmp_path).exit_code == 2  # no file
    for source, reason in [("def dcg(:\n", "SyntaxError"), ("import numpy as np\n1 / 0\n", "ZeroDivisionError"),
                           ("def ndcg(labels, scores):\n    return 0.0\n", "no function 'dcg'")]:
        write(tmp_path, exercise, source)
        report = check(exercise, tmp_path)
        assert report.status == "error" and reason in report.message
    with pytest.raises(ImportError):
        load_function(str(tmp_path / "dcg.py"), str(tmp_path / "dcg.py"), "dcg")


def test_a_function_that_returns_the_wrong_kind_of_thing_fails(tmp_path):
    exercise = exercises.get("best_split")
    write(tmp_path, exercise, "def best_split(hist, n_bins, lambda_l2, min_rows):\n    return 1.0\n")
    report = check(exercise, tmp_path, max_examples=5)
    assert report.status == "fail" and "expected None or a tuple" in report.message


def test_an_endless_loop_fails_on_its_input_instead_of_hanging(tmp_path):
    exercise = exercises.get("dcg")
    write(tmp_path, exercise, "def dcg(*args, **kwargs):\n    while True:\n        pass\n")
    report = check(exercise, tmp_path, max_examples=5, call_seconds=0.5)
    assert report.status == "fail" and "longer than 0.5 s" in report.message
    assert report.counterexample is not None and report.expected is not None


# ---------------------------------------------------------------- the command line

def test_check_leaves_no_hypothesis_folder_in_the_working_directory(tmp_path, monkeypatch, capsys):
    from hypothesis.configuration import storage_directory
    before = storage_directory(intent_to_write=False).home_directory
    monkeypatch.chdir(tmp_path)
    assert main(["exercise", "start", "dcg", "course"]) == 0
    assert main(["exercise", "check", "dcg", "course", "--max-examples", "5"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course"]
    assert storage_directory(intent_to_write=False).home_directory == before  # restored for the caller


def test_cli_list_start_check_solve(tmp_path, capsys):
    assert main(["exercise", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in IDS) and "lesson 1:" in listed
    assert main(["exercise", "list", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == IDS

    folder = str(tmp_path / "course")
    assert main(["exercise", "start", "newton_leaf_value", folder]) == 0
    assert "newton_leaf_value" in (tmp_path / "course" / "README.md").read_text()
    assert main(["exercise", "start", "newton_leaf_value", folder]) == 2  # the student's work is kept
    capsys.readouterr()
    assert main(["exercise", "check", "newton_leaf_value", folder]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "smallest failing input" in out and "gradients = array(" in out
    assert main(["exercise", "solve", "newton_leaf_value", folder]) == 0
    assert (tmp_path / "course" / "newton_leaf_value.py.bak").exists()
    assert main(["exercise", "check", "newton_leaf_value", folder]) == 0
    assert "pass" in capsys.readouterr().out
    assert main(["exercise", "check", "no_such_exercise", folder]) == 2


def json_lines(out: str) -> list:
    """The records of ``check --json``: one JSON object a line, nothing else on standard output."""
    return [json.loads(line) for line in out.splitlines()]


def test_cli_batch_json_for_a_class(tmp_path, capsys):
    good, wrong, broken = (tmp_path / n for n in ("good", "wrong", "broken"))
    exercise = exercises.get("subsample")
    for folder in (good, wrong, broken):
        folder.mkdir()
    write(good, exercise, exercises.solution_source(exercise))
    write(wrong, exercise, "import numpy as np\n\n\n" + inspect.getsource(mistakes.subsample))
    write(broken, exercise, "import numpy_typo\n")
    assert main(["exercise", "check", "subsample", str(good), "--json"]) == 0
    assert json_lines(capsys.readouterr().out)[0]["passed"] is True
    assert main(["exercise", "check", "subsample", str(good), str(wrong)]) == 1
    assert "2 files: 1 pass, 1 fail, 0 error" in capsys.readouterr().out
    assert main(["exercise", "check", "all", str(good), str(wrong), str(broken), "--json",
                 "--no-shrink"]) == 2
    records = json_lines(capsys.readouterr().out)
    assert [r["status"] for r in records] == ["pass", "fail", "error"]
    assert records[1]["counterexample"]["n"] >= 1 and isinstance(records[1]["expected"]["value"], list)
    assert "ModuleNotFoundError" in records[2]["message"]
    json.dumps(records)  # plain JSON all the way down


def test_the_readme_exercise_commands_run_as_written(tmp_path, monkeypatch, capsys):
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```bash\n(twinrank exercise list.*?)```", readme, re.S).group(1)
    commands = [shlex.split(line.split("#", 1)[0]) for line in block.splitlines() if line.strip()]
    monkeypatch.chdir(tmp_path)
    codes = []
    for words in commands:
        capsys.readouterr()
        codes.append(main(words[1:] + (["--no-shrink"] if words[2] == "check" else [])))
    assert codes == [0, 0, 1, 0, 0, 0], (commands, codes)
    assert json_lines(capsys.readouterr().out)[0]["passed"]  # the last: check all --json

"""A hostile class: each student runs in a process of its own, and nothing a file does reaches the
grader, a classmate, or the grades (the promises of docs/reliability.md, "The course grader")."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from twinrank.cli import main
from twinrank.grading import exercises
from twinrank.grading._grader import check

DCG = exercises.get("dcg")
GOOD = exercises.solution_source(DCG)
RETURN = "    return metrics.dcg("
FAST = {"max_examples": 5}  # a verdict needs few calls; the limits below are the test's


def at_import(line: str) -> str:
    """The reference solution with ``line`` run when the file is imported."""
    return GOOD + "\n" + line + "\n"


def in_function(*lines: str) -> str:
    """The reference solution with ``lines`` run at each call, before it returns."""
    return GOOD.replace(RETURN, "".join(f"    {line}\n" for line in lines) + RETURN)


def student(folder: Path, source: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dcg.py").write_text(source)
    return str(folder)


def graded(folder: Path, source: str, **limits):
    return check(DCG, student(folder, source), **{**FAST, **limits})


def json_lines(out: str) -> list:
    return [json.loads(line) for line in out.splitlines()]


def gone(pid: int, seconds: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaps counts as ended), waiting up to ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_exits_and_interrupts_end_one_students_grading_not_the_class(tmp_path, capsys):
    files = {"exit_at_import": at_import("import sys; sys.exit(0)"),
             "os_exit_at_import": at_import("import os; os._exit(0)"),
             "interrupt_at_import": at_import("raise KeyboardInterrupt"),
             "exit_in_function": in_function("import sys; sys.exit(0)"),
             "os_exit_in_function": in_function("import os; os._exit(0)"),
             "interrupt_in_function": in_function("raise KeyboardInterrupt"),
             "good": GOOD}
    folders = [student(tmp_path / name, source) for name, source in files.items()]
    assert main(["exercise", "check", "dcg", *folders, "--json", "--max-examples", "5"]) == 2
    records = json_lines(capsys.readouterr().out)
    assert [r["path"] for r in records] == [f"{folder}/dcg.py" for folder in folders]  # everyone, in order
    assert [r["status"] for r in records] == ["error"] * 3 + ["fail"] * 3 + ["pass"]
    assert "SystemExit: 0" in records[0]["message"] and "exit status 0" in records[1]["message"]
    assert "KeyboardInterrupt" in records[2]["message"]
    assert "raised SystemExit: 0" in records[3]["message"] and "exit status 0" in records[4]["message"]
    assert "raised KeyboardInterrupt" in records[5]["message"]
    assert records[4]["counterexample"] is not None and records[4]["expected"] is not None


def test_an_endless_loop_at_import_is_an_error_after_the_import_limit(tmp_path):
    report = graded(tmp_path, at_import("while True:\n    pass"), import_seconds=1.0)
    assert report.status == "error" and "cannot be imported: it ran longer than 1 s" in report.message


def test_ignoring_sigalrm_does_not_escape_the_call_limit(tmp_path):
    report = graded(tmp_path, in_function("import signal", "signal.signal(signal.SIGALRM, signal.SIG_IGN)",
                                          "while True:", "    pass"), call_seconds=0.5)
    assert report.status == "fail" and "longer than 0.5 s" in report.message
    assert report.counterexample is not None and report.expected is not None


def test_the_whole_file_has_a_time_limit(tmp_path):
    report = graded(tmp_path, in_function("import time", "time.sleep(0.3)"), file_seconds=1.0, max_examples=50)
    assert report.status == "fail" and "took longer than 1 s in all" in report.message


def test_a_file_that_patches_the_grader_fails_and_the_next_passes(tmp_path, capsys):
    patcher = (GOOD.split("def dcg")[0]
               + "import twinrank.fast.evaluation.metrics as fast_metrics\n"
               + "import twinrank.testing._compare as compare\n"
               + "fast_metrics.dcg = lambda labels, scores, offsets, **kw: np.zeros(len(offsets) - 1)\n"
               + "compare.compare_twins = lambda *a, **kw: type('Passed', (), {'passed': True, 'detail': ''})()\n"
               + "def dcg(labels, scores, k=None, gain='exp2', discount='log2'):\n    return 0.0\n")
    folders = [student(tmp_path / "patcher", patcher), student(tmp_path / "good", GOOD)]
    assert main(["exercise", "check", "dcg", *folders, "--json", "--max-examples", "20", "--jobs", "1"]) == 1
    assert [r["status"] for r in json_lines(capsys.readouterr().out)] == ["fail", "pass"]


def test_a_student_runs_in_a_fresh_interpreter_in_a_folder_of_its_own(tmp_path, monkeypatch):
    seen = tmp_path / "seen.json"
    probe = ("import json, os, sys\n"
             f"json.dump({{'cwd': os.getcwd(), 'files': os.listdir('.'), 'isolated': sys.flags.isolated, "
             f"'pid': os.getpid(), 'numpy': 'numpy' in sys.modules}}, open({str(seen)!r}, 'w'))")
    monkeypatch.chdir(tmp_path)
    report = graded(tmp_path / "class" / "a", at_import(probe))
    assert report.status == "pass", report.text()
    facts = json.loads(seen.read_text())
    assert facts["files"] == ["dcg.py"] and facts["isolated"] == 1 and facts["pid"] != os.getpid()
    assert Path(facts["cwd"]) != tmp_path and not Path(facts["cwd"]).exists()  # its folder, removed after
    assert not Path(facts["cwd"]).is_relative_to(tmp_path)


def test_a_student_deleting_files_in_its_working_directory_reaches_none_of_the_graders(tmp_path, monkeypatch,
                                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("the lecturer's")
    vandal = at_import("import os; os.system('rm -f grades.csv notes.txt')")
    folders = [student(tmp_path / name, source) for name, source in [("a", GOOD), ("vandal", vandal),
                                                                      ("c", GOOD)]]
    assert main(["exercise", "check", "dcg", *folders, "--csv", "grades.csv", "--max-examples", "5"]) == 0
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    assert rows[0] == "path,exercise,status,passed,examples,message" and len(rows) == 4
    assert (tmp_path / "notes.txt").read_text() == "the lecturer's"


def test_a_classmates_file_is_graded_as_it_was_when_grading_started(tmp_path, capsys):
    victim = tmp_path / "victim"
    bully = at_import(f"open({str(victim / 'dcg.py')!r}, 'w').write('def dcg(*a, **k):\\n    return 0.0\\n')")
    folders = [student(tmp_path / "bully", bully), student(victim, GOOD)]
    assert main(["exercise", "check", "dcg", *folders, "--max-examples", "5"]) == 0
    captured = capsys.readouterr()
    assert "2 files: 2 pass" in captured.out
    assert f"{victim / 'dcg.py'} changed while the class was graded" in captured.err


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_background_child_does_not_outlive_the_grading(tmp_path):
    pid_file = tmp_path / "child.pid"
    spawn = (f"import subprocess, sys\n"
             f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
             f"open({str(pid_file)!r}, 'w').write(str(child.pid))")
    assert graded(tmp_path / "a", at_import(spawn)).status == "pass"
    assert gone(int(pid_file.read_text()))


def test_what_a_student_prints_goes_into_its_record_not_into_the_json(tmp_path, capsys):
    chatty = in_function("print('debugging', labels)", "print('x' * 10000)")
    folders = [student(tmp_path / "chatty", chatty), student(tmp_path / "good", GOOD)]
    assert main(["exercise", "check", "dcg", *folders, "--json", "--max-examples", "5"]) == 0
    records = json_lines(capsys.readouterr().out)  # every line of standard output is a record
    assert [r["status"] for r in records] == ["pass", "pass"]
    assert records[0]["stdout"].startswith("debugging [") and "more bytes]" in records[0]["stdout"]
    assert len(records[0]["stdout"]) < 4100 and records[1]["stdout"] == ""


def test_a_failing_report_shows_the_end_of_what_the_file_printed(tmp_path):
    report = graded(tmp_path, in_function("print('my trace', k)", "raise ValueError('oops')"))
    assert report.status == "fail" and "it printed (stdout" in report.text() and "my trace" in report.text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux only")
def test_a_memory_hog_meets_the_memory_limit(tmp_path):
    report = graded(tmp_path, in_function("hog = bytearray(4 * 2**30)"), memory_mb=768)
    assert report.status == "fail" and "MemoryError" in report.message and "768 MiB" in report.message


def test_an_answer_that_is_not_a_message_is_refused_and_never_unpickled(tmp_path):
    planted = tmp_path / "unpickled"
    payload = b"cos\nsystem\n(S'touch " + str(planted).encode() + b"'\ntR."  # a pickle running os.system
    forger = in_function("import os, struct",
                         f"frame = struct.pack('>Q', {len(payload)}) + {payload!r}",
                         "for fd in range(3, 1024):",
                         "    try:",
                         "        os.write(fd, frame)",
                         "    except OSError:",
                         "        pass")
    report = graded(tmp_path / "a", forger)
    assert report.status == "fail" and "not a message" in report.message
    assert not planted.exists()


def test_grading_with_more_jobs_gives_the_same_records_in_the_same_order(tmp_path, capsys):
    wrong = GOOD.replace("gain=gain", "gain='linear'")
    folders = [student(tmp_path / name, source) for name, source in
               [("a", GOOD), ("b", wrong), ("c", at_import("1 / 0")), ("d", GOOD)]]
    outputs = []
    for jobs in ("1", "3"):
        assert main(["exercise", "check", "dcg", *folders, "--json", "--no-shrink", "--max-examples", "30",
                     "--jobs", jobs]) == 2
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert [r["status"] for r in json_lines(outputs[0])] == ["pass", "fail", "error", "pass"]


def start_grading(tmp_path: Path, *, loop_pid: Path) -> subprocess.Popen:
    """``twinrank exercise check`` of a good file then one looping at import, writing JSON and CSV."""
    looping = at_import(f"import os\nopen({str(loop_pid)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    pass")
    folders = [student(tmp_path / "good", GOOD), student(tmp_path / "looping", looping)]
    command = [sys.executable, "-c", "import sys; from twinrank.cli import main; sys.exit(main(sys.argv[1:]))",
               "exercise", "check", "dcg", *folders, "--json", "--csv", str(tmp_path / "grades.csv"),
               "--jobs", "1", "--max-examples", "5"]
    return subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_each_record_is_written_as_soon_as_its_file_is_graded_and_an_interrupt_kills_the_students(tmp_path):
    loop_pid = tmp_path / "loop.pid"
    grader = start_grading(tmp_path, loop_pid=loop_pid)
    first = json.loads(grader.stdout.readline())  # while the grader still waits on the second file
    assert first["status"] == "pass" and first["path"].endswith("good/dcg.py")
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith(first["path"])
    while not loop_pid.exists() or not loop_pid.read_text():
        assert grader.poll() is None
        time.sleep(0.05)
    grader.send_signal(signal.SIGINT)  # Ctrl-C
    out, err = grader.communicate(timeout=60)
    said = [line for line in err.splitlines() if not line.startswith("twinrank: ")]  # not a compile notice
    assert grader.returncode == 130 and out == "" and len(said) == 1
    assert said[0].startswith("twinrank exercise: interrupted (Ctrl-C); 1 of 2 files graded, reported above and in ")
    assert gone(int(loop_pid.read_text()))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_student_does_not_outlive_a_grader_that_is_killed(tmp_path):
    loop_pid = tmp_path / "loop.pid"
    grader = start_grading(tmp_path, loop_pid=loop_pid)
    grader.stdout.readline()
    while not loop_pid.exists() or not loop_pid.read_text():
        time.sleep(0.05)
    grader.kill()
    grader.communicate()
    assert gone(int(loop_pid.read_text()))  # the student's own watchdog saw its grader go

"""A wrong command line prints one line ``twinrank COMMAND: error: ...`` and one hint, exit 2."""
import subprocess
import sys

import pytest

from twinrank.cli import main

CASES = [  # (argv, the command's prog, a phrase of the message)
    (["train", "--train", "t.txt", "--model", "m.json", "--bogus"], "twinrank train",
     "unrecognized arguments: --bogus"),
    (["predict", "--data", "test.txt"], "twinrank predict", "required: --model"),
    (["evaluate", "--data", "t.txt", "--scores", "s.txt", "--convention", "nope"], "twinrank evaluate",
     "argument --convention: invalid choice: 'nope'"),
    (["compare", "--permutations", "many"], "twinrank compare", "argument --permutations: invalid int value"),
    (["grid", "--folds", "mq2008", "--output", "r.csv", "--seeds", "3.5"], "twinrank grid",
     "argument --seeds: invalid int value: '3.5'"),
    (["diagnose", "bias-variance", "--algorithm", "gbrt", "--train", "t.txt", "--test", "t.txt", "--bogus"],
     "twinrank diagnose bias-variance", "unrecognized arguments: --bogus"),
    (["diagnose", "bias-variance", "--bogus"], "twinrank diagnose bias-variance", "required: --algorithm"),
    (["data", "path", "nope"], "twinrank data path", "invalid choice: 'nope'"),
    (["bogus"], "twinrank", "argument COMMAND: invalid choice: 'bogus'"),
    ([], "twinrank", "required: COMMAND"),
]


@pytest.mark.parametrize("argv, prog, phrase", CASES, ids=[" ".join(c[0]) or "no command" for c in CASES])
def test_a_usage_error_is_one_line_and_a_hint(capsys, argv, prog, phrase):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2
    assert out == ""
    error, hint = err.splitlines()
    assert error.startswith(f"{prog}: error: ") and phrase in error
    assert hint == f"see {prog} --help"


def test_the_installed_command_prints_no_usage_and_no_traceback():
    result = subprocess.run([sys.executable, "-m", "twinrank.cli", "inspect", "--model"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["twinrank inspect: error: argument --model: expected one argument",
                                          "see twinrank inspect --help"]


@pytest.mark.parametrize("argv, status", [(["data", "path", "mq2008"], 0), (["data", "mq2008", "--fold", "9"], 2)])
def test_the_program_returns_the_commands_status_with_the_collector_frozen(argv, status):
    """``command`` (the console script, ``python -m twinrank.cli``) is ``main`` and then ``gc.freeze()``:
    the interpreter's exit skips one last walk over the objects numba's compilations left."""
    code = f"""import gc, sys
from twinrank.cli import command
sys.argv = ["twinrank", *{argv!r}]
try:
    status = command()
except SystemExit as exit_:  # argparse's usage errors
    status = exit_.code
print(status, gc.get_freeze_count() > 0)"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.splitlines()[-1] == f"{status} {status == 0}", result.stdout + result.stderr

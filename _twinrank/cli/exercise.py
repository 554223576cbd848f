"""``twinrank exercise``: the course's exercises, written by students, graded against the fast twin."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from twinrank.reference.errors import ParameterError

DESCRIPTION = """\
The course's exercises (the documentation's Course section): each is one function a
student writes in NumPy, as the reference twin would, graded against the fast twin on
inputs hypothesis generates (ties, one-document queries, all-equal labels, missing
values), the same inputs on every machine (with the same hypothesis version).

  twinrank exercise list                 the exercises, lesson by lesson
  twinrank exercise start NAME DIR       write DIR/NAME.py (signature, docstring with the
                                         math, body `raise NotImplementedError`) and DIR/README.md
  twinrank exercise check NAME DIR       grade DIR/NAME.py: pass, or the smallest input on
                                         which it differs, with the expected and given values
  twinrank exercise solve NAME DIR       write the reference solution (teacher mode)

check takes several folders (a class: `check dcg students/*`), NAME `all` (every exercise
file present in each folder), --json (one JSON record a line, each as soon as the file is
graded) and --csv FILE (the grades so far, rewritten after each file). Every file is read
before any is run, then graded in a fresh Python process of its own, in a temporary folder
holding only a copy of it, 2 at a time (--jobs): its import may take 30 s, a call of its
function 10 s, the whole file 300 s, its memory --memory-mb (Linux); its output is captured
into its record. This keeps students from each other and from the grader; it is not a
sandbox for hostile code (the documentation's Course section: run it in a container).
exit status of check: 0 every file passes, 1 one fails, 2 one cannot be imported
(the message says why: no file, a syntax error, no function NAME).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("exercise", help="the course's exercises: list, start, check, solve",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the exercises, lesson by lesson")
    listing.add_argument("--json", action="store_true", help="one JSON object per exercise")
    start = actions.add_parser("start", help="write the stub NAME.py and a README into DIR")
    solve = actions.add_parser("solve", help="write the reference solution NAME.py into DIR (teacher mode)")
    for action in (start, solve):
        action.add_argument("name", metavar="NAME", help="an exercise (`twinrank exercise list`)")
        action.add_argument("directory", metavar="DIR", help="the folder (made if needed)")
    start.add_argument("--force", action="store_true", help="overwrite an existing NAME.py")
    check = actions.add_parser("check", help="grade DIR/NAME.py against the fast twin")
    check.add_argument("name", metavar="NAME", help="an exercise, or `all` (every NAME.py found in DIR)")
    check.add_argument("directories", metavar="DIR", nargs="+", help="folder(s) holding NAME.py")
    check.add_argument("--json", action="store_true",
                       help="print one JSON record a line, each as soon as its file is graded: exercise, "
                            "path, status (pass/fail/error), passed, examples (calls of the function, "
                            "shrinking included), graded_by, tolerance, message, counterexample, expected, "
                            "given, stdout, stderr (what the file printed, cut to 4000 bytes)")
    check.add_argument("--csv", metavar="FILE",
                       help="also write the grades to FILE (path, exercise, status, passed, examples, "
                            "message), rewritten atomically after each file")
    check.add_argument("--jobs", type=int, default=2, metavar="N",
                       help="files graded at a time, each in a process of its own (default: 2)")
    check.add_argument("--memory-mb", type=int, default=2048, metavar="MB",
                       help="the memory (address space) of each student's process, on Linux (default: 2048)")
    check.add_argument("--max-examples", type=int, metavar="N",
                       help="generated inputs per file (default: the exercise's, 150)")
    check.add_argument("--no-shrink", action="store_true",
                       help="report the first failing input found, not the smallest (quicker for a class)")
    p.set_defaults(run=run)


def run(args) -> int:
    return {"list": _list, "start": _start, "solve": _solve, "check": _check}[args.action](args)


def _exercise(name: str):
    from twinrank.grading import exercises

    try:
        return exercises.get(name)
    except KeyError:
        raise ParameterError(f"unknown exercise {name!r}; `twinrank exercise list` shows them") from None


def _list(args) -> int:
    from twinrank.grading.exercises import EXERCISES, LESSONS

    if args.json:
        print(json.dumps([{"name": e.name, "lesson": e.lesson, "title": e.title,
                           "graded_by": f"twinrank.fast.{e.twin}",
                           "wrapper": e.wrapper, "registry": e.registry, "tolerance": e.tolerance,
                           "reading": e.reading} for e in EXERCISES], indent=1))
        return 0
    for lesson, title in LESSONS.items():
        rows = [e for e in EXERCISES if e.lesson == lesson]
        if rows:
            print(f"lesson {lesson}: {title}")
            for e in rows:
                print(f"  {e.name:<20} {e.title}  [twinrank.fast.{e.twin}]")
    return 0


def _start(args) -> int:
    from twinrank.grading.exercises import stub_source

    exercise = _exercise(args.name)
    path = Path(args.directory) / f"{exercise.name}.py"
    if path.exists() and not args.force:
        raise ParameterError(f"{path} exists (your work?); --force overwrites it")
    _write(path, stub_source(exercise))
    _write_readme(Path(args.directory))
    print(f"wrote {path} and {Path(args.directory) / 'README.md'}; "
          f"then: twinrank exercise check {exercise.name} {args.directory}")
    return 0


def _solve(args) -> int:
    from twinrank.grading.exercises import solution_source

    exercise = _exercise(args.name)
    path = Path(args.directory) / f"{exercise.name}.py"
    text = solution_source(exercise)
    if path.exists() and path.read_text(encoding="utf-8") != text:
        backup = path.with_name(path.name + ".bak")
        path.replace(backup)
        print(f"kept the file that was there as {backup}", file=sys.stderr)
    _write(path, text)
    _write_readme(Path(args.directory))
    print(f"wrote the reference solution {path}")
    return 0


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_readme(directory: Path) -> None:
    """DIR/README.md: a section for each exercise whose file is in DIR, in lesson order."""
    from twinrank.grading.exercises import EXERCISES, readme_section

    sections = [readme_section(e) for e in EXERCISES if (directory / f"{e.name}.py").exists()]
    _write(directory / "README.md", "# twinrank exercises\n\nThe course: the documentation's Course section "
           "(`mkdocs serve` in a clone of twinrank). `twinrank exercise list` names every exercise.\n\n"
           + "\n".join(sections))


def _check(args) -> int:
    try:
        from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
    except ImportError:
        raise ParameterError('grading needs hypothesis: pip install "twinrank[testing]"') from None
    if args.max_examples is not None and args.max_examples < 1:
        raise ParameterError(f"--max-examples must be at least 1, got {args.max_examples}")
    with tempfile.TemporaryDirectory(prefix="twinrank-hypothesis-") as home:
        # hypothesis caches (its constants, unicode tables) under its home, ./.hypothesis by default:
        # a grading leaves nothing in the student's working directory
        previous = storage_directory(intent_to_write=False).home_directory
        set_hypothesis_home_dir(home)
        try:
            return _grade_all(args)
        finally:
            set_hypothesis_home_dir(previous)


def _grade_all(args) -> int:
    """Grade every exercise file ``args`` names, print the reports; 0 if every one passes."""
    from twinrank.grading._batch import GradeBook, changed, grade_class, submissions

    for option in ("jobs", "memory_mb"):
        if getattr(args, option) < 1:
            raise ParameterError(f"--{option.replace('_', '-')} must be at least 1, got {getattr(args, option)}")
    work = submissions(None if args.name == "all" else _exercise(args.name), args.directories)
    book = GradeBook(args.csv) if args.csv else None

    shown = []

    def show(report):
        if book:
            book.add(report)
        print(json.dumps(report.to_dict()) if args.json else report.text(), flush=True)
        shown.append(report)

    try:
        reports = grade_class(work, jobs=args.jobs, on_report=show, max_examples=args.max_examples,
                              shrink=not args.no_shrink, memory_mb=args.memory_mb)
    except KeyboardInterrupt:  # the students' processes are killed; the command line says it in one line
        raise KeyboardInterrupt(f"{len(shown)} of {len(work)} files graded, reported above"
                                + (f" and in {args.csv}" if book else "")) from None
    for path in changed(work):
        print(f"twinrank exercise: warning: {path} changed while the class was graded (it was graded as it "
              "was when grading started)", file=sys.stderr)
    if not args.json and len(reports) > 1:
        counts = {status: sum(r.status == status for r in reports) for status in ("pass", "fail", "error")}
        print(f"# {len(reports)} files: {counts['pass']} pass, {counts['fail']} fail, {counts['error']} error")
    return max(r.exit_code for r in reports)

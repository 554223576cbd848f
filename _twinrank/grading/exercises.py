r"""The course's exercises: one row per exercise, graded against the fast twin.

Each exercise is a function a student writes in NumPy, as the reference twin would:
``twinrank exercise start NAME DIR`` writes ``DIR/NAME.py``, its signature and a
docstring with the math and the paper's equation, the body ``raise
NotImplementedError``; ``twinrank exercise check NAME DIR`` imports it and compares it,
on inputs hypothesis generates (:mod:`~twinrank.grading._strategies`: ties,
one-document queries, all-equal labels, NaN features), with the **fast** twin's answer
(:mod:`~twinrank.grading._oracles`), within a tolerance of the twin registry's
table (:data:`~twinrank.testing.registry.TOLERANCES`). A failure prints the smallest
input hypothesis finds (shrunk), the expected and the given values. ``twinrank
exercise solve NAME DIR`` writes the solution
(:mod:`~twinrank.grading._solutions`: the reference twin's own function, or a short call of it,
with the import lines it needs).

The student grows a second, independent implementation; the grader is the pair the
project already keeps in agreement: ``registry`` names the twin registry row that pins
the fast function to the reference in CI and in ``twinrank verify``. Where the library's
function has a larger signature than an exercise should ask for (many queries, a
convention object, every feature of a node), ``oracle`` is a thin wrapper over the
fast function, documented in ``wrapper``.

Grading is deterministic (hypothesis seeded with the exercise's name, no example database, a
bounded ``max_examples``): a class gets the same examples, the same counterexamples and
the same grades on every machine. Each student's file runs in a process of its own
(:mod:`~twinrank.grading._grader`); the fast twin's answer and the comparison never run there.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Callable

from twinrank.grading import _oracles as oracles, _solutions as solutions
from twinrank.testing._twin import TOLERANCES

__all__ = ["Exercise", "EXERCISES", "LESSONS", "get", "names", "stub_source", "solution_source",
           "solution_imports", "readme_section", "MAX_EXAMPLES"]

MAX_EXAMPLES = 150
"""Examples per check unless the row says otherwise: enough to meet each edge case, quick to run."""

LESSONS = {
    1: "Ranking data and metrics under every convention",
    2: "Regression trees and histograms",
    3: "Gradient boosting: GBRT and its stochastic variants",
    4: "LambdaRank gradients and LambdaMART",
    5: "Random forests and IGBRT",
    6: "Evaluation done right: folds, seeds, significance",
    7: "Bagging and variance: BL-MART, SRE and VRE",
}


@dataclass(frozen=True)
class Exercise:
    """One exercise.

    Attributes
    ----------
    name : the function the student writes, and its file ``NAME.py``
    lesson : the lesson (a key of :data:`LESSONS`)
    title : one line on what the function computes
    twin : ``module.function`` of the fast twin the answer comes from
    registry : the twin registry row pinning that function to the reference (None: no row;
        the random draws of ``sampling`` are one function shared by both twins, and ``stats``
        is pinned by its own agreement tests, ``tests/evaluation/test_stats.py``)
    wrapper : how ``oracle`` turns the fast function into the exercise's (empty: it is the
        fast function itself)
    tolerance : a key of :data:`~twinrank.testing.registry.TOLERANCES`
    inputs : the name of the strategy in ``_exercise_strategies`` drawing the arguments
    oracle : the expected result from the arguments (``_exercise_oracles``)
    outputs : a result as named arrays (``_exercise_oracles.number``, ``array``, ...)
    reading : the paper sections to read first
    max_examples : examples per check
    """

    name: str
    lesson: int
    title: str
    twin: str
    registry: str | None
    wrapper: str
    tolerance: str
    inputs: str
    oracle: Callable
    outputs: Callable
    reading: str
    max_examples: int = MAX_EXAMPLES

    @property
    def solution(self) -> Callable:
        """The reference solution (``_exercise_solutions``)."""
        return getattr(solutions, self.name)

    @property
    def tol(self):
        return TOLERANCES[self.tolerance]

    def strategy(self):
        """The hypothesis strategy of the arguments (imports hypothesis)."""
        from twinrank.grading import _strategies as _exercise_strategies

        return getattr(_exercise_strategies, self.inputs)()


_O = oracles
EXERCISES: tuple = (
    # lesson 1: metrics
    Exercise("dcg", 1, "DCG@k of one query with a gain table and a discount",
             "metrics.dcg", "metrics[letor]", "one query, Convention(gain=gain, discount=discount)",
             "objectives", "dcg", _O.dcg, _O.number,
             "Järvelin & Kekäläinen 2002, Sec. 2.2; Qin & Liu 2013 (LETOR 4.0), Sec. 4"),
    Exercise("average_precision", 1, "AP@k of one query, RankLib's rules",
             "metrics.average_precision", "metrics[ranklib]", 'one query, convention="ranklib"',
             "objectives", "query_and_cutoff", _O.average_precision, _O.number,
             "Baeza-Yates & Ribeiro-Neto, Modern IR, Sec. 3.2; the Metrics page"),
    Exercise("err", 1, "ERR@k of one query (expected reciprocal rank)",
             "metrics.err", "metrics[ranklib]", "one query, Convention(err_max_label=max_label)",
             "objectives", "err", _O.err, _O.number,
             "Chapelle, Metzler, Zhang & Grinspan 2009, Sec. 4 (Eqs. 3-4)"),
    # lesson 2: trees and histograms
    Exercise("bin_thresholds", 2, "the bin thresholds of one feature (quantile midpoints)",
             "binning.bin_thresholds", "bin_thresholds[16 bins]", "a one-column matrix",
             "exact", "bin_thresholds", _O.bin_thresholds, _O.array,
             "Ke et al. 2017 (LightGBM), Sec. 3; reference/trees/binning.py"),
    Exercise("node_histogram", 2, "the gradient/hessian/count histogram of one node",
             "tree.build_histogram", "build_histogram", "",
             "exact", "node_histogram", _O.node_histogram, _O.array,
             "Ke et al. 2017 (LightGBM), Alg. 1; Chen & Guestrin 2016 (XGBoost), Sec. 3.3"),
    Exercise("best_split", 2, "the best split of one feature, with a missing bin",
             "tree.find_best_split", "find_best_split", "a node of one feature; no cost penalty",
             "objectives", "best_split", _O.best_split, _O.split,
             "Chen & Guestrin 2016, Eq. 7 and Alg. 3 (sparsity-aware split finding)"),
    # lesson 3: gradient boosting
    Exercise("newton_leaf_value", 3, "the Newton step of a leaf, -G / (H + lambda)",
             "tree.grow_tree", "grow_tree", "the root of a tree that cannot split (one constant feature)",
             "objectives", "newton_leaf_value", _O.newton_leaf_value, _O.number,
             "Friedman 2001, Sec. 4.5-4.6; Chen & Guestrin 2016, Eqs. 5-6"),
    Exercise("subsample", 3, "the rows (or queries) of one round of stochastic boosting",
             "sampling.subsample", None, "numpy.random.default_rng(seed)",
             "exact", "subsample", _O.subsample, _O.array,
             "Friedman 2002 (Stochastic gradient boosting), Sec. 2; reference/sampling.py"),
    # lesson 4: LambdaRank
    Exercise("ndcg_swap_delta", 4, "|Delta NDCG@k| of swapping each pair of documents",
             "metrics.ndcg", "metrics[lightgbm]", "NDCG@k of each of the n^2 swapped rankings minus the ranking's",
             "objectives", "query_and_cutoff", _O.ndcg_swap_delta, _O.array,
             "Burges 2010 (From RankNet to LambdaRank to LambdaMART), Sec. 4"),
    Exercise("lambdarank_lambdas", 4, "LambdaRank lambdas and hessians of one query (NDCG)",
             "objectives.lambdarank", "lambdarank[ndcg]", "one query; returns (-g, h)",
             "objectives", "lambdarank_lambdas", _O.lambdarank_lambdas, _O.lambdas_hessians,
             "Burges 2010, Secs. 2-4 and 7 (Eqs. 3-4)"),
    # lesson 5: random forests
    Exercise("predict_tree", 5, "score rows with one tree of flat node arrays (NaN to the missing child)",
             "predict.predict_tree", "apply_tree", "the Tree of these node arrays",
             "exact", "predict_tree", _O.predict_tree, _O.array,
             "Breiman 2001 (Random forests), Sec. 2; Mohan et al. 2011 (IGBRT), Sec. 3"),
    Exercise("bootstrap_rows", 5, "a bootstrap sample of rows, as a forest's tree sees it",
             "sampling.bootstrap", None, "numpy.random.default_rng(seed)",
             "exact", "bootstrap_rows", _O.bootstrap_rows, _O.array,
             "Breiman 2001, Sec. 2; Breiman 1996 (Bagging predictors)"),
    # lesson 6: evaluation
    Exercise("paired_t_statistic", 6, "the paired t-test's statistic and degrees of freedom",
             "stats.paired_t_test", None, "its (t_statistic, df)",
             "objectives", "paired_t_statistic", _O.paired_t_statistic, _O.statistic_df,
             "Smucker, Allan & Carterette 2007, Sec. 2.2"),
    # lesson 7: bagging
    Exercise("minmax_per_query", 7, "BL-MART's per-query min-max normalisation of member scores",
             "bag_rules.minmax_per_query", "combine_scores[minmax]", "",
             "objectives", "minmax_per_query", _O.minmax_per_query, _O.array,
             "Ganjisaffar, Caruana & Lopes 2011 (BL-MART), Sec. 3.5.1"),
)
"""Every exercise, in lesson order."""


def names() -> list:
    """The exercise names, in lesson order."""
    return [e.name for e in EXERCISES]


def get(name: str) -> Exercise:
    """The exercise called ``name``; KeyError listing the names if there is none."""
    for exercise in EXERCISES:
        if exercise.name == name:
            return exercise
    raise KeyError(f"no exercise {name!r}; exercises are: {', '.join(names())}")


def _header(exercise: Exercise, solved: bool, imports: tuple = ()) -> str:
    what = "reference solution" if solved else "exercise"
    reference = "".join(f"\n{line}" for line in imports)  # a paragraph below numpy's
    return (f'"""Lesson {exercise.lesson}, {what} `{exercise.name}`: {exercise.title}.\n\n'
            f"Read: {exercise.reading}.\n"
            f"Check: twinrank exercise check {exercise.name} DIR  (DIR: the folder of this file)\n"
            f'"""\nimport numpy as np\n' + (f"{reference}\n" if imports else "") + "\n\n")


def solution_imports(function: Callable) -> tuple:
    """The import lines of ``function``'s module that bind a name it reads, numpy's aside (every file has it)."""
    read = {node.id for node in ast.walk(ast.parse(inspect.getsource(function))) if isinstance(node, ast.Name)}
    lines = []
    for node in ast.parse(inspect.getsource(inspect.getmodule(function))).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            node.names = [a for a in node.names if (a.asname or a.name) in read and a.name != "numpy"]
            lines += [ast.unparse(node)] if node.names else []
    return tuple(lines)


def solution_source(exercise: Exercise) -> str:
    """The file ``solve`` writes: the solution with the import lines of the reference modules it calls."""
    return _header(exercise, True, solution_imports(exercise.solution)) + inspect.getsource(exercise.solution)


def stub_source(exercise: Exercise) -> str:
    """The file ``start`` writes: the solution's signature and docstring, the body removed."""
    source = inspect.getsource(exercise.solution)
    docstring = ast.parse(source).body[0].body[0]  # the function's first statement
    lines = source.splitlines()[:docstring.end_lineno]
    body = (f'    raise NotImplementedError("write {exercise.name}, then: '
            f'twinrank exercise check {exercise.name} DIR")\n')
    return _header(exercise, False) + "\n".join(lines) + "\n" + body


def readme_section(exercise: Exercise) -> str:
    """The part of ``DIR/README.md`` about one exercise."""
    row = exercise
    graded = f"`twinrank.fast.{row.twin}`" + (f" ({row.wrapper})" if row.wrapper else "")
    return "\n".join([
        f"## `{row.name}.py`: {row.title}",
        "",
        f"Lesson {row.lesson}, {LESSONS[row.lesson]}. Read first: {row.reading}.",
        "",
        f"Write the function `{row.name}` in `{row.name}.py`: its docstring is the statement. Then",
        "",
        "```bash",
        f"twinrank exercise check {row.name} .",
        "```",
        "",
        f"compares it with {graded} on {row.max_examples} generated inputs (ties, one-document",
        "queries, all-equal labels, missing values) and prints pass, or the smallest input on which",
        "it differs with the expected and the given values. Exit status: 0 pass, 1 fail, 2 the file",
        "cannot be imported.",
        "",
    ])

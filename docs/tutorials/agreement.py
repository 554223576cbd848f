"""Agreement: both twins train LambdaMART from one seed; the test files of tests/.

Run it from the repository root with ``python docs/tutorials/agreement.py``; the
documentation build runs it section by section (the ``--8<--`` markers).
"""
# --8<-- [start:twins]
import numpy as np

from twinrank.fast.rankers.lambdamart import LambdaMART as FastLambdaMART
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.rankers.lambdamart import LambdaMART as ReferenceLambdaMART

train, valid, _ = load_mq2008(fold=1)
params = dict(n_trees=5, learning_rate=0.1, max_leaves=8, min_samples_leaf=20,
              query_subsample=0.5, feature_fraction=0.5,  # random draws
              seed=7)
fast = FastLambdaMART(**params).fit(train)
reference = ReferenceLambdaMART(**params).fit(train)

structure = ["feature", "bin_threshold", "left", "right", "missing", "count"]
for t, (a, b) in enumerate(zip(fast.model_.trees, reference.model_.trees)):
    same = all(np.array_equal(getattr(a, s), getattr(b, s)) for s in structure)
    difference = np.abs(a.value - b.value).max()
    print(f"tree {t}: {a.n_leaves} leaves, same splits: {same}, "
          f"largest node value difference {difference:.1e}")
difference = np.abs(fast.predict(valid) - reference.predict(valid)).max()
print(f"validation scores: largest difference {difference:.1e}")
# --8<-- [end:twins]

# --8<-- [start:plot]
import matplotlib.pyplot as plt

reference_scores, fast_scores = reference.predict(valid), fast.predict(valid)
difference = np.abs(fast_scores - reference_scores)
fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.1))
left.scatter(reference_scores, fast_scores, s=4, alpha=0.4)
left.set_xlabel("reference score")
left.set_ylabel("fast score")
left.set_title(f"{len(valid.y)} validation rows", fontsize="medium")
exponents = np.arange(-18, -12)  # bins [1e-18, 1e-17), ..., [1e-13, 1e-12)
counts = [(difference == 0).sum()] + [((difference >= 10.0 ** e) & (difference < 10.0 ** (e + 1))).sum()
                                      for e in exponents]
right.bar(["0"] + [f"1e{e}" for e in exponents], counts)
right.set_xlabel("|fast - reference|, from")
right.set_ylabel("rows")
right.set_title("same splits; sums differ in order only", fontsize="medium")
right.tick_params(axis="x", labelsize="small")
for ax in (left, right):
    ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:plot]

# --8<-- [start:real]
from twinrank.fast.rankers.gbrt import GBRT as FastGBRT
from twinrank.reference.rankers.gbrt import GBRT as ReferenceGBRT

train, valid, test = load_mq2008(fold=1)
cases = {
    "LambdaMART": (ReferenceLambdaMART, FastLambdaMART, dict(n_trees=30, max_leaves=15, seed=1)),
    "GBRT, half the queries per tree": (ReferenceGBRT, FastGBRT, dict(
        n_trees=10, max_leaves=15, subsample=0.5, subsample_by="queries", seed=1)),
}
for name, (reference_class, fast_class, params) in cases.items():
    reference = reference_class(**params).fit(train)
    fast = fast_class(**params).fit(train)
    same = all(np.array_equal(getattr(a, s), getattr(b, s))
               for a, b in zip(fast.model_.trees, reference.model_.trees) for s in structure)
    difference = np.abs(fast.predict(test) - reference.predict(test)).max()
    print(f"{name}: {fast.model_.n_trees} trees, same splits: {same}, "
          f"test scores: largest difference {difference:.1e}")
# --8<-- [end:real]


# --8<-- [start:layers]
import ast
from pathlib import Path

LAYERS = [  # (stage, test file, test): the twins compared stage by stage
    ("metrics", "test_metrics_agreement.py", "test_every_metric_agrees_bit_for_bit"),
    ("bins", "test_binning.py", "test_thresholds_and_bins_identical_in_both_twins"),
    ("histograms", "test_tree.py",
     "test_histograms_identical_in_both_twins_and_to_naive_sums"),
    ("split choice", "test_tree.py", "test_best_split_matches_a_naive_split_finder"),
    ("split ties", "test_tree.py",
     "test_twins_pick_the_same_split_among_copied_and_nested_features"),
    ("one tree", "test_tree.py", "test_trees_identical_in_both_twins"),
    ("lambdas", "test_objectives.py", "test_lambdarank_twins_agree"),
    ("ensemble scores", "test_predict.py",
     "test_ensemble_scores_identical_in_both_twins_and_equal_to_the_formula"),
    ("whole models", "test_lambdamart.py", "test_both_twins_grow_the_same_trees"),
    ("cross-feeding", "test_lambdamart.py",
     "test_cross_feeding_each_twin_scores_the_others_model"),
    ("thread count", "test_lambdamart.py",
     "test_same_seed_same_model_on_any_thread_count"),
    ("real data", "test_agreement_real.py", "test_twins_grow_the_same_trees_on_mq2008"),
]
tests_by_file, path_of = {}, {}
for stage, file, test in LAYERS:
    if file not in tests_by_file:
        path_of[file] = next(Path("tests").rglob(file)).as_posix()  # tests/<folder>/<file>
        module = ast.parse(Path(path_of[file]).read_text())
        tests_by_file[file] = {f.name for f in ast.walk(module)
                               if isinstance(f, ast.FunctionDef)}
    assert test in tests_by_file[file], f"{path_of[file]} has no {test}: update this page"
    print(f"{stage:>16}  {path_of[file]}::{test}")
# --8<-- [end:layers]

# --8<-- [start:files]
def test_files(folder="tests"):
    """Per test file: name, docstring's first line, tests, uses hypothesis."""
    for path in sorted(Path(folder).rglob("test_*.py")):
        module = ast.parse(path.read_text())
        doc = (ast.get_docstring(module) or "").split("\n")[0].replace("|", "\\|")
        tests = [f for f in ast.walk(module)
                 if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")]
        uses_hypothesis = any(isinstance(d, ast.Call)
                              and getattr(d.func, "id", "") == "given"
                              for f in tests for d in f.decorator_list)
        yield path.relative_to(folder).as_posix(), doc, len(tests), uses_hypothesis


rows = list(test_files())
print("| file | what it checks | tests | hypothesis |\n|---|---|---|---|")
for name, doc, n, uses_hypothesis in rows:
    print(f"| `{name}` | {doc} | {n} | {'yes' if uses_hypothesis else ''} |")
# --8<-- [end:files]

# --8<-- [start:command]
node_ids = " \\\n    ".join(f"{path_of[file]}::{test}" for _, file, test in LAYERS)
print(f"CI=true python -m pytest -q {node_ids}")
# --8<-- [end:command]

"""Agreement tutorial: both twins train LambdaMART from one seed; the test files, listed from tests/.

Run it from the repository root with ``python docs/tutorials/agreement.py``; the
documentation build runs it section by section (the ``--8<--`` markers).
"""
# --8<-- [start:twins]
import numpy as np

from twinrank.fast.lambdamart import LambdaMART as FastLambdaMART
from twinrank.reference.data import load_mq2008
from twinrank.reference.lambdamart import LambdaMART as ReferenceLambdaMART

train, valid, _ = load_mq2008(fold=1)
params = dict(n_trees=5, learning_rate=0.1, max_leaves=8, min_samples_leaf=20,
              query_subsample=0.5, feature_fraction=0.5, seed=7)   # random draws on purpose
fast = FastLambdaMART(**params).fit(train)
reference = ReferenceLambdaMART(**params).fit(train)

for t, (a, b) in enumerate(zip(fast.model_.trees, reference.model_.trees)):
    same = all(np.array_equal(getattr(a, name), getattr(b, name))
               for name in ["feature", "bin_threshold", "left", "right", "missing", "count"])
    print(f"tree {t}: {a.n_leaves} leaves, same splits: {same}, "
          f"largest leaf value difference {np.abs(a.value - b.value).max():.1e}")
scores_fast, scores_reference = fast.predict(valid), reference.predict(valid)
print(f"validation scores: largest difference {np.abs(scores_fast - scores_reference).max():.1e}")
# --8<-- [end:twins]

# --8<-- [start:files]
import ast
from pathlib import Path


def test_files(folder="tests"):
    """(file, first docstring line, number of tests, whether hypothesis drives it) per test file."""
    for path in sorted(Path(folder).glob("test_*.py")):
        module = ast.parse(path.read_text())
        doc = (ast.get_docstring(module) or "").split("\n")[0].replace("|", "\\|")
        tests = [f for f in ast.walk(module) if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")]
        uses_hypothesis = any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "given"
                              for f in tests for d in f.decorator_list)
        yield path.name, doc, len(tests), uses_hypothesis


rows = list(test_files())
print("| file | what it checks | tests | hypothesis |\n|---|---|---|---|")
for name, doc, n, uses_hypothesis in rows:
    print(f"| `{name}` | {doc} | {n} | {'yes' if uses_hypothesis else ''} |")
# --8<-- [end:files]

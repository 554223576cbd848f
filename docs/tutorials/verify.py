"""Verify on your data: the twin registry, its tolerances, and twinrank.testing in a test suite.

Run it from the repository root with ``python docs/tutorials/verify.py``; the
documentation build runs it section by section (the ``--8<--`` markers).
"""
# --8<-- [start:registry]
from twinrank.testing import REGISTRY

print("| component | layer | `reference` / `fast` function | tolerance | compared |")
print("|---|---|---|---|---|")
for row in REGISTRY:
    print(f"| `{row.name}` | {row.layer} | `{row.module}.{row.function}` "
          f"| {row.tol.describe()} | {row.summary} |")
# --8<-- [end:registry]

# --8<-- [start:tolerances]
from twinrank.testing import TOLERANCES

print("| key | rtol | atol | why |\n|---|---|---|---|")
for key, tol in TOLERANCES.items():
    atol = f"{tol.atol:g} (1 + max abs reference)" if tol.scaled else f"{tol.atol:g}"
    print(f"| `{key}` | {tol.rtol:g} | {atol} | {tol.why} |")
# --8<-- [end:tolerances]

# --8<-- [start:assert]
import numpy as np

from twinrank.reference.io.data import load_mq2008
from twinrank.testing import assert_twins_agree

train, _, test = load_mq2008(fold=1)
mine = test.take_queries(np.arange(60))  # stands for your own Dataset (read_letor(...))

# 1. A registry component, on your data: it builds its inputs from the data set.
result = assert_twins_agree("lambdarank[ndcg@10, truncation 20]", mine)
print(result.line())

# 2. Any twinned function by (module, name), on your own arguments.
scores = np.round(mine.X[:, 0], 1).astype(np.float64)  # a feature as a ranker: many ties
result = assert_twins_agree(("metrics", "evaluate"), ["ndcg@10", "map", "err@10"], mine.y, scores,
                            mine.query_offsets, convention="ranklib", per_query=True)
print(result.line())


# 3. Your own pipeline: `twin.<module>` is twinrank.reference.<module>, then twinrank.fast.<module>.
def my_pipeline(twin, train, test):
    ranker = twin.lambdamart.LambdaMART(n_trees=10, max_leaves=8, min_samples_leaf=20, seed=0)
    return ranker.fit(train).predict(test)


result = assert_twins_agree(my_pipeline, train, test, tolerance="models")
print(result.line())
# --8<-- [end:assert]

# --8<-- [start:strategies]
from hypothesis import given, settings

from twinrank.testing import datasets, queries


@settings(max_examples=50, deadline=None)
@given(problem=queries(max_queries=5, max_docs=8))
def test_map_lambdas_agree(problem):
    y, scores, query_offsets = problem
    assert_twins_agree(("objectives", "lambdarank"), y, scores, query_offsets, metric="map")


@settings(max_examples=50, deadline=None)
@given(data=datasets(max_queries=6, max_docs=10, max_features=4))
def test_trees_agree(data):
    assert_twins_agree("grow_tree", data)


test_map_lambdas_agree()  # pytest would collect and run these; here we call them
test_trees_agree()
print("100 generated cases: the twins agree")
# --8<-- [end:strategies]

# --8<-- [start:caught]
import twinrank.fast.losses.objectives as fast_objectives

original = fast_objectives.lambdarank


def off_by_a_millionth(*args, **kwargs):  # a subtly wrong fast kernel
    g, h = original(*args, **kwargs)
    return g * (1 + 1e-6), h


fast_objectives.lambdarank = off_by_a_millionth
try:
    assert_twins_agree("lambdarank[map]", mine)
except AssertionError as e:
    print(e)
finally:
    fast_objectives.lambdarank = original
# --8<-- [end:caught]

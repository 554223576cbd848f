"""twinrank's Python API as a LightGBM or XGBoost user reaches for it: DataFrames, group sizes,
weights, several eval sets and metrics, and a callback that stops training.

Run it with ``python docs/tutorials/python_api.py``; the documentation build runs it section by
section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:frames]
import numpy as np
import pandas as pd

from twinrank.fast import LambdaMART, load_mq2008
from twinrank.reference.errors import ParameterError

train, valid, test = load_mq2008(fold=1)
columns = [f"f{j + 1}" for j in range(train.n_features)]  # LETOR feature j + 1 is column j
X = pd.DataFrame(train.X, columns=columns)
X["f5"] = pd.array(np.where(np.arange(train.n_rows) % 7 == 0, None, train.X[:, 4]), dtype="Float64")  # pd.NA: missing

ranker = LambdaMART(n_trees=30, seed=0).fit(X, train.y, group=train.query_sizes)  # LGBMRanker's group
print("feature_names_in_:", list(ranker.feature_names_in_[:4]), "...")
X_test = pd.DataFrame(test.X, columns=columns)
print(f"test NDCG@10: {ranker.score(X_test, test.y, qid=test.qid):.4f}")
try:
    ranker.predict(X_test[columns[::-1]])  # the columns in another order
except ParameterError as e:
    print("refused:", e)
# --8<-- [end:frames]

# --8<-- [start:weights]
rng = np.random.default_rng(0)
per_query = rng.choice([1.0, 2.0], size=train.n_queries)  # XGBoost's form: one weight per query
weighted = LambdaMART(n_trees=30, seed=0).fit(train.X, train.y, train.qid, sample_weight=per_query)
per_row = np.repeat(per_query, train.query_sizes)  # LightGBM's form: one weight per row, the same model
same = LambdaMART(n_trees=30, seed=0).fit(train.X, train.y, train.qid, sample_weight=per_row)
print("per query == per row:", np.array_equal(weighted.predict(test), same.predict(test)))
print(f"test NDCG@10 weighted {weighted.score(test):.4f}")
# --8<-- [end:weights]

# --8<-- [start:eval_sets]
ranker = LambdaMART(n_trees=200, metric=["ndcg@5", "map"], early_stopping_rounds=20, eval_train=True, seed=0)
ranker.fit(train, eval_set=[valid, test], eval_names=["valid", "test"])
print("history_ keys:", list(ranker.history_))
result = ranker.evals_result_  # {set: {metric: [one value per tree]}}
best = ranker.best_iteration_  # early stopping watched the first metric on the first set
print(f"best iteration {best} of {len(result['valid']['ndcg@5'])} grown")
for name in ("train", "valid", "test"):
    print(f"  {name:>5}: ndcg@5 {result[name]['ndcg@5'][best - 1]:.4f}  map {result[name]['map'][best - 1]:.4f}")
# --8<-- [end:eval_sets]

# --8<-- [start:callback]
def stop_when_flat(iteration, record):
    """Stop once validation NDCG@5 has not moved by 1e-4 over 10 trees: return True."""
    values.append(record["valid:ndcg@5"])
    return len(values) > 10 and abs(values[-1] - values[-11]) < 1e-4


values = []
ranker = LambdaMART(n_trees=500, metric="ndcg@5", seed=0).fit(train, eval_set=[valid], callback=stop_when_flat)
print(f"stopped after {ranker.model_.n_trees} of 500 trees; the model keeps them: "
      f"test NDCG@10 {ranker.score(test):.4f}")
# --8<-- [end:callback]

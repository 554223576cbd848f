"""twinrank with scikit-learn: grid search and cross-validation over whole queries.

Run it with ``python docs/tutorials/scikit_learn.py``; the documentation build runs it
section by section (the ``--8<--`` markers) and shows what it prints.
"""
# --8<-- [start:search]
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold

from twinrank.fast import LambdaMART, load_mq2008
from twinrank.sklearn.glue import make_ranking_scorer

sklearn.set_config(enable_metadata_routing=True)  # qid reaches fit and the scorer
train, valid, test = load_mq2008(fold=1)
X, y, qid = train.X, train.y, train.qid

search = GridSearchCV(LambdaMART(n_trees=30, learning_rate=0.1, seed=0),
                      {"max_leaves": [3, 15], "min_samples_leaf": [20, 100]},
                      cv=GroupKFold(3), scoring=make_ranking_scorer("ndcg@10"))
search.fit(X, y, groups=qid, qid=qid)
print("best:", search.best_params_, f"mean NDCG@10 over the folds {search.best_score_:.4f}")
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"  {params}  {score:.4f}")
print(f"test NDCG@10 of the refitted best model: "
      f"{search.best_estimator_.score(test.X, test.y, qid=test.qid):.4f}")
# --8<-- [end:search]

# --8<-- [start:cross_validate]
from sklearn.model_selection import cross_validate

from twinrank.fast import GBRT
from twinrank.sklearn.glue import QueryKFold

scores = cross_validate(GBRT(n_trees=30, max_leaves=7, seed=0), X, y, cv=QueryKFold(5),
                        params={"qid": qid},
                        scoring={"ndcg@10": make_ranking_scorer("ndcg@10"),
                                 "letor ndcg@10": make_ranking_scorer("ndcg@10", convention="letor"),
                                 "map": make_ranking_scorer("map")})
for name in ("ndcg@10", "letor ndcg@10", "map"):
    values = scores[f"test_{name}"]
    print(f"{name:>14}: {values.mean():.4f} +- {values.std():.4f} over {len(values)} folds")
# --8<-- [end:cross_validate]

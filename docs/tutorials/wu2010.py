"""Wu, Burges, Svore & Gao (2010) in miniature: LambdaMART against McRank as trees are added
(Table 1 / Fig. 2), and model adaptation with LambdaSMART (Tables 2-4).

Run it with ``python docs/tutorials/wu2010.py`` from the repository root; the documentation
build runs it section by section (the ``--8<--`` markers), in well under a minute.
"""
# --8<-- [start:trees]
import numpy as np

from twinrank.fast import LambdaMART, McRank, evaluate, load_mq2008

train, valid, test = load_mq2008(fold=1)
SIZES = [10, 25, 50, 100, 200]
common = dict(n_trees=200, learning_rate=0.1, max_leaves=15, seed=0)
models = {"LambdaMART": LambdaMART(**common).fit(train),
          "McRank": McRank(**common).fit(train)}  # one 200-tree logistic classifier per label threshold
print(f"{'NDCG@10 (LETOR)':14s}" + "".join(f"{size:>8d}" for size in SIZES))
for name, model in models.items():
    values = [evaluate("ndcg@10", test.y, model.predict(test, n_trees=size), test.query_offsets,
                       convention="letor")["ndcg@10"] for size in SIZES]
    print(f"{name:14s}" + "".join(f"{v:8.4f}" for v in values))
# --8<-- [end:trees]

# --8<-- [start:adaptation]
rng = np.random.default_rng(0)
target_queries = np.sort(rng.choice(train.n_queries, 40, replace=False))  # a small "target" set
source = train.take_queries(np.setdiff1d(np.arange(train.n_queries), target_queries))
target = train.take_queries(target_queries)
both = train  # source and target together


def ndcg10(model) -> float:
    return evaluate("ndcg@10", test.y, model.predict(test), test.query_offsets, convention="letor")["ndcg@10"]


prior = LambdaMART(n_trees=100, max_leaves=15, seed=0).fit(source)
rows = {
    "target only (40 queries)": LambdaMART(n_trees=100, max_leaves=15, seed=0).fit(target),
    "source only (prior model)": prior,
    "source + target pooled": LambdaMART(n_trees=100, max_leaves=15, seed=0).fit(both),
    "LambdaSMART: prior + 30 trees on target": LambdaMART(n_trees=30, max_leaves=7, seed=0,
                                                          init_model=prior).fit(target),
}
for name, model in rows.items():
    print(f"{name:42s} test NDCG@10 {ndcg10(model):.4f}")
# --8<-- [end:adaptation]

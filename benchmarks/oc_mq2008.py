"""On MQ2008: does OC (``step="optimal"``) reach Newton's best validation NDCG@10
(within 0.002) in no more trees than Newton needs? Five folds, 100 trees of 31 leaves, fast twin;
also the test NDCG@10 of each at its best validation iteration.

    python benchmarks/oc_mq2008.py   # writes benchmarks/oc_mq2008.json
"""
import json
import time

import numpy as np

from twinrank.fast import LambdaMART, evaluate, load_mq2008

out = {}
for fold in (1, 2, 3, 4, 5):
    train, valid, test = load_mq2008(fold)
    row = {}
    for step in ("newton", "optimal"):
        t = time.time()
        m = LambdaMART(n_trees=100, step=step, max_leaves=31).fit(train, eval_set=[valid])
        v = np.array(m.history_["valid:ndcg@10"])
        row[step] = dict(best=float(v.max()), at=int(v.argmax() + 1), curve=v.tolist(), seconds=time.time() - t,
                         test=evaluate("ndcg@10", test.y, m.predict(test.X, n_trees=int(v.argmax() + 1)), test.query_offsets)["ndcg@10"])
    target = row["newton"]["best"] - 0.002
    reach = np.flatnonzero(np.array(row["optimal"]["curve"]) >= target)
    row["optimal_reaches_at"] = int(reach[0] + 1) if len(reach) else None
    out[fold] = row
    print(fold, "newton best %.4f at %d (test %.4f)" % (row["newton"]["best"], row["newton"]["at"], row["newton"]["test"]),
          "| OC best %.4f at %d (test %.4f), reaches newton-0.002 at %s" % (row["optimal"]["best"], row["optimal"]["at"], row["optimal"]["test"], row["optimal_reaches_at"]), flush=True)
json.dump(out, open("benchmarks/oc_mq2008.json", "w"), indent=1)

"""The README's ten-line example: LambdaMART on the bundled MQ2008, fast twin.

Run it with ``python docs/tutorials/ten_lines.py``; the documentation build runs it too.
It works in a scratch folder, so the model file it saves lands there.
"""
# --8<-- [start:setup]
import os
import tempfile

previous_directory = os.getcwd()
os.chdir(tempfile.mkdtemp(prefix="twinrank-"))
# --8<-- [end:setup]

# --8<-- [start:example]
from twinrank.fast import LambdaMART, evaluate, load_mq2008

train, valid, test = load_mq2008(fold=1)        # bundled LETOR 4.0 MQ2008
ranker = LambdaMART(n_trees=300, learning_rate=0.05, max_leaves=15,
                    early_stopping_rounds=50)
ranker.fit(train, eval_set=[valid])
scores = ranker.predict(test)
metrics = evaluate(["ndcg@10", "map"], test.y, scores, test.query_offsets,
                   convention="ranklib")        # RankLib's rules: see Metrics
print("ranklib convention:", metrics)
ranker.save("mq2008.json")                      # versioned JSON, atomically
# --8<-- [end:example]

# --8<-- [start:plot]
import matplotlib.pyplot as plt

curve = ranker.model_.history["valid:ndcg@10"]  # one value per tree grown
best = ranker.model_.best_iteration
fig, ax = plt.subplots(figsize=(6.5, 2.6))
ax.plot(range(1, len(curve) + 1), curve, label="validation NDCG@10 (lightgbm convention)")
ax.axvline(best, color="tab:orange", linestyle="--", label=f"best iteration {best}: the model keeps "
           f"{best} trees")
ax.set_xlabel("trees")
ax.legend(fontsize="small", frameon=False, loc="lower right")
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
# --8<-- [end:plot]

# --8<-- [start:teardown]
os.chdir(previous_directory)
# --8<-- [end:teardown]

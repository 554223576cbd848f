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
from twinrank.fast.data import load_mq2008
from twinrank.fast.lambdamart import LambdaMART
from twinrank.fast.metrics import evaluate

train, valid, test = load_mq2008(fold=1)          # bundled LETOR 4.0 MQ2008
ranker = LambdaMART(n_trees=300, learning_rate=0.05, max_leaves=15, early_stopping_rounds=50)
ranker.fit(train, eval_set=[valid])
scores = ranker.predict(test)
print(evaluate(["ndcg@10", "map"], test.y, scores, test.query_offsets, convention="ranklib"))
ranker.save("mq2008.json")                        # versioned JSON, written atomically
# --8<-- [end:example]

# --8<-- [start:teardown]
os.chdir(previous_directory)
# --8<-- [end:teardown]

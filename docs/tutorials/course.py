"""The course's demonstrations, one section per lesson, on the bundled MQ2008 (Fold 1 unless said).

Run it with ``python docs/tutorials/course.py`` from the repository root; the documentation
build runs it section by section (the ``--8<--`` markers), each lesson in a few seconds.
"""
# --8<-- [start:setup]
import matplotlib.pyplot as plt
import numpy as np

from twinrank.fast import evaluate, load_mq2008

train, valid, test = load_mq2008(fold=1)  # every lesson: the bundled MQ2008, Fold1
# --8<-- [end:setup]

# --8<-- [start:lesson1]
from twinrank.fast.evaluation.metrics import doc_ids_from_comments

scores = test.X[:, 24].astype(np.float64)  # one of LETOR's features (number 25) as a ranker
doc_ids = doc_ids_from_comments(test.comments)  # trec_eval breaks ties by document id
cutoffs = range(1, 11)
plt.figure(figsize=(6, 3.2))
for convention in ("lightgbm", "ranklib", "letor", "trec"):
    ndcg = [evaluate([f"ndcg@{k}"], test.y, scores, test.query_offsets, convention=convention,
                     doc_ids=doc_ids)[f"ndcg@{k}"]
            for k in cutoffs]
    print(f"{convention:>8}: NDCG@1 {ndcg[0]:.4f}  NDCG@5 {ndcg[4]:.4f}  NDCG@10 {ndcg[9]:.4f}")
    plt.plot(list(cutoffs), ndcg, marker="o", label=convention)
plt.xlabel("k")
plt.ylabel("mean NDCG@k, MQ2008 Fold1 test")
plt.title("One ranking, four conventions")
plt.legend()
plt.tight_layout()
# --8<-- [end:lesson1]

# --8<-- [start:lesson2]
from twinrank.fast.trees.binning import apply_bins, bin_thresholds
from twinrank.fast.trees.tree import build_histogram

thresholds = bin_thresholds(train.X, 16)
binned = apply_bins(train.X, thresholds)
g, h = -(train.y - train.y.mean()), np.ones(train.n_rows)  # squared error at F = mean label
hist = build_histogram(binned, g, h, np.arange(train.n_rows))  # (46, 256, 3): the root's histogram
f = 24
n_bins = len(thresholds[f]) + 1
below = np.cumsum(hist[f, :n_bins - 1], axis=0)  # (n_bins - 1, 3) left child of each threshold
G, H = hist[f].sum(axis=0)[:2]
gain = below[:, 0] ** 2 / below[:, 1] + (G - below[:, 0]) ** 2 / (H - below[:, 1]) - G**2 / H
print(f"feature {f}: {n_bins} value bins, {int(hist[f, 255, 2])} missing rows; best threshold bin "
      f"{int(np.argmax(gain))}, gain {gain.max():.2f}")
fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.2), sharex=True)
top.bar(range(n_bins), -hist[f, :n_bins, 0])
top.set_ylabel("sum of -g per bin")
bottom.plot(np.arange(n_bins - 1) + 0.5, gain, marker="o")
bottom.set_ylabel("gain of 'bin <= b'")
bottom.set_xlabel("bin of feature 25 (at most 16 quantile bins)")
fig.tight_layout()
# --8<-- [end:lesson2]

# --8<-- [start:lesson3]
from twinrank.fast import GBRT

plt.figure(figsize=(6, 3.2))
variants = {"GBRT": {}, "stochastic, rows 50%": dict(subsample=0.5),
            "stochastic, queries 50%": dict(subsample=0.5, subsample_by="queries"),
            "k-stochastic, 20% features": dict(feature_fraction=0.2)}
for name, options in variants.items():
    model = GBRT(n_trees=60, learning_rate=0.1, max_leaves=8, seed=1, **options).fit(train, eval_set=[valid])
    curve = model.history_["valid:ndcg@10"]
    print(f"{name:>27}: validation NDCG@10 after 60 trees {curve[-1]:.4f} (best {max(curve):.4f})")
    plt.plot(range(1, len(curve) + 1), curve, label=name)
plt.xlabel("trees")
plt.ylabel("validation NDCG@10")
plt.legend(fontsize=8)
plt.tight_layout()
# --8<-- [end:lesson3]

# --8<-- [start:lesson4]
from twinrank.fast import GBRT, LambdaMART
from twinrank.fast.losses.objectives import lambdarank

q = int(np.argmax(np.diff(train.query_offsets)))  # the largest training query
rows = slice(train.query_offsets[q], train.query_offsets[q + 1])
y_q, s_q = train.y[rows], np.zeros(train.query_offsets[q + 1] - train.query_offsets[q])
fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.2))
for sigma in (0.5, 1.0, 2.0):
    g_q, _ = lambdarank(y_q, s_q, np.array([0, len(y_q)]), sigma=sigma)
    left.scatter(y_q + 0.08 * np.log2(sigma), -g_q, s=10, label=f"sigma {sigma}")
left.set_xlabel("label (all scores 0)")
left.set_ylabel("lambda")
left.legend(fontsize=8)
for name, est in (("GBRT", GBRT(n_trees=60, learning_rate=0.1, max_leaves=8)),
                  ("LambdaMART", LambdaMART(n_trees=60, learning_rate=0.1, max_leaves=8))):
    curve = est.fit(train, eval_set=[valid]).history_["valid:ndcg@10"]
    print(f"{name:>10}: validation NDCG@10 after 60 trees {curve[-1]:.4f}")
    right.plot(range(1, len(curve) + 1), curve, label=name)
right.set_xlabel("trees")
right.set_ylabel("validation NDCG@10")
right.legend(fontsize=8)
fig.tight_layout()
# --8<-- [end:lesson4]

# --8<-- [start:lesson5]
from twinrank.fast import GBRT, IGBRT, RandomForest

models = {"random forest": RandomForest(n_trees=30, feature_fraction=0.1, min_samples_leaf=20, seed=0),
          "GBRT": GBRT(n_trees=60, learning_rate=0.1, max_leaves=8, seed=0),
          "IGBRT": IGBRT(n_trees=60, rf_n_trees=30, rf_min_samples_leaf=20, seed=0)}
values = {}
for name, est in models.items():
    est.fit(train, eval_set=[valid])
    values[name] = evaluate(["ndcg@10"], test.y, est.predict(test), test.query_offsets)["ndcg@10"]
    print(f"{name:>13}: test NDCG@10 {values[name]:.4f}")
plt.figure(figsize=(5, 3))
plt.bar(list(values), list(values.values()))
plt.ylim(min(values.values()) - 0.03, max(values.values()) + 0.01)
plt.ylabel("test NDCG@10, Fold1")
plt.tight_layout()
# --8<-- [end:lesson5]

# --8<-- [start:lesson6]
from twinrank.fast import LambdaMART
from twinrank.fast.evaluation.stats import compare

per_query = {8: [], 31: []}
seed_means = {8: [], 31: []}
for fold in range(1, 6):
    train_k, valid_k, test_k = load_mq2008(fold)
    for leaves in (8, 31):
        runs = []
        for seed in range(3):
            est = LambdaMART(n_trees=40, learning_rate=0.1, max_leaves=leaves, query_subsample=0.7,
                             seed=seed)
            scores_k = est.fit(train_k, eval_set=[valid_k]).predict(test_k)
            runs.append(evaluate(["ndcg@10"], test_k.y, scores_k, test_k.query_offsets, per_query=True)["ndcg@10"])
        per_query[leaves].append(np.mean(runs, axis=0))  # (n_test_queries,) averaged over seeds
        seed_means[leaves].append([r.mean() for r in runs])
result = compare(np.concatenate(per_query[31]), np.concatenate(per_query[8]), seed=0)
print(f"31 leaves vs 8, 5 folds x 3 seeds: mean NDCG@10 {result.mean_a:.4f} vs {result.mean_b:.4f}, "
      f"randomization p = {result.randomization_p:.3f}, t-test p = {result.t_p:.3f}")
plt.figure(figsize=(6, 3))
for offset, leaves in ((-0.1, 8), (0.1, 31)):
    for fold, means in enumerate(seed_means[leaves], start=1):
        plt.scatter([fold + offset] * len(means), means, color="C0" if leaves == 8 else "C1",
                    s=14, label=f"{leaves} leaves" if fold == 1 else None)
plt.xlabel("fold")
plt.ylabel("test NDCG@10 (one dot per seed)")
plt.legend(fontsize=8)
plt.tight_layout()
# --8<-- [end:lesson6]

# --8<-- [start:lesson7]
from twinrank.fast.rankers.bagging import BLMART

member = dict(n_trees=40, learning_rate=0.1, max_leaves=15, seed=0)
bag = BLMART(n_models=6, **member).fit(train, eval_set=[valid])
members = bag.predict_members(test)  # (6, n_test_rows)
member_ndcg = [evaluate(["ndcg@10"], test.y, m, test.query_offsets)["ndcg@10"] for m in members]
bag_ndcg = evaluate(["ndcg@10"], test.y, bag.predict(test), test.query_offsets)["ndcg@10"]
print("members' test NDCG@10:", " ".join(f"{v:.4f}" for v in member_ndcg), f"| the bag: {bag_ndcg:.4f}")
plt.figure(figsize=(5, 3))
plt.scatter(range(1, 7), member_ndcg, label="members")
plt.axhline(bag_ndcg, color="C1", label="BL-MART (min-max, mean)")
plt.xlabel("member")
plt.ylabel("test NDCG@10")
plt.legend(fontsize=8)
plt.tight_layout()
# --8<-- [end:lesson7]

# --8<-- [start:lesson8]
from twinrank.fast import LambdaMART
from twinrank.fast.combination.combine import optimal_combination
from twinrank.fast.rankers.dart import DART, XDART

common = dict(n_trees=60, learning_rate=0.1, max_leaves=15, seed=0)
models = {"LambdaMART": LambdaMART(**common),
          "DART (fixed k=2)": DART(**common, drop="fixed", drop_k=2, snapshot_sizes=[20, 40]),
          "X-DART (adaptive)": XDART(**common, snapshot_sizes=[20, 40])}
plt.figure(figsize=(6, 3))
for name, est in models.items():
    est.fit(train, eval_set=[valid])
    sizes = [20, 40, 60]
    ndcg = [evaluate("ndcg@10", test.y, est.predict(test, n_trees=k), test.query_offsets)["ndcg@10"] for k in sizes]
    plt.plot(sizes, ndcg, marker="o", label=name)
    print(f"{name:18s} test NDCG@10 at 20 / 40 / 60 trees: " + " / ".join(f"{v:.4f}" for v in ndcg))
x = models["X-DART (adaptive)"].history_
print(f"X-DART: {len(x['size'])} iterations, {x['branch'].count('prune')} pruned")
# the exact line search: the best mix of LambdaMART and a single LETOR feature, on validation
a = models["LambdaMART"].predict(valid)
b = valid.X[:, 24].astype(np.float64)
b = (b - b.mean()) / (b.std() + 1e-12) * a.std()
best = optimal_combination(a, b, valid.y, valid.query_offsets, metric="ndcg@10")
print(f"best alpha of (1 - alpha) LambdaMART + alpha feature 25: {best.alpha:.4f} (validation NDCG@10 {best.value:.4f})")
plt.xlabel("trees")
plt.ylabel("test NDCG@10")
plt.legend(fontsize=8)
plt.tight_layout()
# --8<-- [end:lesson8]

# --8<-- [start:lesson9]
from twinrank.fast.analysis.cost import model_cost
from twinrank.fast.rankers.gbrt import GBRT

costs = 2.0 ** (np.arange(train.n_features) * 5 // train.n_features)  # five groups: 1, 2, 4, 8, 16
plt.figure(figsize=(6, 3))
for cost_lambda in (0.0, 0.3, 1.0, 3.0):
    est = GBRT(n_trees=60, max_leaves=15, feature_costs=costs, cost_lambda=cost_lambda, seed=0).fit(train)
    value = evaluate("ndcg@10", test.y, est.predict(test), test.query_offsets)["ndcg@10"]
    cost = model_cost(est.model_, test, costs).mean_feature_cost  # features computed per document
    print(f"cost_lambda {cost_lambda:<5}: test NDCG@10 {value:.4f}, feature cost per document {cost:.1f}")
    plt.scatter([cost], [value], label=f"cost_lambda {cost_lambda}")
plt.xlabel("feature cost per document")
plt.ylabel("test NDCG@10")
plt.legend(fontsize=8)
plt.tight_layout()
# --8<-- [end:lesson9]

# --8<-- [start:table]
from twinrank.grading.exercises import EXERCISES


def exercise_table(lesson):
    """The exercises of one lesson as a Markdown table, read from the exercise rows."""
    lines = ["| exercise | write | graded against | paper |", "|---|---|---|---|"]
    for e in EXERCISES:
        if e.lesson == lesson:
            wrapper = f" ({e.wrapper})" if e.wrapper else ""
            lines.append(f"| `{e.name}` | {e.title} | `twinrank.fast.{e.twin}`{wrapper} | {e.reading} |")
    return "\n".join(lines)
# --8<-- [end:table]

# --8<-- [start:failing]
import inspect
import pathlib
import tempfile

from twinrank.grading import _mistakes as _exercise_mistakes, exercises
from twinrank.grading._grader import check

folder = pathlib.Path(tempfile.mkdtemp())
(folder / "dcg.py").write_text("import numpy as np\n\n\n" + inspect.getsource(_exercise_mistakes.dcg))
print(check(exercises.get("dcg"), folder).text().replace(str(folder), "lesson1"))
# --8<-- [end:failing]

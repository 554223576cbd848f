"""``eval_train``: the training-set metric is recorded only when asked, and changes nothing else."""
import io

import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.cli._progress import Progress
from twinrank.fast.rankers import (
    classification as fast_mc,
    forest as fast_forest,
    gbrt as fast_gbrt,
    lambdamart as fast_lm,
)
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation.metrics import evaluate
from twinrank.reference.io.letor import write_letor
from twinrank.reference.io.model import Ensemble
from twinrank.reference.params import BoostParams
from twinrank.reference.rankers import (
    classification as ref_mc,
    forest as ref_forest,
    gbrt as ref_gbrt,
    lambdamart as ref_lm,
)
from twinrank.reference.trees.predict import predict_ensemble

BOOSTED = dict(n_trees=5, learning_rate=0.3, max_leaves=6, min_samples_leaf=3)
IGBRT = dict(BOOSTED, rf_n_trees=3, rf_max_leaves=16, rf_min_samples_leaf=3, rf_feature_fraction=0.5)
# (estimator class, its parameters) in both twins; McRank's classifiers record per threshold
ESTIMATORS = {
    f"{twin}-{name}": (cls, params)
    for twin, lm, gbrt, forest, mc in [("reference", ref_lm, ref_gbrt, ref_forest, ref_mc),
                                       ("fast", fast_lm, fast_gbrt, fast_forest, fast_mc)]
    for name, cls, params in [("lambdamart", lm.LambdaMART, dict(BOOSTED, query_subsample=0.7)),
                              ("gbrt", gbrt.GBRT, dict(BOOSTED, subsample=0.7, feature_fraction=0.5)),
                              ("igbrt", forest.IGBRT, IGBRT),
                              ("mcrank", mc.McRank, BOOSTED)]
}
BOOSTED_ONLY = [k for k in ESTIMATORS if not k.endswith("mcrank")]


def boosted_models(est):
    """``(prefix, Ensemble)`` of every boosting run of a fitted estimator."""
    if hasattr(est.model_, "classifiers"):
        return [(f"y>{c:g}:", clf) for c, clf in zip(est.model_.labels, est.model_.classifiers)]
    return [("", est.model_)]


def fit(key, train, valid=None, **extra):
    """Fit ``ESTIMATORS[key]`` recording every callback; returns ``(estimator, [(iteration, record)])``."""
    cls, params = ESTIMATORS[key]
    seen = []
    est = cls(**params, **extra).fit(train, eval_set=None if valid is None else [valid],
                                     callback=lambda i, r: seen.append((i, dict(r))))
    return est, seen


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_default_records_nothing_on_the_training_set(key):
    train, valid = ranking_data(seed=1), ranking_data(seed=2, n_queries=10)
    est, seen = fit(key, train, valid)
    assert est.eval_train is False
    assert est.history_ and not [k for k in est.history_ if "train:" in k]
    boosted = seen[est.rf_n_trees:] if key.endswith("igbrt") else seen  # the forest always records
    assert boosted and all(r and [k.split(":")[-2] for k in r] == ["valid"] for _, r in boosted)
    bare, seen = fit(key, train)
    assert bare.history_ == {}
    assert all(r == {} for _, r in (seen[bare.rf_n_trees:] if key.endswith("igbrt") else seen))


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_eval_train_records_the_training_metric_of_the_model_after_each_tree(key):
    train, valid = ranking_data(seed=3), ranking_data(seed=4, n_queries=10)
    est, seen = fit(key, train, valid, eval_train=True)
    for prefix, model in boosted_models(est):
        curve = est.history_[f"{prefix}train:ndcg@10"]
        assert len(curve) == model.n_trees > 0
        expected = [evaluate("ndcg@10", train.y, predict_ensemble(model.truncated(m), train.X),
                             train.query_offsets)["ndcg@10"] for m in range(1, model.n_trees + 1)]
        assert curve == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert len(est.history_[f"{prefix}valid:ndcg@10"]) == len(curve)
    final = evaluate("ndcg@10", train.y, est.predict(train), train.query_offsets)["ndcg@10"]
    if not key.endswith("mcrank"):  # McRank's score is the expected relevance, not one classifier's
        assert est.history_["train:ndcg@10"][-1] == pytest.approx(final, rel=1e-12, abs=1e-12)
    boosted = seen[est.rf_n_trees:] if key.endswith("igbrt") else seen
    assert all(sorted(k.split(":")[-2] for k in r) == ["train", "valid"] for _, r in boosted)
    history = {}
    for _, record in boosted:
        for k, v in record.items():
            history.setdefault(k, []).append(v)
    assert history == est.history_


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_eval_train_changes_nothing_but_the_records(key):
    train = ranking_data(seed=5)
    plain, _ = fit(key, train)
    recorded, _ = fit(key, train, eval_train=True)
    for (_, a), (_, b) in zip(boosted_models(plain), boosted_models(recorded), strict=True):
        assert a.n_trees == b.n_trees and all(s.equals(t) for s, t in zip(a.trees, b.trees))
        assert a.base_score == b.base_score
    assert (plain.predict(train) == recorded.predict(train)).all()


@pytest.mark.parametrize("gbrt", [ref_gbrt, fast_gbrt])
def test_averaged_runs_count_iterations_consecutively_without_train_records(gbrt):
    train, valid = ranking_data(seed=6), ranking_data(seed=7, n_queries=10)
    seen = []
    gbrt.GBRT(**BOOSTED, average_runs=2).fit(train, callback=lambda i, r: seen.append((i, r)))
    assert seen == [(i, {}) for i in range(1, 2 * BOOSTED["n_trees"] + 1)]
    # with early stopping a run's rounds include the trees it drops: the next run counts on from them
    seen = []
    est = gbrt.GBRT(**dict(BOOSTED, n_trees=30, learning_rate=0.8), average_runs=2,
                    early_stopping_rounds=2).fit(train, eval_set=[valid],
                                                 callback=lambda i, r: seen.append(i))
    rounds = [len(est.history_[f"run{i}:valid:ndcg@10"]) for i in range(2)]
    assert seen == list(range(1, sum(rounds) + 1))


def test_igbrt_forest_history_is_untouched():
    train = ranking_data(seed=8)
    est = fast_forest.IGBRT(**IGBRT).fit(train)
    assert est.history_ == {} and list(est.model_.init_model.history) == ["train:ndcg@10"]


def test_eval_train_is_a_bool_kept_in_the_params():
    assert BoostParams().eval_train is False and BoostParams(eval_train=True).to_dict()["eval_train"]
    for bad in (1, "yes", None):
        with pytest.raises(ParameterError, match="eval_train must be True or False"):
            BoostParams(eval_train=bad)
    with pytest.raises(ParameterError, match="eval_train"):
        fast_lm.LambdaMART(eval_train="no").fit(ranking_data(seed=9))


def test_eval_train_is_saved_with_the_model(tmp_path):
    train = ranking_data(seed=10)
    est = fast_lm.LambdaMART(**BOOSTED, eval_train=True).fit(train)
    est.save(tmp_path / "m.json")
    loaded = ref_lm.LambdaMART.load(tmp_path / "m.json")
    assert loaded.eval_train is True and loaded.history_ == est.history_


def test_progress_line_of_an_empty_record_shows_trees_and_time():
    stream = io.StringIO()
    progress = Progress(3, stream=stream)
    for i in range(1, 4):
        progress(i, {})
    line = stream.getvalue().strip()
    assert line.startswith("[    3/3]  ") and line.endswith(" trees/s)") and " s (" in line


def test_verbose_without_records_prints_the_round_and_time(capsys):
    fast_lm.LambdaMART(**BOOSTED, verbose=1).fit(ranking_data(seed=11))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split()[0] for line in lines] == [f"[{i}]" for i in range(1, BOOSTED["n_trees"] + 1)]
    assert all(line.endswith(" s") for line in lines)
    fast_mc.McRank(**dict(BOOSTED, n_trees=2), verbose=2).fit(ranking_data(seed=11))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split("] ")[0] for line in lines] == [f"[y>{c} 2" for c in range(4)]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_eval_train_flag(tmp_path, capsys, engine):
    write_letor(ranking_data(seed=12), tmp_path / "train.txt")
    common = ["train", "--train", str(tmp_path / "train.txt"), "--trees", "3", "--leaves", "4",
              "--min-samples-leaf", "2", "--engine", engine]
    assert main([*common, "--model", str(tmp_path / "plain.json")]) == 0
    err = capsys.readouterr().err
    assert "[    3/3]" in err and "trees/s" in err and "train:" not in err
    assert Ensemble.load(tmp_path / "plain.json").history == {}
    assert main([*common, "--model", str(tmp_path / "train.json"), "--eval-train"]) == 0
    assert "train:ndcg@10" in capsys.readouterr().err
    assert len(Ensemble.load(tmp_path / "train.json").history["train:ndcg@10"]) == 3
    assert main([*common, "--model", str(tmp_path / "rf.json"), "--eval-train",
                 "--algorithm", "random-forest"]) == 2
    assert "does not take --eval-train" in capsys.readouterr().err


def test_cli_help_lists_eval_train(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "--eval-train" in capsys.readouterr().out

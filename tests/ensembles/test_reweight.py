"""OC steps in LambdaMART, coordinate refit of tree weights, interpolation of two models (both twins)."""
import numpy as np
import pytest
from synthetic import ranking_data

import twinrank.fast as fast
import twinrank.reference as reference
from twinrank.fast.ensembles import reweight as fast_reweight
from twinrank.reference.ensembles import reweight as ref_reweight
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics
from twinrank.reference.io.model import load_model
from twinrank.reference.trees.predict import predict_ensemble


@pytest.fixture(scope="module")
def data():
    return ranking_data(n_queries=40, seed=5), ranking_data(n_queries=30, seed=6)


def expected_ndcg10(model, d):
    """Mean NDCG@10 (expected ties) of the model's reference scores."""
    return float(np.mean(metrics.ndcg(d.y, predict_ensemble(model, d.X), d.query_offsets, k=10, ties="expected")))


@pytest.mark.parametrize("twin", [reference, fast], ids=["reference", "fast"])
def test_optimal_steps_are_recorded_and_score_the_model(twin, data):
    train, valid = data
    est = twin.LambdaMART(n_trees=6, max_leaves=4, step="optimal").fit(train, eval_set=[valid])
    model = est.model_
    alphas = model.history["alpha"]
    assert len(alphas) == model.n_trees == 6
    np.testing.assert_array_equal(model.tree_weights, alphas)
    assert all(0.1 < a < 5.0 for a in alphas)
    # the recorded validation metric is the metric of the weighted model's scores
    scores = est.predict(valid.X)
    assert np.mean(metrics.ndcg(valid.y, scores, valid.query_offsets, k=10)) == \
        pytest.approx(model.history["valid:ndcg@10"][-1], abs=1e-12)


def test_optimal_steps_twins_agree(data):
    train, valid = data
    r = reference.LambdaMART(n_trees=4, max_leaves=4, step="optimal").fit(train, eval_set=[valid]).model_
    f = fast.LambdaMART(n_trees=4, max_leaves=4, step="optimal").fit(train, eval_set=[valid]).model_
    np.testing.assert_allclose(r.tree_weights, f.tree_weights, rtol=1e-9)


def test_newton_weights_are_one_and_step_checks(data):
    train, valid = data
    model = fast.LambdaMART(n_trees=3, max_leaves=4).fit(train).model_
    np.testing.assert_array_equal(model.tree_weights, 1.0)
    assert "alpha" not in model.history
    with pytest.raises(ParameterError, match="validation data"):
        fast.LambdaMART(n_trees=2, step="optimal").fit(train)
    with pytest.raises(ParameterError, match="dcg"):
        fast.LambdaMART(n_trees=2, step="optimal", metric="map").fit(train, eval_set=[valid])
    with pytest.raises(ParameterError, match="step_range"):
        fast.LambdaMART(n_trees=2, step="optimal", step_range=(5.0, 1.0)).fit(train, eval_set=[valid])
    model = fast.LambdaMART(n_trees=2, max_leaves=4, step="optimal", step_on="train").fit(train).model_
    assert len(model.history["alpha"]) == 2


@pytest.mark.parametrize("twin, reweight", [(reference, ref_reweight), (fast, fast_reweight)],
                         ids=["reference", "fast"])
def test_refit_never_decreases_and_matches_the_model(twin, reweight, data):
    train, valid = data
    model = twin.LambdaMART(n_trees=8, max_leaves=4, learning_rate=0.3).fit(train).model_
    refit = reweight.refit_weights(model, valid, sweeps=2)
    trace = refit.history["refit:ndcg@10"]
    assert len(trace) == 3 and np.all(np.diff(trace) >= 0) and trace[-1] > trace[0]
    assert expected_ndcg10(refit, valid) == pytest.approx(trace[-1], abs=1e-12)
    assert expected_ndcg10(model, valid) == pytest.approx(trace[0], abs=1e-12)


@pytest.mark.parametrize("reweight", [ref_reweight, fast_reweight], ids=["reference", "fast"])
def test_interpolate_writes_a_model_that_scores_the_mix(reweight, data, tmp_path):
    train, valid = data
    model_a = fast.LambdaMART(n_trees=5, max_leaves=4).fit(train).model_
    model_b = fast.RandomForest(n_trees=5, max_leaves=8).fit(train).model_
    mixed = reweight.interpolate(model_a, model_b, valid)
    alpha = mixed.history["alpha"][0]
    assert 0.0 < alpha < 1.0
    mixed.save(tmp_path / "mixed.json")
    loaded = load_model(tmp_path / "mixed.json")
    want = (1 - alpha) * predict_ensemble(model_a, valid.X) + alpha * predict_ensemble(model_b, valid.X)
    np.testing.assert_allclose(predict_ensemble(loaded, valid.X), want, rtol=1e-12, atol=1e-12)
    value = float(np.mean(metrics.ndcg(valid.y, want, valid.query_offsets, k=10, ties="expected")))
    assert value == pytest.approx(mixed.history["valid:ndcg@10"][0], abs=1e-12)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_trains_with_optimal_steps(engine, data, tmp_path, capsys):
    from twinrank.cli import main
    from twinrank.reference.io.letor import write_letor
    train, valid = data
    write_letor(train, tmp_path / "train.txt")
    write_letor(valid, tmp_path / "valid.txt")
    code = main(["train", "--train", str(tmp_path / "train.txt"), "--valid", str(tmp_path / "valid.txt"),
                 "--model", str(tmp_path / "m.json"), "--trees", "3", "--max-leaves", "4", "--step", "optimal",
                 "--step-range", "0.2,3", "--engine", engine, "--quiet"])
    assert code == 0, capsys.readouterr().err
    model = load_model(tmp_path / "m.json")
    assert len(model.history["alpha"]) == model.n_trees == 3
    assert all(0.2 < a < 3.0 for a in model.history["alpha"])
    np.testing.assert_array_equal(model.tree_weights, model.history["alpha"])
    with pytest.raises(SystemExit) as exit_:  # argparse: one error line and its hint, status 2
        main(["train", "--train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "m.json"),
              "--step", "optimal", "--step-range", "3", "--engine", engine])
    assert exit_.value.code == 2 and "LO,HI" in capsys.readouterr().err

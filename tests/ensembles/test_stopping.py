"""The stopping rules of the boosting loop, on hand-written validation curves."""
import pytest

from twinrank.reference.ensembles.boosting import StoppingRule
from twinrank.reference.params import BoostParams


def run_rule(curve, start=0.0, **params):
    rule = StoppingRule(BoostParams(**params))
    rule.start(start)
    for n, value in enumerate(curve, start=1):
        if rule.update(n, value):
            return n, rule.n_trees_to_keep(n)
    return len(curve), rule.n_trees_to_keep(len(curve))


def test_patience_stops_and_keeps_the_best_round():
    curve = [0.1, 0.3, 0.2, 0.25, 0.29, 0.1]
    assert run_rule(curve, early_stopping_rounds=3) == (5, 2)


def test_patience_never_triggered_keeps_the_best_round_at_the_end():
    assert run_rule([0.1, 0.3, 0.2], early_stopping_rounds=5) == (3, 2)


def test_initial_model_can_be_the_best():
    assert run_rule([0.4, 0.3], start=0.5, early_stopping_rounds=2) == (2, 0)


def test_overfit_tolerance_keeps_trees_within_tolerance_after_the_maximum():
    # maximum 0.50 after 2 trees; 0.495 and 0.491 are within 2% (>= 0.49); 0.48 is not
    curve = [0.4, 0.5, 0.495, 0.491, 0.48, 0.6]
    assert run_rule(curve, overfit_tolerance=0.02) == (5, 4)


def test_overfit_tolerance_stops_at_the_cap_of_extra_trees():
    curve = [0.5] + [0.499] * 10
    assert run_rule(curve, overfit_tolerance=0.02, overfit_extra_trees=3) == (4, 4)


def test_rmse_is_minimised():
    assert run_rule([1.0, 0.5, 0.7, 0.8], start=2.0, metric="rmse", early_stopping_rounds=2) == (4, 2)


def test_patience_and_tolerance_are_exclusive():
    with pytest.raises(ValueError, match="not both"):
        BoostParams(early_stopping_rounds=3, overfit_tolerance=0.02)

"""Gain tables: a label outside the grades of ``letor`` or ``mslr`` is refused, never read as gain 0.

LETOR 4.0's Eval-Score-4.0.pl grades documents 0-2 and looks each label up in its gain table:
MSLR-WEB's grades 3 and 4 are not there, so the script gives them gain 0 and counts them as not
relevant. Labels 4, 3, 0, 1 ranked in that order (the two best documents on top) would score
NDCG 0.5 and ranked in reverse 1.0. The ``letor`` preset refuses such a label, naming it and
pointing at ``mslr``: the MSLR-WEB version of the script, gain $2^l - 1$ over grades 0-4
(its numbers are checked in ``test_metrics_oracles.py``).
"""
import math

import numpy as np
import pytest

from twinrank.fast.evaluation import metrics as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.evaluation import metrics as ref

TWINS = [ref, fast]
Y = np.array([4.0, 3.0, 0.0, 1.0])
BEST_ON_TOP = np.array([4.0, 3.0, 2.0, 1.0])  # scores: ranked 4, 3, 0, 1
REVERSED = -BEST_ON_TOP  # ranked 1, 0, 3, 4
OFFSETS = np.array([0, 4])
EVERY_METRIC = ["ndcg", "ndcg@3", "dcg", "meanndcg", "map", "p@3", "err", "rr", "auc", "pauc", "global_auc",
                "global_pauc_raw"]


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
@pytest.mark.parametrize("name", EVERY_METRIC)
def test_letor_refuses_grades_above_2_naming_the_label_and_mslr(twin, name):
    with pytest.raises(ParameterError) as refused:
        twin.evaluate([name], Y, BEST_ON_TOP, OFFSETS, convention="letor")
    message = str(refused.value)
    assert "y[0] = 4 is not a grade of the 'letor' convention's gain table (grades 0-2)" in message
    assert "gain 0 and not relevant" in message and "convention='mslr'" in message


def test_the_silent_reading_is_what_the_refusal_prevents():
    """Labels 3 and 4 read as 0, as the script reads them: the better ranking scores half the worse one."""
    silent = np.where(Y > 2, 0.0, Y)
    for twin in TWINS:
        assert twin.ndcg(silent, BEST_ON_TOP, OFFSETS, convention="letor")[0] == 0.5  # 1 / log2(4)
        assert twin.ndcg(silent, REVERSED, OFFSETS, convention="letor")[0] == 1.0


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_mslr_scores_grades_0_to_4_with_gain_2_to_the_l_minus_1(twin):
    l3 = math.log2(3)
    ideal = 15 + 7 + 1 / l3  # ranked 4, 3, 1, 0; discount 1 at ranks 1 and 2, then 1 / log2(r)
    best_on_top = twin.ndcg(Y, BEST_ON_TOP, OFFSETS, convention="mslr")[0]
    reversed_ = twin.ndcg(Y, REVERSED, OFFSETS, convention="mslr")[0]
    assert best_on_top == pytest.approx((15 + 7 + 0 + 1 / 2) / ideal, rel=1e-15)
    assert reversed_ == pytest.approx((1 + 0 + 7 / l3 + 15 / 2) / ideal, rel=1e-15)
    assert reversed_ < best_on_top < 1.0
    assert twin.ndcg(Y, Y, OFFSETS, convention="mslr")[0] == 1.0  # the ideal order
    # grades 2-4 are relevant, grade 1 is not (the script's %hsPrecisionRel)
    assert twin.average_precision(Y, REVERSED, OFFSETS, convention="mslr")[0] == pytest.approx((1 / 3 + 2 / 4) / 2)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_the_tables_refuse_other_scales_and_fractions(twin):
    with pytest.raises(ParameterError, match=r"y\[1\] = 5 is not a grade of the 'mslr'.*'lightgbm' or 'ranklib'"):
        twin.ndcg(np.array([1.0, 5.0]), np.array([1.0, 0.0]), np.array([0, 2]), convention="mslr")
    with pytest.raises(ParameterError, match=r"y\[0\] = 1.5 is not a grade of the 'letor'"):
        twin.ndcg(np.array([1.5, 0.0]), np.array([1.0, 0.0]), np.array([0, 2]), convention="letor")
    with pytest.raises(ParameterError, match=r"y\[1\] = -1 is not a grade of the 'letor'"):
        twin.evaluate(["map"], np.array([0.0, -1.0]), np.array([1.0, 0.0]), np.array([0, 2]), convention="letor")


def test_a_convention_of_your_own_with_a_table_gain_refuses_too():
    custom = ref.Convention(gain="letor", no_relevant_value=1.0)
    for twin in TWINS:
        with pytest.raises(ParameterError, match="'letor' convention's gain table"):
            twin.ndcg(Y, BEST_ON_TOP, OFFSETS, convention=custom)
    with pytest.raises(ParameterError, match=r"y\[0\] = 4"):
        ref.gain(Y, "letor")
    np.testing.assert_array_equal(ref.gain(np.array([0.0, 1.0, 2.0]), "letor"), [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(ref.gain(np.arange(5.0), "mslr"), np.exp2(np.arange(5.0)) - 1)

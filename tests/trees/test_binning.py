"""Binning: thresholds and bins agree bit for bit in both twins; raw and binned routes agree."""
import math

import numba
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from twinrank.fast import load_mq2008
from twinrank.fast.trees import binning as fast
from twinrank.reference.errors import ParameterError
from twinrank.reference.trees import binning as ref

TWINS = [ref, fast]

# Few values, so ties, constant and all-NaN columns, empty bins occur every run.
FEW_VALUES = st.sampled_from([np.nan, -2.5, -1.0, 0.0, 0.25, 1.0, 3.75, 1e3])
ANY_FLOAT32 = st.floats(width=32, allow_nan=True, allow_infinity=False)


@st.composite
def matrices(draw):
    n_rows = draw(st.integers(1, 40))
    n_features = draw(st.integers(1, 3))
    elements = draw(st.sampled_from([FEW_VALUES, ANY_FLOAT32]))
    return draw(hnp.arrays(np.float32, (n_rows, n_features), elements=elements))


MAX_BINS = st.one_of(st.integers(2, 8), st.just(255))


@given(matrices(), MAX_BINS)
def test_thresholds_and_bins_identical_in_both_twins(X, max_bins):
    t_ref = ref.bin_thresholds(X.copy(), max_bins)
    t_fast = fast.bin_thresholds(X.copy(), max_bins)
    assert len(t_ref) == len(t_fast) == X.shape[1]
    for a, b in zip(t_ref, t_fast):
        assert a.dtype == b.dtype == np.float64
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ref.apply_bins(X.copy(), t_ref), fast.apply_bins(X.copy(), t_fast))


@given(matrices(), MAX_BINS)
def test_thresholds_ascending_and_at_most_max_bins_minus_one(X, max_bins):
    for t in ref.bin_thresholds(X, max_bins):
        assert len(t) <= max_bins - 1
        assert np.all(np.diff(t) > 0)
        assert np.all(np.isfinite(t))


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
@given(X=matrices(), max_bins=MAX_BINS)
def test_raw_and_binned_routes_agree(twin, X, max_bins):
    """x <= t_b  <=>  bin(x) <= b for every threshold index b; NaN -> MISSING_BIN."""
    thresholds = twin.bin_thresholds(X, max_bins)
    binned = twin.apply_bins(X, thresholds)
    assert binned.dtype == np.uint8 and binned.shape == X.shape
    for j, t in enumerate(thresholds):
        x, bins = X[:, j].astype(np.float64), binned[:, j]
        np.testing.assert_array_equal(bins == ref.MISSING_BIN, np.isnan(x))
        present = ~np.isnan(x)
        assert np.all(bins[present] <= len(t))
        for b, t_b in enumerate(t):
            np.testing.assert_array_equal(x[present] <= t_b, bins[present] <= b)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_few_distinct_values_get_midpoints(twin):
    X = np.array([[3.0], [1.0], [1.0], [np.nan], [2.0]], dtype=np.float32)
    (t,) = twin.bin_thresholds(X)
    np.testing.assert_array_equal(t, [(1 + 2) / 2, (2 + 3) / 2])
    np.testing.assert_array_equal(twin.apply_bins(X, [t])[:, 0], [2, 0, 0, ref.MISSING_BIN, 1])


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_many_distinct_values_get_numpy_midpoint_percentiles(twin):
    """scikit-learn's rule. With gcd(n - 1, max_bins) = 1 no percentile position is an
    integer, so numpy's floating-point positions cannot round across one."""
    col = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    col[::10] = np.nan
    present = col[~np.isnan(col)].astype(np.float64)  # 900 values
    max_bins = 7
    assert math.gcd(len(present) - 1, max_bins) == 1
    expected = np.unique(np.percentile(present, np.linspace(0, 100, max_bins + 1)[1:-1],
                                       method="midpoint"))
    (t,) = twin.bin_thresholds(col[:, None], max_bins)
    np.testing.assert_array_equal(t, expected)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_constant_and_all_missing_columns_have_no_thresholds(twin):
    X = np.array([[2.0, np.nan], [2.0, np.nan], [np.nan, np.nan]], dtype=np.float32)
    thresholds = twin.bin_thresholds(X)
    assert [len(t) for t in thresholds] == [0, 0]
    np.testing.assert_array_equal(twin.apply_bins(X, thresholds),
                                  [[0, 255], [0, 255], [255, 255]])


def test_fast_bins_are_fortran_ordered():
    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert fast.apply_bins(X, fast.bin_thresholds(X)).flags.f_contiguous


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_bad_input_is_a_parameter_error(twin):
    X = np.ones((3, 2), dtype=np.float32)
    with pytest.raises(ParameterError, match="max_bins"):
        twin.bin_thresholds(X, 256)
    with pytest.raises(ParameterError, match="max_bins"):
        twin.bin_thresholds(X, 1)
    with pytest.raises(ParameterError, match=r"X\[1, 0\] is infinite"):
        twin.bin_thresholds(np.array([[0.0], [np.inf]]))
    with pytest.raises(ParameterError, match="X has 2 features but the thresholds are for 3"):
        twin.apply_bins(X, [np.zeros(0)] * 3)
    with pytest.raises(ParameterError, match="2-D"):
        twin.bin_thresholds(np.ones(3))


def test_255_bins_agree_on_values_at_and_between_thresholds():
    """Many distinct values (up to 254 thresholds); probes at, just above and far from them."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5000, 3)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 40)  # ~300 distinct values, quantile midpoints with ties
    X[::7, 2] = np.nan
    t_ref, t_fast = ref.bin_thresholds(X), fast.bin_thresholds(X)
    assert len(t_ref[0]) == 254
    for a, b in zip(t_ref, t_fast):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ref.apply_bins(X, t_ref), fast.apply_bins(X, t_fast))
    for j, t in enumerate(t_ref):
        probe = np.r_[t, np.nextafter(t, np.inf), -1e300, 1e300, np.nan]  # (2 len(t) + 3,)
        expected = np.r_[np.searchsorted(t, probe[:-1], side="left"), ref.MISSING_BIN]
        X_probe = np.zeros((len(probe), 3))
        X_probe[:, j] = probe
        for twin in TWINS:
            np.testing.assert_array_equal(twin.apply_bins(X_probe, t_ref)[:, j], expected)


def test_float32_values_next_to_thresholds_get_the_float64_bins():
    """fast compares float32 features with thresholds rounded down to float32: the float32 values
    just below, at and just above each (float64) threshold get the reference's bins."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3000, 2)).astype(np.float32)
    X[:, 1] = X[:, 1] * 1e-30  # tiny values: thresholds between float32 neighbours
    thresholds = ref.bin_thresholds(X)
    for j, t in enumerate(thresholds):
        near = t.astype(np.float32)  # (len(t),) the nearest float32, above or below t
        probe = np.r_[near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf)),
                      np.float32(np.inf), np.float32(-np.inf)].astype(np.float32)
        X_probe = np.zeros((len(probe), 2), dtype=np.float32)
        X_probe[:, j] = probe
        np.testing.assert_array_equal(fast.apply_bins(X_probe, thresholds)[:, j],
                                      np.searchsorted(t, probe.astype(np.float64), side="left"))
        np.testing.assert_array_equal(fast.apply_bins(X_probe, thresholds), ref.apply_bins(X_probe, thresholds))


@given(matrices(), MAX_BINS, st.integers(1, 45), st.integers(0, 3))
def test_sampled_thresholds_identical_in_both_twins(X, max_bins, subsample_for_bin, seed):
    t_ref = ref.bin_thresholds(X, max_bins, subsample_for_bin, seed)
    t_fast = fast.bin_thresholds(X, max_bins, subsample_for_bin, seed)
    for a, b in zip(t_ref, t_fast):
        np.testing.assert_array_equal(a, b)
    rows = ref.bin_sample(len(X), subsample_for_bin, seed)
    expected = ref.bin_thresholds(X if rows is None else X[rows], max_bins)
    for a, b in zip(t_ref, expected):
        np.testing.assert_array_equal(a, b)


def test_bin_sample_draws_distinct_sorted_rows_from_the_seed():
    rows = ref.bin_sample(1000, 300, seed=7)
    assert len(rows) == 300 and np.all(np.diff(rows) > 0) and rows[0] >= 0 and rows[-1] < 1000
    np.testing.assert_array_equal(rows, ref.bin_sample(1000, 300, seed=7))
    assert not np.array_equal(rows, ref.bin_sample(1000, 300, seed=8))
    assert ref.bin_sample(300, 300, seed=7) is None and ref.bin_sample(10, None, seed=7) is None


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_at_most_subsample_for_bin_rows_are_all_read(twin):
    """Data of at most ``subsample_for_bin`` rows: the thresholds of all rows, whatever the seed."""
    X = np.random.default_rng(1).standard_normal((500, 3)).astype(np.float32)
    every_row = twin.bin_thresholds(X, 255)
    assert len(every_row[0]) == 254
    for subsample_for_bin, seed in [(500, 0), (10_000, 3)]:
        for a, b in zip(twin.bin_thresholds(X, 255, subsample_for_bin, seed), every_row):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(twin.bin_thresholds(X, 255, 499, 0)[0], every_row[0])


@pytest.fixture(scope="module")
def mq2008_hard():
    """MQ2008 fold 1's training rows with a duplicated feature, a constant column, NaNs and ties."""
    train = load_mq2008(fold=1)[0]
    X = train.X.astype(np.float32)
    X = np.c_[X, X[:, :1], np.full(len(X), 3.0, dtype=np.float32)]  # duplicated feature 0, constant column
    X[::11, 2] = np.nan
    X[:, 3] = np.round(X[:, 3], 1)  # ties
    return X


@pytest.mark.parametrize("subsample_for_bin", [None, 2000])
def test_mq2008_thresholds_and_bins_identical_in_both_twins_on_any_thread_count(mq2008_hard, subsample_for_bin):
    X = mq2008_hard
    t_ref = ref.bin_thresholds(X, 255, subsample_for_bin, seed=4)
    b_ref = ref.apply_bins(X, t_ref)
    old = numba.get_num_threads()
    try:
        for n_threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(n_threads)
            t_fast = fast.bin_thresholds(X, 255, subsample_for_bin, seed=4)
            for a, b in zip(t_ref, t_fast):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(fast.apply_bins(X, t_fast), b_ref)
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_bad_subsample_for_bin_is_a_parameter_error(twin):
    X = np.ones((3, 2), dtype=np.float32)
    for bad in (0, 2.5, True):
        with pytest.raises(ParameterError, match="subsample_for_bin"):
            twin.bin_thresholds(X, 255, bad)


@pytest.mark.parametrize("twin", TWINS, ids=["reference", "fast"])
def test_an_infinite_value_in_the_sample_is_named_by_its_row_in_X(twin):
    X = np.zeros((50, 2))
    rows = ref.bin_sample(50, 10, seed=1)
    X[rows[3], 1] = -np.inf
    with pytest.raises(ParameterError, match=rf"X\[{rows[3]}, 1\] is infinite"):
        twin.bin_thresholds(X, 255, 10, 1)


def test_float16_and_integer_features_binned_as_their_float64_values():
    rng = np.random.default_rng(2)
    for X in (rng.standard_normal((400, 3)).astype(np.float16), rng.integers(-5, 500, (400, 3))):
        t_ref = ref.bin_thresholds(X, 64, 300, 0)
        t_fast = fast.bin_thresholds(X, 64, 300, 0)
        for a, b in zip(t_ref, t_fast):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(fast.apply_bins(X, t_ref), ref.apply_bins(X, t_ref))

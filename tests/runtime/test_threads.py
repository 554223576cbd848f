"""``threads(n)``: the block runs on n numba threads, the old count comes back however it ends."""
import numba
import numpy as np
import pytest

from twinrank.fast.runtime._threads import threads
from twinrank.reference.errors import ParameterError


def test_the_count_is_set_for_the_block_and_restored_even_after_an_error():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two numba threads")
    before = numba.get_num_threads()
    with threads(1):
        assert numba.get_num_threads() == 1
        with threads(2):
            assert numba.get_num_threads() == 2
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with pytest.raises(KeyError), threads(1):
        raise KeyError("inside")
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("n_threads", [None, -1, 10**6, np.int64(1)])
def test_none_minus_one_and_large_counts_mean_every_thread_numba_has(n_threads):
    with threads(n_threads):
        expected = 1 if n_threads == 1 else numba.config.NUMBA_NUM_THREADS
        assert numba.get_num_threads() == expected


@pytest.mark.parametrize("n_threads", [0, -2, True, 1.5, "2"])
def test_other_counts_are_refused(n_threads):
    with pytest.raises(ParameterError, match="n_threads must be a number of threads"):
        threads(n_threads)

"""The argument checks every parameter object (and a few kernels) validates with: one error each."""
from __future__ import annotations

import math
import numbers

import numpy as np

from twinrank.reference.errors import ParameterError


def check_int(name, value, low=None, high=None):
    """Raise ParameterError unless ``value`` is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    if low is not None and value < low:
        raise ParameterError(f"{name} must be >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ParameterError(f"{name} must be <= {high}, got {value!r}")


def check_n_threads(name, value):
    """Raise ParameterError unless ``value`` is None or -1 (all cores) or an integer >= 1.

    scikit-learn's ``n_jobs=-1`` and LightGBM's ``num_threads <= 0`` mean all cores;
    here only -1 does: 0 and other negatives are refused rather than guessed at.
    """
    if value is None or (not isinstance(value, bool) and isinstance(value, numbers.Integral) and value == -1):
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} must be a number of threads >= 1, or -1 for all cores; got {value!r}")


def check_real(name, value, low=None, high=None):
    """Raise ParameterError unless ``value`` is a finite real number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {value!r}")
    if low is not None and value < low:
        raise ParameterError(f"{name} must be >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ParameterError(f"{name} must be <= {high}, got {value!r}")


MAX_PROCESSES = 4096  # n_jobs, workers: local processes (a 4,096-core machine is far beyond today's largest)


def check_processes(name, value):
    """Raise ParameterError unless ``value`` is None or a count of local processes in ``[1, MAX_PROCESSES]``."""
    if value is not None:
        check_int(name, value, low=1, high=MAX_PROCESSES)


MAX_SIGMA = 1e6  # RankNet's sigmoid is a step long before: at 1e6 a score gap of 1e-5 is a probability of 1 - e^-10


def check_sigma(value):
    """Raise ParameterError unless ``value``, the steepness of RankNet's sigmoid, is in ``(0, MAX_SIGMA]``
    (beyond, ``sigma ** 2`` in the hessians overflows long before ``1e308``)."""
    check_real("sigma", value, high=MAX_SIGMA)
    if value <= 0:
        raise ParameterError(f"sigma must be > 0, got {value!r}")


def check_fraction(name, value):
    """A fraction in (0, 1]."""
    check_real(name, value)
    if not 0.0 < value <= 1.0:
        raise ParameterError(f"{name} must be in (0, 1], got {value!r}")


def metric_list(name, value) -> tuple:
    """``value`` as a tuple of metric names: one name, names separated by commas (LightGBM's
    ``metric="ndcg@5,map"``) or a list or tuple of names; ParameterError if empty or a name repeats.

    Only the form is checked here; a name is checked when it is first evaluated.
    """
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ParameterError(f"{name} must be a metric name, names separated by commas or a list of names "
                             f"(e.g. 'ndcg@10' or ['ndcg@5', 'map']), got {value!r}")
    names = tuple(n.strip() for n in names)
    if not names or not all(names):
        raise ParameterError(f"{name} must name at least one metric and no empty one, got {value!r}")
    repeated = [n for i, n in enumerate(names) if n in names[:i]]
    if repeated:
        raise ParameterError(f"{name} names {repeated[0]!r} twice: {value!r}")
    return names


MAX_COUNT = 2**62  # min_samples_leaf as a count: twice it still fits the grower's int64 row counts


def check_min_samples_leaf(value):
    """Raise ParameterError unless ``value`` is a count in ``[1, MAX_COUNT]``, a fraction in (0, 1) or a
    percent ``"p%"`` with 0 < p <= 100."""
    if isinstance(value, str):
        if not 0.0 < percent_of(value) <= 100.0:
            raise ParameterError(f"min_samples_leaf as a percent must be in (0%, 100%], got {value!r}")
        return
    if isinstance(value, float) and 0.0 < value < 1.0:
        return
    if isinstance(value, float) and value.is_integer() and 1 <= value <= MAX_COUNT:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= MAX_COUNT:
        raise ParameterError(
            f"min_samples_leaf must be a count in [1, 2^62] or a fraction in (0, 1), got {value!r}"
        )


def percent_of(value: str) -> float:
    """The number ``p`` of a percent ``"p%"`` (ParameterError for any other string)."""
    try:
        if not value.endswith("%"):
            raise ValueError
        p = float(value[:-1])
    except ValueError:
        raise ParameterError(f"min_samples_leaf: a string must be a percent such as '0.25%', got {value!r}") from None
    if not math.isfinite(p):
        raise ParameterError(f"min_samples_leaf: {value!r} is not a finite percent")
    return p


def check_bool(name, value):
    """Raise ParameterError unless ``value`` is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, got {value!r}")

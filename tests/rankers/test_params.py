"""One parameter path: every estimator parameter is one dataclass field, validated before any data
work, and has its flag in ``twinrank train --help``."""
import dataclasses
import inspect

import numpy as np
import pytest
from synthetic import ranking_data

from twinrank.cli import main
from twinrank.cli.training import train as _cli_train
from twinrank.reference.errors import ParameterError
from twinrank.reference.rankers import classification, forest, gbrt, lambdamart

ESTIMATORS = [lambdamart.LambdaMART, gbrt.GBRT, forest.RandomForest, forest.IGBRT,
              classification.McRank, classification.CumulativeRegression]


def keyword_parameters(cls):
    return [p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.kind == p.KEYWORD_ONLY]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_one_field_of_its_parameter_objects(cls):
    for name in keyword_parameters(cls):
        owners = [params_class for entry in cls.param_objects
                  for prefix, params_class in [entry if isinstance(entry, tuple) else ("", entry)]
                  if name in {prefix + f.name for f in dataclasses.fields(params_class)}]
        assert len(owners) == 1, f"{cls.__name__}.{name} is a field of {owners}"


def test_every_keyword_parameter_of_every_estimator_has_its_flag(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    shown = capsys.readouterr().out
    for cls in ESTIMATORS:
        for name in keyword_parameters(cls):
            assert _cli_train.flag(name) in shown, f"{cls.__name__}.{name}"
    for alias in ("--trees", "--leaves", "--early-stopping", "--rf-trees", "--rf-leaves", "--threads"):
        assert alias in shown


@pytest.mark.parametrize("bad", [{"sigma": -1.0}, {"sigma": 1e308}, {"max_leaves": 2**31},
                                 {"min_samples_leaf": 1e30}, {"min_samples_leaf": 2**63},
                                 {"truncation": 0}, {"target": "auc"},
                                 {"normalize": "yes"}, {"min_gain_to_split": -1.0},
                                 {"cost_lambda": float("nan")}, {"n_threads": 0}])
def test_parameters_are_checked_before_any_data_work(bad):
    with pytest.raises(ParameterError, match=next(iter(bad)).split("_")[0]):
        lambdamart.LambdaMART(**bad).fit(np.zeros((2, 1)), np.zeros(3), np.zeros(1))  # bad data too


def test_min_gain_to_split_reaches_the_trees():
    train = ranking_data(seed=3, n_queries=10)
    options = dict(n_trees=3, max_leaves=8, min_samples_leaf=2)
    plain = lambdamart.LambdaMART(**options).fit(train).model_
    strict = lambdamart.LambdaMART(**options, min_gain_to_split=1e9).fit(train).model_
    assert plain.n_trees == 3 and strict.n_trees == 0


def test_the_long_flag_and_its_alias_set_the_same_parameter():
    parser = _cli_train.argparse.ArgumentParser()
    _cli_train.add_parser(parser.add_subparsers())
    a = parser.parse_args(["train", "--train", "t", "--model", "m", "--max-leaves", "7"])
    b = parser.parse_args(["train", "--train", "t", "--model", "m", "--leaves", "7"])
    assert _cli_train.estimator_from_args(a).max_leaves == _cli_train.estimator_from_args(b).max_leaves == 7


@pytest.mark.parametrize("name", ["n_jobs", "workers"])
def test_process_counts_are_bounded_before_any_process_starts(name):
    from twinrank.executors import make_executor
    from twinrank.reference.params import BaggingParams

    for make in (BaggingParams, make_executor):
        with pytest.raises(ParameterError, match=f"{name} must be <= 4096, got {2**63}"):
            make(**{name: 2**63})

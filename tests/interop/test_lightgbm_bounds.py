"""A LightGBM text model whose header or trees would exhaust memory is refused by field, before allocation."""
import tracemalloc

import pytest

from twinrank.cli import main
from twinrank.interop.lightgbm_text import from_lightgbm_text, to_lightgbm_text
from twinrank.reference.constants import MAX_MODEL_FEATURES
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io.model import Ensemble, Tree


def stump_text() -> str:
    tree = Tree(feature=[2, -1, -1], threshold=[0.5, 0.0, 0.0], bin_threshold=[-1, -1, -1], left=[1, -1, -1],
                right=[2, -1, -1], missing=[1, -1, -1], value=[0.0, -1.0, 1.0], gain=[1.0, 0.0, 0.0],
                count=[2, 1, 1], hessian_sum=[2.0, 1.0, 1.0])
    return to_lightgbm_text(Ensemble(trees=[tree], tree_weights=[1.0], n_features=3, algorithm="lambdamart"))


def refused(text: str) -> tuple[str, int]:
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError) as e:
            from_lightgbm_text(text, source="m.txt")
        return str(e.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("index", [MAX_MODEL_FEATURES, 999_999_999_999, -2])
def test_max_feature_idx_beyond_the_widest_model_is_refused_before_allocation(index):
    text = stump_text().replace("max_feature_idx=2", f"max_feature_idx={index}")
    message, peak = refused(text)
    assert message.startswith(f"m.txt:{text.splitlines().index(f'max_feature_idx={index}') + 1}: "
                              f"max_feature_idx={index} must be in 0 .. {MAX_MODEL_FEATURES - 1:,}")
    assert peak < 2**20


def test_the_widest_lightgbm_model_imports():
    text = stump_text().replace("max_feature_idx=2", f"max_feature_idx={MAX_MODEL_FEATURES - 1}")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("feature_names="))
    assert from_lightgbm_text(text).n_features == MAX_MODEL_FEATURES


def test_num_leaves_is_checked_against_the_tree_it_describes():
    message, peak = refused(stump_text().replace("num_leaves=2", "num_leaves=1000000000000"))
    assert "leaf_value has 2 values, expected 1000000000000" in message and peak < 2**20


@pytest.mark.parametrize("line", ["max_feature_idx", "num_leaves"])
def test_an_integer_of_a_hundred_thousand_digits_is_refused_in_one_line(line):
    text = stump_text().replace(f"{line}=2", f"{line}={'9' * 100_001}")
    message, _ = refused(text)
    assert f"{line}='99999" in message and "is not an integer" in message and len(message) < 300


def test_import_of_a_forged_width_is_one_line(tmp_path, capsys):
    (tmp_path / "m.txt").write_text(stump_text().replace("max_feature_idx=2", "max_feature_idx=999999999999"))
    assert main(["import", "--model", str(tmp_path / "m.txt"), "--output", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "max_feature_idx=999999999999 must be in" in err
    assert not (tmp_path / "m.json").exists()

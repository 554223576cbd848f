"""Model fields that would exhaust memory or overflow are refused by field, before any allocation."""
import json
import tracemalloc

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.constants import MAX_MODEL_FEATURES
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._model_json import write_model_atomic
from twinrank.reference.io.model import Ensemble, Tree, load_model
from twinrank.reference.trees.explain import feature_importances


def stump(n_features: int = 3, feature: int = 2) -> Ensemble:
    tree = Tree(feature=[feature, -1, -1], threshold=[0.5, 0.0, 0.0], bin_threshold=[-1, -1, -1],
                left=[1, -1, -1], right=[2, -1, -1], missing=[1, -1, -1], value=[0.0, -1.0, 1.0],
                gain=[1.0, 0.0, 0.0], count=[2, 1, 1], hessian_sum=[2.0, 1.0, 1.0])
    return Ensemble(trees=[tree], tree_weights=[1.0], n_features=n_features, algorithm="lambdamart")


def edited(tmp_path, edit, name="m.json"):
    """A model file with ``edit`` applied to its document and a checksum that matches the edit."""
    doc = stump().to_dict()
    edit(doc)
    write_model_atomic(tmp_path / name, doc)
    return tmp_path / name


def refused(path, **kwargs) -> tuple[str, int]:
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError) as e:
            load_model(path, **kwargs)
        return str(e.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("width", [MAX_MODEL_FEATURES + 1, 500_000_000, 2**62])
def test_a_width_beyond_the_widest_model_is_refused_before_allocation(tmp_path, width):
    path = edited(tmp_path, lambda doc: doc.update(n_features=width))
    message, peak = refused(path)
    assert message == (f"{path}: n_features: {width:,} features is wider than {MAX_MODEL_FEATURES:,}, the "
                       "widest model twinrank reads")
    assert peak < 2**20


def test_the_widest_model_loads(tmp_path):
    model = load_model(edited(tmp_path, lambda doc: doc.update(n_features=MAX_MODEL_FEATURES)))
    assert model.n_features == MAX_MODEL_FEATURES


@pytest.mark.parametrize("field, edit", [
    ("n_features", lambda doc: doc.update(n_features=2**63)),
    ("trees[0].count[0]", lambda doc: doc["trees"][0]["count"].__setitem__(0, 2**63)),
    ("trees[0].left[0]", lambda doc: doc["trees"][0]["left"].__setitem__(0, -2**63 - 1)),
    ("best_iteration", lambda doc: doc.update(best_iteration=2**70)),
])
def test_an_integer_beyond_int64_is_named_by_its_field(tmp_path, field, edit):
    message, _ = refused(edited(tmp_path, edit))
    assert f"m.json: {field}: " in message and "beyond the 64-bit integers a model field holds" in message


@pytest.mark.parametrize("where", ["n_features", "count"])
def test_an_integer_of_a_hundred_thousand_digits_is_named_by_its_field(tmp_path, where):
    text = json.dumps(stump().to_dict())
    digits = "9" * 100_001
    text = (text.replace('"n_features": 3', f'"n_features": {digits}') if where == "n_features" else
            text.replace('"count": [2,', f'"count": [{digits},'))
    assert digits in text
    (tmp_path / "m.json").write_text(text)
    for verify in (True, False):
        message, _ = refused(tmp_path / "m.json", verify_checksum=verify)
        field = "n_features" if where == "n_features" else "trees[0].count[0]"
        assert message == f"{tmp_path / 'm.json'}: {field}: an integer of 100,001 digits, beyond the 64-bit " \
                          "integers a model field holds"


def test_inspect_refuses_a_forged_width_in_one_line(tmp_path, capsys):
    path = edited(tmp_path, lambda doc: doc.update(n_features=500_000_000))
    assert main(["inspect", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith("the widest model twinrank reads")


def test_importances_of_a_wide_model_make_no_tree_by_feature_matrix():
    model = stump(n_features=2**18, feature=2**18 - 1)
    model = Ensemble(trees=model.trees * 64, tree_weights=np.ones(64), n_features=2**18)
    tracemalloc.start()
    try:
        gains = feature_importances(model, "gain")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert gains[-1] == 64.0 and gains[:-1].sum() == 0.0
    assert peak < 16 * 2**20  # a (64, 2^18) float64 matrix is 128 MiB
    np.testing.assert_array_equal(feature_importances(model, "gain", per_tree=True).sum(axis=0), gains)

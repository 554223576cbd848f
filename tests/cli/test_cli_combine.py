"""``twinrank combine``: on real MQ2008 data, the answer is the best of a brute-force evaluation
at every interval of the path (expected-NDCG ties), in both engines; bad input names the file."""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.combination import combine
from twinrank.reference.evaluation import metrics
from twinrank.reference.io.letor import read_letor

S1 = Path(read_letor.__code__.co_filename).parent / "datasets" / "mq2008" / "S1.txt.gz"


@pytest.fixture(scope="module")
def mq2008_part(tmp_path_factory):
    """MQ2008's part S1 and two 'rankers': its features 5 and 40 (many tied values), as score files."""
    folder = tmp_path_factory.mktemp("combine")
    data_path = folder / "s1.txt"
    data_path.write_bytes(gzip.decompress(S1.read_bytes()))
    data = read_letor(str(data_path))
    paths = []
    for feature in (5, 40):
        path = folder / f"f{feature}.txt"
        path.write_text("\n".join(repr(float(v)) for v in data.X[:, feature - 1]) + "\n")
        paths.append(str(path))
    return data, str(data_path), paths


def run(capsys, *argv):
    code = main(["combine", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@pytest.mark.parametrize("form, alpha_range", [("convex", (0.0, 1.0)), ("boosting", (-2.0, 3.0))])
def test_combine_equals_brute_force_on_mq2008(capsys, mq2008_part, form, alpha_range):
    data, data_path, (a_path, b_path) = mq2008_part
    a, b = data.X[:, 4].astype(np.float64), data.X[:, 39].astype(np.float64)
    answers = []
    for engine in ("fast", "reference"):
        code, out, err = run(capsys, "--data", data_path, "--scores", a_path, "--scores", b_path, "--form", form,
                             "--alpha-range=" + ",".join(map(str, alpha_range)), "--metric", "ndcg@10", "--json",
                             "--path", "--engine", engine)
        assert code == 0, err
        answers.append(json.loads(out))
    fast, reference = answers
    assert fast["alpha"] == reference["alpha"]
    np.testing.assert_array_equal(fast["breakpoints"], reference["breakpoints"])
    np.testing.assert_allclose(fast["values"], reference["values"], rtol=0, atol=1e-12)
    edges = np.r_[alpha_range[0], reference["breakpoints"], alpha_range[1]]
    assert len(edges) > 10  # a real path
    brute = [np.mean(metrics.ndcg(data.y, combine.combined_scores(a, b, 0.5 * (lo + hi), form), data.query_offsets,
                                  k=10, ties="expected")) for lo, hi in zip(edges[:-1], edges[1:])]
    np.testing.assert_allclose(reference["values"], brute, rtol=0, atol=1e-9)
    assert reference["value"] == pytest.approx(max(brute), abs=1e-9)
    at_alpha = np.mean(metrics.ndcg(data.y, combine.combined_scores(a, b, reference["alpha"], form),
                                    data.query_offsets, k=10, ties="expected"))
    assert at_alpha == pytest.approx(reference["value"], abs=1e-9)


def test_plain_output(capsys, mq2008_part):
    _, data_path, (a_path, b_path) = mq2008_part
    code, out, _ = run(capsys, "--data", data_path, "--scores", a_path, "--scores", b_path)
    assert code == 0
    assert out.splitlines()[0].startswith("alpha ") and out.splitlines()[1].startswith("ndcg@10 ")


def test_bad_input_names_the_file(capsys, mq2008_part, tmp_path):
    data, data_path, (a_path, _) = mq2008_part
    short = tmp_path / "short.txt"
    short.write_text("1.0\n2.0\n")
    nan = tmp_path / "nan.txt"
    nan.write_text("0.5\n" * 3 + "nan\n" + "0.5\n" * (data.n_rows - 4))
    cases = [
        (["--scores", a_path, "--scores", str(short)], f"{short}: holds 2 scores but {data.n_rows}"),
        (["--scores", a_path, "--scores", str(nan)], f"{nan}:4: score 'nan' is not a finite number"),
        (["--scores", a_path, "--scores", a_path, "--alpha-range", "1,1"], "--alpha-range '1,1'.*empty"),
        (["--scores", a_path, "--scores", a_path, "--alpha-range", "x"], "two numbers"),
        (["--scores", a_path], "exactly two score files"),
        (["--scores", a_path, "--scores", a_path, "--metric", "map"], "dcg"),
        (["--scores", a_path, "--scores", str(tmp_path / "missing.txt")], "missing.txt: no such file"),
    ]
    for argv, message in cases:
        code, _, err = run(capsys, "--data", data_path, *argv)
        assert code == 2
        assert pytest.importorskip("re").search(message, err), (message, err)

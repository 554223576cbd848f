"""``twinrank diagnose bias-variance``: every reported number equals a plain recomputation from the
saved score matrices (to 1e-9), for both methods and both engines; text output, plot; bad input."""
import errno
import json
import os

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.io.data import Dataset, load_mq2008
from twinrank.reference.io.letor import write_letor


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diagnose")
    train, _, test = load_mq2008(1)
    write_letor(train.take_queries(range(120)), tmp / "train.txt")
    write_letor(test.take_queries(range(60)), tmp / "test.txt")
    narrow = test.take_queries(range(5))
    write_letor(Dataset(narrow.X[:, :12], narrow.y, narrow.query_offsets), tmp / "narrow.txt")
    return tmp


def diagnose(files, *extra):
    return main(["diagnose", "bias-variance", "--algorithm", "random-forest", "--train", str(files / "train.txt"),
                 "--test", str(files / "test.txt"), "--set", "n_trees=4", "--set", "min_samples_leaf=10",
                 "--quiet", *extra])


def plain_ndcg(labels, scores, k=None):
    """NDCG of one query, lightgbm's convention: gain 2^l - 1, discount 1/log2(1 + rank), ties in input order."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # sorted() is stable
    ideal = sorted(labels, reverse=True)
    top = len(labels) if k is None else min(k, len(labels))
    dcg = sum((2.0 ** labels[order[r]] - 1) / np.log2(r + 2) for r in range(top))
    best = sum((2.0 ** ideal[r] - 1) / np.log2(r + 2) for r in range(top))
    return dcg / best if best > 0 else None  # None: no relevant document, left out


def recompute(P, y, offsets, ddof, k):
    """Every number of the report from the matrix alone, by the definitions (Eqs. 5-8, 11-17)."""
    B, n = P.shape
    mean = [sum(P[b, i] for b in range(B)) / B for i in range(n)]
    out = {"bias2": sum((mean[i] - y[i]) ** 2 for i in range(n)) / n,
           "variance": sum(sum((P[b, i] - mean[i]) ** 2 for b in range(B)) / (B - ddof) for i in range(n)) / n,
           "mse": sum(sum((P[b, i] - y[i]) ** 2 for b in range(B)) / B for i in range(n)) / n}
    sre, vre, signed, error = [], [], [], []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        labels = list(y[lo:hi])
        systematic = plain_ndcg(labels, mean[lo:hi], k)
        if systematic is None:
            continue
        models = [plain_ndcg(labels, list(P[b, lo:hi]), k) for b in range(B)]
        sre.append(1 - systematic)
        vre.append(sum(max(0.0, systematic - m) for m in models) / (B - ddof))
        signed.append(sum(systematic - m for m in models) / B)
        error.append(sum(1 - m for m in models) / B)
    out.update(sre=np.mean(sre), vre=np.mean(vre), vre_signed=np.mean(signed), error=np.mean(error),
               n_excluded=len(offsets) - 1 - len(sre))
    return out


@pytest.mark.parametrize("engine, method, metric, k", [("fast", "bootstrap", "ndcg", None),
                                                       ("reference", "twofold", "ndcg@5", 5)])
def test_reported_numbers_equal_a_recomputation_from_the_saved_matrices(files, tmp_path, capsys, engine, method,
                                                                        metric, k):
    saved = tmp_path / "scores"
    assert diagnose(files, "--engine", engine, "--method", method, "--models", "3", "--repeats", "2",
                    "--param", "query_subsample=0.2,1.0", "--metric", metric, "--json",
                    "--save-scores", str(saved)) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads((saved / "settings.json").read_text())
    y, offsets = np.load(saved / "labels.npy"), np.load(saved / "query_offsets.npy")
    assert [s["params"]["query_subsample"] for s in report["settings"]] == [0.2, 1.0]
    for setting in report["settings"]:
        P = np.load(saved / setting["scores"])
        assert P.shape == (3 if method == "bootstrap" else 4, len(y)) == (setting["n_models"], len(y))
        if method == "bootstrap":
            expected = recompute(P, y, offsets, report["ddof"], k)
        else:  # Eqs. 16-17: each repeat's two rows decomposed on their own, the estimates averaged
            repeats = [recompute(P[j:j + 2], y, offsets, report["ddof"], k) for j in range(0, len(P), 2)]
            expected = {name: np.mean([r[name] for r in repeats]) for name in repeats[0]}
            assert report["rows"].startswith("repeat order: rows 2j and 2j+1")
        for name, value in expected.items():
            assert abs(setting[name] - value) <= 1e-9, (name, setting[name], value)
        assert abs(setting["sre"] + setting["vre_signed"] - setting["error"]) <= 1e-12


def test_text_table_and_plot(files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert diagnose(files, "--models", "2", "--param", "feature_fraction=0.1,0.5", "--plot", str(tmp_path / "bv.png")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# random-forest, bootstrap, 2 models; listwise loss 1 - ndcg")
    assert out[1].split() == ["feature_fraction", "bias2", "variance", "mse", "sre", "vre", "vre_signed", "error",
                              "excluded"]
    assert [line.split()[0] for line in out[2:]] == ["0.1", "0.5"]
    assert (tmp_path / "bv.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("extra, message", [
    (["--models", "1"], "n_models (B) must be >= 2"),
    (["--fraction", "0"], "fraction must be in (0, 1]"),
    (["--fraction", "1.2"], "fraction must be in (0, 1]"),
    (["--param", "no_such=1,2"], "has no parameter 'no_such'"),
    (["--metric", "map"], "1 - metric"),
])
def test_bad_input_is_one_clear_line(files, capsys, extra, message):
    assert diagnose(files, *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("twinrank diagnose: error: ") and message in err


def test_a_test_set_of_another_width_fails_before_training(files, capsys):
    assert main(["diagnose", "bias-variance", "--algorithm", "random-forest", "--train", str(files / "train.txt"),
                 "--test", str(files / "narrow.txt")]) == 2
    err = capsys.readouterr().err
    assert "the test set has 12 features but the training set has 46" in err and "[models" not in err


def test_a_full_disk_loses_no_number_and_leaves_no_folder(files, tmp_path, capsys, monkeypatch):
    """The report is printed before the matrices are written; the folder appears whole or not at all."""
    written = []

    def save(path, array):  # the second file hits a full disk
        if written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(path)
        real_save(path, array)

    real_save = np.save
    monkeypatch.setattr(np, "save", save)
    saved = tmp_path / "scores"
    assert diagnose(files, "--models", "2", "--json", "--save-scores", str(saved)) == 2
    printed = capsys.readouterr()
    report = json.loads(printed.out)
    assert report["settings"][0]["scores"] == "setting0.npy" and report["settings"][0]["n_models"] == 2
    error = printed.err.strip().splitlines()[-1]
    assert error.startswith(f"twinrank diagnose: error: {saved}: No space left on device; nothing was saved")
    assert written and os.listdir(tmp_path) == []  # neither the folder nor its temporary sibling


def test_a_save_never_goes_into_a_folder_holding_files(files, tmp_path, capsys):
    kept = tmp_path / "old"
    kept.mkdir()
    (kept / "labels.npy").write_bytes(b"an earlier run's")
    assert diagnose(files, "--models", "2", "--save-scores", str(kept)) == 2
    assert "--save-scores" in capsys.readouterr().err and (kept / "labels.npy").read_bytes() == b"an earlier run's"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert diagnose(files, "--models", "2", "--save-scores", str(empty)) == 0
    assert sorted(os.listdir(empty)) == ["labels.npy", "query_offsets.npy", "setting0.npy", "settings.json"]

"""Hostile inputs: each fails clearly, or is read as documented, in both twins."""
import dataclasses
import os
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

import twinrank.fast as fast
import twinrank.reference as reference
from twinrank.cli import main
from twinrank.fast.evaluation import metrics as fast_metrics
from twinrank.fast.losses import objectives as fast_objectives
from twinrank.fast.runtime._threads import threads as fast_threads
from twinrank.reference.errors import DataFormatError, ParameterError, TwinrankWarning
from twinrank.reference.evaluation import metrics as ref_metrics
from twinrank.reference.io._atomic import TMP_MARK, _host, atomic_output
from twinrank.reference.io.letor import read_letor
from twinrank.reference.losses import objectives as ref_objectives

TWINS = pytest.mark.parametrize("twin", [reference, fast], ids=["reference", "fast"])
ALGORITHMS = ["LambdaMART", "GBRT", "McRank", "RandomForest", "IGBRT"]


def rows(n: int, extra: str = "", at: int = -1) -> str:
    """``n`` LETOR lines of 8-document queries, ``extra`` appended to line ``at`` (0-based)."""
    lines = [f"{i % 3} qid:{i // 8} 1:{i % 5} 2:{(7 * i) % 11}" + (f" {extra}" if i == at else "")
             for i in range(n)]
    return "\n".join(lines) + "\n"


def write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


# ----------------------------------------------------------------------------- item 2: memory


@pytest.mark.parametrize("n_rows, at, feature_id", [(48, 10, 2_000_000), (5000, 4500, 10**9)])
def test_a_huge_feature_id_is_refused_at_its_line_before_allocation(tmp_path, n_rows, at, feature_id):
    path = write(tmp_path / "d.txt", rows(n_rows, f"{feature_id}:1", at))
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError) as e:
            read_letor(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.value.line == at + 1 and f"feature id {feature_id}" in str(e.value) and "max_features" in str(e.value)
    assert peak < 64 * 2**20  # the 2,000,000-wide dense matrix alone would be 384 MB


def test_max_features_is_a_limit_the_user_moves(tmp_path):
    path = write(tmp_path / "d.txt", rows(3, "100000:1.5", 1))
    with pytest.raises(DataFormatError, match="max_features=1000"):
        read_letor(path, max_features=1000)
    ds = read_letor(path, max_features=None)
    assert ds.X.shape == (3, 100_000) and ds.X[1, 99_999] == 1.5 and ds.X[1, 0] == 1.0


def test_a_matrix_too_large_for_memory_names_the_line(tmp_path):
    path = write(tmp_path / "d.txt", rows(50, f"{10**15}:1", 30))
    with pytest.raises(DataFormatError, match="too large for memory") as e:
        read_letor(path, max_features=None)
    assert e.value.line == 31


def test_sparse_and_dense_blocks_read_to_the_same_matrix(tmp_path):
    # rows 0-4095 are one block (sparse: a wide id), rows 4096+ another (dense)
    text = rows(4096, "500:2", 7) + rows(10).replace("qid:", "qid:x")
    ds = read_letor(write(tmp_path / "d.txt", text))
    assert ds.X.shape == (4106, 500) and ds.X[7, 499] == 2 and ds.X[7, :2].tolist() == [2, 5]
    assert ds.X[4096 + 3, :2].tolist() == [3, 10] and np.count_nonzero(ds.X[:, 2:499]) == 0


def pairwise_memory(n: int, metric: str) -> int:
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 5, n).astype(float), rng.normal(size=n)
    tracemalloc.start()
    try:
        ref_objectives.lambdarank(y, s, np.array([0, n]), metric=metric, normalize=True)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("metric", ["ndcg", "err"])
def test_reference_lambdas_take_memory_bounded_by_the_pair_block(metric):
    # one (3000, 3000) float64 matrix is 72 MB and the unblocked code held about nine
    assert pairwise_memory(3000, metric) < 16 * ref_objectives.PAIR_BLOCK * 8


@pytest.mark.parametrize("metric, k", [("ndcg", None), ("ndcg", 10), ("map", None), ("err", 5)])
@pytest.mark.parametrize("options", [{}, {"normalize": True, "truncation": 30}])
def test_blocked_lambdas_equal_one_block(monkeypatch, metric, k, options):
    rng = np.random.default_rng(1)
    n = 400
    y, s = rng.integers(0, 5, n).astype(float), np.round(rng.normal(size=n), 1)  # ties too
    offsets = np.array([0, 150, 151, n])
    whole = ref_objectives.lambdarank(y, s, offsets, metric=metric, k=k, **options)
    monkeypatch.setattr(ref_objectives, "PAIR_BLOCK", 1000)  # blocks of 6 and 4 rows of queries of 150 and 249
    blocked = ref_objectives.lambdarank(y, s, offsets, metric=metric, k=k, **options)
    for a, b in zip(whole, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------- item 3: labels


@pytest.mark.parametrize("label, refused", [("31", False), ("32", True), ("1024", True), ("1e400", True)])
def test_labels_above_31_are_refused_at_their_line(tmp_path, label, refused):
    path = write(tmp_path / "d.txt", rows(5) + f"{label} qid:9 1:1\n")
    if not refused:
        assert read_letor(path).y.max() == float(label)
        return
    with pytest.raises(DataFormatError) as e:
        read_letor(path)
    assert e.value.line == 6 and e.value.token == label


def test_max_label_none_reads_regression_targets(tmp_path):
    path = write(tmp_path / "d.txt", rows(5) + "1024.5 qid:9 1:1\n")
    assert read_letor(path, max_label=None).y[-1] == 1024.5


@pytest.mark.parametrize("metrics, objectives", [(ref_metrics, ref_objectives), (fast_metrics, fast_objectives)],
                         ids=["reference", "fast"])
def test_exponential_gains_refuse_labels_above_31(metrics, objectives):
    y, s, offsets = np.array([0.0, 1024.0, 3.0]), np.array([0.1, 0.2, 0.3]), np.array([0, 3])
    for metric in ("ndcg@10", "err@10"):
        with pytest.raises(ParameterError, match=r"y\[1\] = 1024 is above 31"):
            metrics.evaluate([metric], y, s, offsets)
    for metric in ("ndcg", "err"):
        with pytest.raises(ParameterError, match=r"y\[1\] = 1024 is above 31"):
            objectives.lambdarank(y, s, offsets, metric=metric)
    # a linear gain has no such limit
    linear = dataclasses.replace(metrics.get_convention("lightgbm"), gain="linear")
    assert 0.0 < metrics.evaluate(["ndcg@10"], y, s, offsets, convention=linear)["ndcg@10"] < 1.0
    assert np.isfinite(objectives.lambdarank(y, s, offsets, gain="linear")[0]).all()


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_evaluate_json_is_strict_json(tmp_path, capsys, engine):
    data = write(tmp_path / "d.txt", rows(7) + "1024 qid:9 1:1\n")
    scores = write(tmp_path / "s.txt", "0.5\n" * 8)
    assert main(["evaluate", "--data", str(data), "--scores", str(scores), "--json", "--engine", engine]) == 2
    assert ":8: label '1024' is above max_label=31" in error(capsys)
    argv = ["evaluate", "--data", str(data), "--scores", str(scores), "--json", "--max-label", "none"]
    assert main([*argv, "--engine", engine]) == 2  # the metric refuses it: never NaN on stdout
    out = capsys.readouterr()
    assert out.out == "" and "above 31" in out.err


def test_json_numbers_are_null_when_not_finite():
    from twinrank.cli.evaluation.evaluate import _json_numbers

    assert _json_numbers(np.array([0.5, np.nan, np.inf])) == [0.5, None, None]
    assert _json_numbers(np.float64("nan")) is None


# ----------------------------------------------------------------------------- item 4: edge inputs


@TWINS
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_data_without_features_is_refused(twin, algorithm):
    y, qid = np.array([0.0, 1.0, 2.0, 0.0]), np.array([1, 1, 2, 2])
    with pytest.raises(ParameterError, match="no features"):
        getattr(twin, algorithm)(n_trees=2).fit(np.zeros((4, 0)), y, qid)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cli_refuses_a_file_without_features(tmp_path, capsys, engine):
    path = write(tmp_path / "d.txt", "".join(f"{i % 3} qid:{i // 4}\n" for i in range(8)))
    assert main(["train", "--train", str(path), "--model", str(tmp_path / "m.json"), "--engine", engine]) == 2
    assert "d.txt: no row has a feature" in error(capsys) and not (tmp_path / "m.json").exists()


@TWINS
@pytest.mark.parametrize("case, reason", [("constant features", "every feature is constant"),
                                          ("equal labels", "every gradient is the same")])
@pytest.mark.parametrize("algorithm", ["LambdaMART", "GBRT"])
def test_a_fit_that_grows_no_tree_says_why(twin, case, reason, algorithm):
    rng = np.random.default_rng(0)
    X = np.ones((40, 3)) if case == "constant features" else rng.random((40, 3))
    y = np.ones(40) if case == "equal labels" else rng.integers(0, 3, 40).astype(float)
    with pytest.warns(TwinrankWarning, match=reason):
        est = getattr(twin, algorithm)(n_trees=3, min_samples_leaf=2).fit(X, y, np.repeat(np.arange(5), 8))
    assert est.model_.n_trees == 0


def test_cli_prints_the_warning_as_one_line(tmp_path, capsys):
    path = write(tmp_path / "d.txt", "".join(f"{i % 3} qid:{i // 8} 1:1 2:5\n" for i in range(48)))
    assert main(["train", "--train", str(path), "--model", str(tmp_path / "m.json"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "twinrank train: warning: boosting grew no tree: every feature is constant" in err
    assert "trained 0 trees" in err


def test_classic_mac_line_ends_read_as_lines(tmp_path):
    text = rows(20) + "# a comment\n"
    expected = read_letor(write(tmp_path / "lf.txt", text))
    cr = read_letor(write(tmp_path / "cr.txt", text.replace("\n", "\r")))
    crlf = read_letor(write(tmp_path / "crlf.txt", text.replace("\n", "\r\n")))
    for ds in (cr, crlf):
        assert np.array_equal(ds.X, expected.X) and np.array_equal(ds.y, expected.y)
        assert ds.qids.tolist() == expected.qids.tolist() and ds.n_rows == 20


def test_a_utf8_byte_order_mark_is_skipped_and_utf16_is_named(tmp_path):
    text = rows(8)
    assert np.array_equal(read_letor(write(tmp_path / "bom.txt", "\ufeff" + text, "utf-8")).y,
                          read_letor(write(tmp_path / "plain.txt", text)).y)
    with pytest.raises(DataFormatError, match="UTF-16.*save it as UTF-8") as e:
        read_letor(write(tmp_path / "u16.txt", "\ufeff" + text, "utf-16-le"))
    assert e.value.line == 1


@pytest.mark.parametrize("command", ["evaluate", "predict", "demo", "verify"])
@pytest.mark.parametrize("value", ["0", "-2"])
def test_threads_zero_or_negative_is_refused(capsys, command, value):
    with pytest.raises(SystemExit) as e:
        main([command, "--threads", value])
    assert e.value.code == 2
    assert "-1 for all cores" in capsys.readouterr().err


@TWINS
def test_n_threads_zero_is_refused_and_minus_one_means_all(twin):
    X, y, qid = np.random.default_rng(0).random((16, 2)), np.arange(16) % 3, np.repeat([0, 1], 8)
    with pytest.raises(ParameterError, match="-1 for all cores"):
        twin.LambdaMART(n_trees=1, n_threads=0).fit(X, y, qid)
    est = twin.LambdaMART(n_trees=1, min_samples_leaf=2, n_threads=-1).fit(X, y, qid)
    assert est.predict(X).shape == (16,)


def test_fast_threads_context():
    import numba

    with fast_threads(-1):
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    with fast_threads(1):
        assert numba.get_num_threads() == 1
    with pytest.raises(ParameterError):
        with fast_threads(0):
            pass


def test_temporary_files_are_named_after_the_target_and_stale_ones_removed(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)  # a process that has exited
    prefix = f".model.json{TMP_MARK}{_host()}-"
    stale = tmp_path / f"{prefix}{dead}-abc123"
    alive = tmp_path / f"{prefix}{os.getppid()}-def456"  # our parent is running
    other = tmp_path / f".other.json{TMP_MARK}{_host()}-{dead}-x"  # another target's: not ours to touch
    for f in (stale, alive, other):
        f.write_text("partial")
    seen = []
    with atomic_output(tmp_path / "model.json") as out:
        seen = sorted(n for n in os.listdir(tmp_path) if n.startswith(prefix))
        out.write(b"{}")
    assert (tmp_path / "model.json").read_text() == "{}"
    assert not stale.exists() and alive.exists() and other.exists()
    assert len(seen) == 2 and any(n.startswith(f"{prefix}{os.getpid()}-") for n in seen)  # alive's and ours


def test_zero_based_flag(tmp_path, capsys):
    path = write(tmp_path / "d.txt", "".join(f"{i % 3} qid:{i // 8} 0:{i % 5} 1:{i % 7}\n" for i in range(48)))
    model = str(tmp_path / "m.json")
    assert main(["train", "--train", str(path), "--model", model, "--quiet"]) == 2
    assert "pass zero_based=True, on the command line --zero-based" in error(capsys)
    assert main(["train", "--train", str(path), "--model", model, "--quiet", "--zero-based",
                 "--min-samples-leaf", "2", "--trees", "2"]) == 0
    assert main(["predict", "--model", model, "--data", str(path), "--zero-based",
                 "--output", str(tmp_path / "s.txt")]) == 0
    assert len((tmp_path / "s.txt").read_text().split()) == 48


@TWINS
@pytest.mark.parametrize("algorithm", ["LambdaMART", "McRank"])
def test_scipy_sparse_features_train_and_score_as_their_dense_matrix(twin, algorithm):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    X = rng.random((64, 30))
    X[X < 0.7] = 0.0  # absent entries: 0.0, as in LETOR files
    X[3, 4] = np.nan  # a stored NaN stays a missing value
    y, qid = rng.integers(0, 3, 64).astype(float), np.repeat(np.arange(8), 8)
    from_sparse = getattr(twin, algorithm)(n_trees=3, min_samples_leaf=2).fit(sparse.csr_matrix(X), y, qid)
    from_dense = getattr(twin, algorithm)(n_trees=3, min_samples_leaf=2).fit(X, y, qid)
    assert np.array_equal(from_sparse.predict(sparse.csc_matrix(X)), from_dense.predict(X))
    assert from_sparse.model_.to_dict() == from_dense.model_.to_dict()


def test_a_sparse_matrix_too_wide_for_memory_is_refused():
    sparse = pytest.importorskip("scipy.sparse")
    X = sparse.csr_matrix((10**6, 10**9), dtype=np.float32)  # 3.6 PiB dense
    with pytest.raises(ParameterError, match="select fewer features"):
        reference.Dataset(X, np.zeros(10**6), [0, 10**6])


@TWINS
def test_eval_set_may_be_one_dataset_and_anything_else_is_explained(twin):
    """``eval_set=[valid]`` is the convention; ``eval_set=valid`` (a Dataset) means the same,
    and an eval_set of arrays (the parts of one ``(X, y, qid)`` without its list) is refused
    with the expected form, not a TypeError from indexing."""
    rng = np.random.default_rng(0)
    X, y, qid = rng.random((48, 4)), rng.integers(0, 3, 48).astype(float), np.repeat(np.arange(6), 8)
    train, valid = reference.Dataset.from_qid(X[:32], y[:32], qid[:32]), reference.Dataset.from_qid(
        X[32:], y[32:], qid[32:])
    params = dict(n_trees=3, min_samples_leaf=2)
    as_list = twin.LambdaMART(**params).fit(train, eval_set=[valid])
    alone = twin.LambdaMART(**params).fit(train, eval_set=valid)
    assert alone.history_ == as_list.history_ and alone.history_
    with pytest.raises(ParameterError, match=r"eval_set must be a list of \(X, y, qid\) tuples or Datasets"):
        twin.LambdaMART(**params).fit(train, eval_set=(X[32:], y[32:], qid[32:]))

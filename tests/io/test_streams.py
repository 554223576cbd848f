"""Inputs that are not regular files: pipes, FIFOs, /dev/zero, gzip bombs; each input read once, within bounds."""
import gzip
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

from twinrank.interop.lightgbm_text import load_lightgbm, to_lightgbm_text
from twinrank.reference._feature_costs import read_feature_costs
from twinrank.reference._streams import MAX_LINE_BYTES, open_input, read_document
from twinrank.reference.errors import DataFormatError, ModelFormatError
from twinrank.reference.io import _model_json
from twinrank.reference.io.letor import read_letor, read_scores
from twinrank.reference.io.model import Ensemble, Tree, load_model

ZERO = "/dev/zero"
needs_dev_zero = pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")


def letor_text(n_rows: int = 320, qid: bool = True) -> bytes:
    """``n_rows`` rows of 8-document queries, about 40 bytes a row: 320 rows are some 13 KiB,
    more than the 4 KiB a reader that sniffs, closes and reopens a pipe loses."""
    lines = [f"{i % 3}{f' qid:{i // 8}' if qid else ''} 1:{i % 5} 2:{(7 * i) % 11} 3:{i}" for i in range(n_rows)]
    return ("\n".join(lines) + "\n").encode()


def stump() -> Ensemble:
    tree = Tree(feature=[2, -1, -1], threshold=[100.5, 0.0, 0.0], bin_threshold=[-1, -1, -1], left=[1, -1, -1],
                right=[2, -1, -1], missing=[1, -1, -1], value=[0.0, -1.0, 1.0], gain=[1.0, 0.0, 0.0],
                count=[2, 1, 1], hessian_sum=[2.0, 1.0, 1.0])
    return Ensemble(trees=[tree], tree_weights=[1.0], n_features=3, algorithm="lambdamart")


def peak_bytes(read):
    """``read()``'s error (it must raise) and the peak memory Python allocated meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises((DataFormatError, ModelFormatError)) as e:
            read()
        return e.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class Fifo:
    """A FIFO at ``path`` that a thread fills with ``content`` once a reader opens it (the reader's
    open blocks until then); a reader that stops early breaks the pipe, which the writer accepts."""

    def __init__(self, path, content: bytes):
        os.mkfifo(path)
        self.path, self.content = path, content
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self):
        try:
            with open(self.path, "wb") as f:
                f.write(self.content)
        except BrokenPipeError:
            pass

    def join(self):
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


# ----------------------------------------------------------------------------- pipes and FIFOs


def test_a_data_file_piped_to_standard_input_is_read_whole(tmp_path):
    (tmp_path / "d.txt").write_bytes(letor_text())
    code = ("from twinrank.reference.io.letor import read_letor; d = read_letor('/dev/stdin'); "
            "print(d.n_rows, d.n_queries)")
    for content in (letor_text(), gzip.compress(letor_text())):
        done = subprocess.run([sys.executable, "-c", code], input=content, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
        assert done.stdout.split() == [b"320", b"40"]


def test_predict_and_train_read_a_pipe_whole(tmp_path):
    """The command line on a real pipe (``cat f | twinrank ... /dev/stdin``): every row scored, and
    the model trained on the pipe is the model trained on the file."""
    stump().save(tmp_path / "m.json")
    (tmp_path / "d.txt").write_bytes(letor_text())
    cli = [sys.executable, "-m", "twinrank.cli"]
    done = subprocess.run([*cli, "predict", "--engine", "reference", "--model", str(tmp_path / "m.json"),
                           "--data", "/dev/stdin", "--output", str(tmp_path / "s.txt")],
                          input=letor_text(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert len(read_scores(tmp_path / "s.txt")) == 320
    train = [*cli, "train", "--engine", "reference", "--n-trees", "2", "--max-leaves", "3",
             "--min-samples-leaf", "5"]
    for source, model in (("/dev/stdin", "piped.json"), (str(tmp_path / "d.txt"), "file.json")):
        done = subprocess.run([*train, "--train", source, "--model", str(tmp_path / model)],
                              input=letor_text(), capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
    piped, from_file = (json.loads((tmp_path / m).read_text()) for m in ("piped.json", "file.json"))
    assert piped["trees"] == from_file["trees"] and piped["trees"][0]["count"][0] == 320


@needs_fifo
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_every_reader_reads_a_fifo(tmp_path, compress):
    pack = gzip.compress if compress else bytes
    expected = read_letor(_write(tmp_path / "d.txt", letor_text()))
    stump().save(tmp_path / "m.json")
    sources = {
        "data": (letor_text(), read_letor),
        "scores": (b"0.5\n-1\n2\n", read_scores),
        "costs": (b"1 0.5\n2 1\n3 0 # free\n", read_feature_costs),
        "model": ((tmp_path / "m.json").read_bytes(), load_model),
        "lightgbm": (to_lightgbm_text(stump()).encode(), load_lightgbm),
    }
    for name, (content, read) in sources.items():
        fifo = Fifo(tmp_path / f"{name}.fifo", pack(content))
        result = read(fifo.path)
        fifo.join()
        if name == "data":
            np.testing.assert_array_equal(result.X, expected.X)
            np.testing.assert_array_equal(result.query_offsets, expected.query_offsets)
        elif name == "scores":
            np.testing.assert_array_equal(result, [0.5, -1, 2])
        elif name == "costs":
            assert result == {1: (0.5, 1), 2: (1.0, 2), 3: (0.0, 3)}
        else:
            tree = result.trees[0]
            assert tree.feature.tolist() == [2, -1, -1] and tree.value.tolist() == [0.0, -1.0, 1.0]


@needs_fifo
def test_a_group_file_may_be_a_fifo(tmp_path):
    data = _write(tmp_path / "d.txt", letor_text(16, qid=False))
    fifo = Fifo(tmp_path / "g.fifo", b"8\n8\n")
    assert read_letor(data, query_file=fifo.path).query_sizes.tolist() == [8, 8]
    fifo.join()


def test_gzip_is_sniffed_from_a_stream_that_delivers_one_byte_at_a_time(tmp_path):
    r, w = os.pipe()

    def write():
        with os.fdopen(w, "wb", buffering=0) as f:
            for byte in gzip.compress(b"1.5\n2.5\n")[:4]:
                f.write(bytes([byte]))
                time.sleep(0.05)  # the reader's first reads see one byte each
            f.write(gzip.compress(b"1.5\n2.5\n")[4:])

    writer = threading.Thread(target=write)
    writer.start()
    with open_input(f"/dev/fd/{r}") as stream:
        assert stream.read() == b"1.5\n2.5\n"
    writer.join()
    os.close(r)


# ----------------------------------------------------------------------------- endless inputs and bombs


@needs_dev_zero
@pytest.mark.parametrize("reader", ["data", "scores", "costs", "group"])
def test_dev_zero_as_a_text_input_stops_at_the_line_limit(tmp_path, reader):
    data = _write(tmp_path / "d.txt", letor_text(16))
    read = {"data": lambda: read_letor(ZERO), "scores": lambda: read_scores(ZERO),
            "costs": lambda: read_feature_costs(ZERO), "group": lambda: read_letor(data, query_file=ZERO)}[reader]
    error, peak = peak_bytes(read)
    assert str(error).startswith(f"{ZERO}:1: the line is longer than 16 MiB")
    assert peak < 3 * MAX_LINE_BYTES + 2**20


@needs_dev_zero
def test_dev_zero_as_a_model_is_refused_from_its_first_bytes():
    for read in (load_model, load_lightgbm):
        error, peak = peak_bytes(lambda: read(ZERO))
        assert str(error).startswith(f"{ZERO}: not a ") and ("00 00" in str(error) or "NUL byte at byte 0" in str(error))
        assert peak < 2**20


def test_a_gzip_bomb_stops_at_the_line_limit(tmp_path):
    """64 MiB of digits on one line, compressed to some 64 KiB: refused once 16 MiB of it are decompressed."""
    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b"1 qid:1 1:")
        for _ in range(64):
            f.write(b"1" * (1 << 20))
    assert path.stat().st_size < 2**18
    error, peak = peak_bytes(lambda: read_letor(path))
    assert str(error).startswith(f"{path}:1: the line is longer than 16 MiB")
    assert peak < 3 * MAX_LINE_BYTES + 2**20


def test_a_line_just_under_the_limit_is_read(tmp_path):
    path = _write(tmp_path / "s.txt", b"1" + b" " * (MAX_LINE_BYTES - 2) + b"\n2\n")
    np.testing.assert_array_equal(read_scores(path), [1, 2])
    with pytest.raises(DataFormatError, match=r"s\.txt:2: the line is longer than 16 MiB"):
        read_scores(_write(tmp_path / "s.txt", b"1\n2" + b" " * MAX_LINE_BYTES + b"\n"))


def test_a_document_is_refused_once_it_passes_its_limit(tmp_path, monkeypatch):
    with open_input(_write(tmp_path / "big.txt", b"x" * 1000)) as stream:
        assert len(read_document(stream, 1000, ValueError)) == 1000
    with open_input(tmp_path / "big.txt") as stream, pytest.raises(ValueError, match="larger than 999 bytes"):
        read_document(stream, 999, ValueError)
    stump().save(tmp_path / "m.json")
    monkeypatch.setattr(_model_json, "MAX_DOCUMENT_BYTES", 100)
    with pytest.raises(ModelFormatError, match=r"m\.json: larger than 100 bytes \(decompressed\)"):
        load_model(tmp_path / "m.json")


@needs_fifo
def test_an_endless_score_or_group_stream_stops_past_the_rows(tmp_path):
    data = _write(tmp_path / "d.txt", letor_text(16))
    fifo = Fifo(tmp_path / "s.fifo", b"1\n" * 2**20)
    with pytest.raises(DataFormatError, match=r"s\.fifo:17: holds more than the 16 scores expected"):
        read_scores(fifo.path, n_rows=16)
    fifo.join()
    fifo = Fifo(tmp_path / "g.fifo", b"8\n" * 2**20)
    with pytest.raises(DataFormatError, match=r"g\.fifo:3: group sizes sum to more than the data file's 16 rows"):
        read_letor(data, query_file=fifo.path)
    fifo.join()


def _write(path, content: bytes):
    path.write_bytes(content)
    return path

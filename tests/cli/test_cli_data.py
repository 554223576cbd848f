"""``twinrank data``: where the bundled MQ2008 lives, and a fold written as the LETOR distribution's files."""
import os

import numpy as np
import pytest

from twinrank.cli import main
from twinrank.reference.io.data import load_mq2008
from twinrank.reference.io.letor import read_letor


def test_data_path_prints_the_bundled_folder(capsys):
    assert main(["data", "path", "mq2008"]) == 0
    folder = capsys.readouterr().out.strip()
    assert sorted(f for f in os.listdir(folder) if f.endswith(".gz")) == [f"S{k}.txt.gz" for k in range(1, 6)]


@pytest.mark.parametrize("fold", [1, 4])
def test_a_fold_written_as_files_reads_back_as_load_mq2008(tmp_path, capsys, fold):
    out = tmp_path / "mq"  # created by the command
    assert main(["data", "mq2008", "--fold", str(fold), "--out", str(out)]) == 0
    assert "train.txt" in capsys.readouterr().err
    for split, expected in zip(["train", "vali", "test"], load_mq2008(fold)):
        got = read_letor(out / f"{split}.txt", n_features=46)
        np.testing.assert_array_equal(got.X, expected.X)
        np.testing.assert_array_equal(got.y, expected.y)
        np.testing.assert_array_equal(got.query_offsets, expected.query_offsets)
        np.testing.assert_array_equal(got.qids, expected.qids)


def test_out_must_be_a_folder(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["data", "mq2008", "--out", str(tmp_path / "file")]) == 2
    assert "--out" in capsys.readouterr().err

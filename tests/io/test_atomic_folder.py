"""A folder of files written atomically: complete or absent, never a mix, never over a filled folder."""
import os
import subprocess
import sys

import pytest

from twinrank.reference.io._atomic import TMP_MARK, _host, atomic_folder


def test_the_folder_appears_only_when_complete(tmp_path):
    target = tmp_path / "saved"
    with atomic_folder(target) as tmp:
        (open(os.path.join(tmp, "a.npy"), "w")).close()
        assert not target.exists() and os.path.dirname(tmp) == str(tmp_path)
    assert os.listdir(target) == ["a.npy"] and os.listdir(tmp_path) == ["saved"]
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o777 & ~mask


def test_an_error_leaves_nothing(tmp_path):
    with pytest.raises(OSError), atomic_folder(tmp_path / "saved") as tmp:
        (open(os.path.join(tmp, "a.npy"), "w")).close()
        raise OSError(28, "No space left on device")
    assert os.listdir(tmp_path) == []


def test_an_empty_folder_is_replaced_a_filled_one_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with atomic_folder(tmp_path / "empty") as tmp:
        (open(os.path.join(tmp, "new"), "w")).close()
    assert os.listdir(tmp_path / "empty") == ["new"]
    with pytest.raises(OSError, match="holds files"), atomic_folder(tmp_path / "empty"):
        pass
    assert os.listdir(tmp_path / "empty") == ["new"] and os.listdir(tmp_path) == ["empty"]


def test_a_killed_writer_s_folder_is_removed_by_the_next_write(tmp_path):
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    stale = tmp_path / f".saved{TMP_MARK}{_host()}-{dead}-abc"
    stale.mkdir()
    (stale / "half.npy").write_text("partial")
    with atomic_folder(tmp_path / "saved"):
        pass
    assert os.listdir(tmp_path) == ["saved"]

"""The bundled MQ2008's provenance note names only files that are bundled, with their checksums."""
import gzip
import hashlib
import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[2] / "reference" / "io" / "datasets" / "mq2008"
NOTE = FOLDER / "PROVENANCE.md"


def test_every_bundled_file_is_listed_with_its_checksum():
    rows = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \| ([\d,]+) \| `([0-9a-f]{64})` \|$", NOTE.read_text(), re.M)
    assert sorted(name for name, *_ in rows) == sorted(p.name for p in FOLDER.glob("*.gz"))
    for name, n_rows, n_bytes, sha256 in rows:
        raw = gzip.decompress((FOLDER / name).read_bytes())
        assert raw.count(b"\n") == int(n_rows.replace(",", "")), name
        assert len(raw) == int(n_bytes.replace(",", "")), name
        assert hashlib.sha256(raw).hexdigest() == sha256, name


def test_the_note_links_to_nothing_that_is_not_here():
    text = NOTE.read_text()
    targets = re.findall(r"\]\(([^)]+)\)", text)  # Markdown links
    targets += re.findall(r"\.\./[\w./-]+", text)  # paths out of the folder (../README.md, ...)
    assert [t for t in targets if not t.startswith("http") and not (FOLDER / t).exists()] == []
    assert "](http" not in text  # the upstream address is plain text: its files are on no branch

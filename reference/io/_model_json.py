r"""The model file's JSON: format name and version, a content checksum, atomic writes, strict reads.

A model file is one JSON object with ``"format": "twinrank-model"``, an integer
``"version"`` and, since version 2, ``"checksum": "sha256:<hex>"``: the SHA-256 of
the document without its checksum, serialised canonically (keys sorted, no spaces,
``json.dumps(..., sort_keys=True, separators=(",", ":"))``). Reading a file
recomputes it, so a file changed by a disk, a transfer or a hand is refused before
any field is trusted. To accept a file you edited on purpose, load it with
``verify_checksum=False`` (CLI: ``--accept-edited-model``); every structural check
still applies, and saving it again writes a fresh checksum. Version 1 files
(written before checksums) are read with the structural checks alone.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import zlib

import numpy as np

from twinrank.reference._streams import CHUNK_BYTES, MAX_DOCUMENT_BYTES, open_input, read_document
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._atomic import atomic_output
from twinrank.reference.io._model_fields import field_holding, is_int

FORMAT = "twinrank-model"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: before the checksum field
MCRANK = "mcrank"  # the algorithm of an McRank model document (a list of classifiers)
_JSON_WHITESPACE = b" \t\r\n"
EDITED_HINT = ("if you edited it on purpose, load it with verify_checksum=False "
               "(twinrank: --accept-edited-model)")


def write_json_atomic(path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` so that readers never see a partial file."""
    with atomic_output(path) as out:
        out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8"))


def write_model_atomic(path, doc: dict) -> None:
    """Write a model document with its content checksum, atomically."""
    write_json_atomic(path, {**doc, "checksum": content_checksum(doc)})


def content_checksum(doc: dict) -> str:
    """``"sha256:"`` and the hex digest of ``doc`` without its ``checksum``, serialised canonically."""
    body = {k: v for k, v in doc.items() if k != "checksum"}
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError as e:  # a number too large for a float (1e999) read as inf
        raise ModelFormatError(f"a value cannot be written back as JSON ({e})") from None
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_model_document(path, *, verify_checksum: bool = True) -> dict:
    """The JSON object of a model file, its header checked and (by default) its checksum verified.

    The file is read once, as a stream (``_streams``: a pipe or ``/dev/stdin`` will do), and at
    most ``MAX_DOCUMENT_BYTES`` of it. Raises ModelFormatError naming ``path`` for a file that does
    not start as a JSON object (``{``, told from its first bytes, so ``/dev/zero`` costs nothing),
    is larger than that, holds bytes that are not UTF-8 or text that is not JSON (an integer
    too long for Python to convert is named by its field), is not a twinrank model of a
    readable version, or whose checksum does not match the content.
    """
    try:
        with open_input(path) as stream:
            raw = read_document(stream, MAX_DOCUMENT_BYTES, lambda why: ModelFormatError(f"{path}: {why}"),
                                first=_json_object_start(path, stream))
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise ModelFormatError(f"{path}: corrupt gzip data ({e})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModelFormatError(f"{path}: not UTF-8 text (byte {e.start}): not a twinrank model file") from None
    del raw
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, ModelFormatError, RecursionError) as e:
        raise ModelFormatError(f"{path}: not valid JSON ({e})") from None
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ModelFormatError(f"{path}: {_huge_integer(text)}") from None
    try:
        check_header(doc, "")
        _check_checksum(doc, verify_checksum)
    except ModelFormatError as e:
        raise ModelFormatError(f"{path}: {e}") from None
    return doc


def _json_object_start(path, stream) -> bytes:
    """The first bytes of a model file, read up to its first one that is not whitespace; a
    ModelFormatError unless that one opens a JSON object."""
    start = bytearray()
    while len(start) <= MAX_DOCUMENT_BYTES:
        chunk = stream.read(CHUNK_BYTES)
        start += chunk
        first = chunk.lstrip(_JSON_WHITESPACE)[:1]
        if first or not chunk:
            if first and first != b"{":
                shown = bytes(start.lstrip(_JSON_WHITESPACE)[:8])
                raise ModelFormatError(f"{path}: not a twinrank model (a model file is a JSON object, opening "
                                       f"with '{{'; this file starts with the bytes {shown.hex(' ').upper()})")
            break
    return bytes(start)


class _Digits(str):
    """The digits of a JSON integer too long for Python to convert."""


def _huge_integer(text: str) -> str:
    """The field of ``text`` (a JSON document) holding an integer too long to convert, and its length."""
    def parse_int(digits: str):
        try:
            return int(digits)
        except ValueError:
            return _Digits(digits)

    doc = json.loads(text, parse_constant=_refuse_constant, parse_int=parse_int)
    field, digits = field_holding(doc, lambda v: isinstance(v, _Digits))
    return (f"{field or 'the document'}: an integer of {len(digits.lstrip('-')):,} digits, beyond the 64-bit "
            "integers a model field holds")


class ModelFile:
    """``save`` and ``load`` of a model kind with ``to_dict`` / ``from_dict``: checksummed, atomic."""

    def save(self, path) -> None:
        """Write the model as JSON with its checksum, atomically (temporary file, then rename)."""
        write_model_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path, *, verify_checksum: bool = True):
        """Read a model file of this kind (written by either twin); see ``model.load_model``."""
        doc = read_model_document(path, verify_checksum=verify_checksum)
        try:
            return cls.from_dict(doc)
        except ModelFormatError as e:
            raise ModelFormatError(f"{path}: {e}") from None


def check_header(doc, path: str) -> None:
    """Refuse a document that is not an object of this format, of a version this twinrank reads."""
    where = f"{path}: " if path else ""
    if not isinstance(doc, dict):
        raise ModelFormatError(f"{where}not a twinrank model (a JSON object is expected)")
    if doc.get("format") != FORMAT:
        raise ModelFormatError(f"{where}not a twinrank model (format field is {doc.get('format')!r})")
    version = doc.get("version")
    if not (is_int(version) and version in READABLE_VERSIONS):
        raise ModelFormatError(f"{where}model format version {version!r} is not supported "
                               f"(this twinrank reads {', '.join(map(str, READABLE_VERSIONS))})")


def _check_checksum(doc: dict, verify: bool) -> None:
    if doc["version"] == 1:
        if "checksum" in doc:
            raise ModelFormatError("checksum: unknown field in a version 1 model")
        return
    stored = doc.get("checksum")
    if not isinstance(stored, str):
        raise ModelFormatError(f"checksum: missing or not a string; {EDITED_HINT}")
    if verify and stored != content_checksum(doc):
        raise ModelFormatError(f"the content does not match its checksum (the file was changed after "
                               f"it was written); {EDITED_HINT}")


def _refuse_constant(name):
    raise ModelFormatError(f"{name} is not JSON")


# JSON has no inf/nan: non-finite floats are written as the strings "inf", "-inf", "nan".
def _encode_scalar(v):
    v = float(v)
    return v if np.isfinite(v) else repr(v)


def _encode(arr: np.ndarray) -> list:
    if arr.dtype.kind == "f":
        return [_encode_scalar(v) for v in arr.tolist()]
    return arr.tolist()

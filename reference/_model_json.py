"""The model file's JSON: its format name and version, atomic writes, non-finite floats as strings."""
from __future__ import annotations

import json

import numpy as np

from ._atomic import atomic_output
from .errors import ModelFormatError

FORMAT = "twinrank-model"
VERSION = 1
MCRANK = "mcrank"  # the algorithm of an McRank model document (a list of classifiers)


def write_json_atomic(path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` so that readers never see a partial file."""
    with atomic_output(path) as out:
        out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8"))


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{path}: not valid JSON ({e})") from None



# JSON has no inf/nan: non-finite floats are written as the strings "inf", "-inf", "nan".
def _encode_scalar(v):
    v = float(v)
    return v if np.isfinite(v) else repr(v)


def _decode_scalar(v):
    return float(v) if isinstance(v, str) else v


def _encode(arr: np.ndarray) -> list:
    if arr.dtype.kind == "f":
        return [_encode_scalar(v) for v in arr.tolist()]
    return arr.tolist()


def _decode(values: list) -> np.ndarray:
    return np.array([_decode_scalar(v) for v in values])

"""Typed reads of a model document's fields, each error naming the field's path (``trees[3].left[17]``).

JSON knows numbers, strings, lists, objects, ``true``/``false`` and ``null``. A model
file's integers must be JSON integers (not ``true``, not ``1.0``), its floats JSON
numbers or one of the strings ``"inf"``, ``"-inf"``, ``"nan"`` (JSON has no
non-finite floats). Anything else is refused with :class:`ModelFormatError` naming
the field, never converted on a guess.
"""
from __future__ import annotations

import numpy as np

from twinrank.reference.constants import MAX_MODEL_FEATURES
from twinrank.reference.errors import ModelFormatError

NON_FINITE = ("inf", "-inf", "nan")  # how the writer spells non-finite floats
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1  # every integer field is read as int64


def is_int(v) -> bool:
    return type(v) is int  # bool is a subclass of int: ``true`` is not an integer here


def is_float(v) -> bool:
    return type(v) in (int, float) or v in NON_FINITE


def require(d: dict, name: str, path: str):
    """``d[name]``, or a ModelFormatError naming the missing field."""
    if name not in d:
        raise ModelFormatError(f"{join(path, name)}: missing field")
    return d[name]


def int_value(v, path: str, *, minimum: int | None = None) -> int:
    """An integer field (at least ``minimum``), within int64 as every integer field is read."""
    if not is_int(v):
        raise ModelFormatError(f"{path}: {v!r} is not an integer")
    if minimum is not None and v < minimum:
        raise ModelFormatError(f"{path}: {v} is below {minimum}")
    if not INT64_MIN <= v <= INT64_MAX:
        raise ModelFormatError(f"{path}: {v} is beyond the 64-bit integers a model field holds")
    return v


def width(v, path: str) -> int:
    """A model's ``n_features``: an integer in ``0 .. MAX_MODEL_FEATURES``, refused before any
    per-feature array is made."""
    if int_value(v, path, minimum=0) > MAX_MODEL_FEATURES:
        raise ModelFormatError(f"{path}: {v:,} features is wider than {MAX_MODEL_FEATURES:,}, the widest "
                               "model twinrank reads")
    return v


def float_value(v, path: str, *, finite: bool = True) -> float:
    """A float field (finite unless ``finite=False``)."""
    if not is_float(v):
        raise ModelFormatError(f"{path}: {v!r} is not a number")
    v = float(v)
    if finite and not np.isfinite(v):
        raise ModelFormatError(f"{path}: {v} is not finite")
    return v


def typed(v, kind: type, path: str, *, optional: bool = False):
    """``v`` if it is a ``kind`` (a dict, list or str), or None when ``optional``."""
    if v is None and optional:
        return None
    if not isinstance(v, kind):
        raise ModelFormatError(f"{path}: expected {_KIND_NAMES[kind]}, got {_json_name(v)}")
    return v


def int_array(values, path: str) -> np.ndarray:
    """A list of JSON integers as int64."""
    typed(values, list, path)
    bad = next((i for i, v in enumerate(values) if not is_int(v) or not INT64_MIN <= v <= INT64_MAX), None)
    if bad is not None:
        int_value(values[bad], f"{path}[{bad}]")  # names the fault
    return np.array(values, dtype=np.int64)


def float_array(values, path: str) -> np.ndarray:
    """A list of JSON numbers (or ``"inf"``, ``"-inf"``, ``"nan"``) as float64."""
    typed(values, list, path)
    bad = next((i for i, v in enumerate(values) if not is_float(v)), None)
    if bad is not None:
        raise ModelFormatError(f"{path}[{bad}]: {values[bad]!r} is not a number")
    return np.array([float(v) for v in values], dtype=np.float64)


def first_bad(mask: np.ndarray) -> int | None:
    """The first index where ``mask`` is True, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def refuse_unknown(d: dict, known, path: str) -> None:
    """Refuse a field this format does not define (a typo, or a newer writer's field)."""
    unknown = sorted(set(d) - set(known))
    if unknown:
        raise ModelFormatError(f"{join(path, unknown[0])}: unknown field")


def field_holding(doc, found) -> tuple[str, object] | tuple[None, None]:
    """The path (``trees[3].count[17]``) and value of the first value of ``doc`` for which
    ``found(value)`` is true, depth first; ``(None, None)`` if there is none."""
    stack = [("", doc)]
    while stack:
        path, value = stack.pop()
        if found(value):
            return path, value
        if isinstance(value, dict):
            stack += [(join(path, k), v) for k, v in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value)))]
    return None, None


def join(path: str, name) -> str:
    """The path of field ``name`` of the object at ``path`` (``""`` is the document)."""
    return f"{path}.{name}" if path else str(name)


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string"}


def _json_name(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return {dict: "an object", list: "a list", str: f"the string {v!r}"}.get(type(v), f"the number {v!r}")

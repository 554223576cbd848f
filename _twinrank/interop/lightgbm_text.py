r"""LightGBM's text model format: export a twinrank model to it, import a LightGBM model from it.

A model written by :func:`save_lightgbm` loads in LightGBM,
``lightgbm.Booster(model_file="model.txt")``, and its ``predict`` gives twinrank's
scores; a LightGBM model read by :func:`load_lightgbm` is an :class:`Ensemble` that
either twin scores as LightGBM's ``predict(raw_score=True)``. Model I/O is data, not
algorithm: written once here, re-exported by ``twinrank.interop.lightgbm_text``.

**Why the scores agree.** twinrank reads features as float32 and sends a row left iff
``float32(x) <= t``; LightGBM compares the float64 ``x`` with its threshold. An export writes
``t'``, the largest float64 ``d`` with ``float32(d) <= t`` (the writer's docstring), so LightGBM's
``x <= t'`` routes every float64 ``x`` as twinrank does, and a float32 ``x`` as ``x <= t``; an
imported threshold is kept, which routes float32 features as LightGBM. The libraries differ
in where NaN goes: a twinrank node
names a ``missing`` child (left, right, or a third child); a LightGBM node a
``decision_type`` whose missing type (NaN, None: NaN read as 0, Zero) and default
direction decide. Each direction is translated node by node (the writer's and the
reader's module docstrings give the tables). Both sum the trees in file order, and the
numbers are written with Python's ``repr``, the shortest text that reads back as the
same float64, so on the same features the scores agree to the last bit for a boosted
model; a model with tree weights other than 1 (random forests, DART) or LightGBM's
``average_output`` agrees to rounding ($\approx 10^{-15}$ relative), since one side
multiplies by the weight before summing and the other after.

**What cannot cross.** Into LightGBM: McRank and cumulative-regression models (their
expected relevance is a nonlinear combination of several ensembles; export the classifiers
one by one), BL-MART bags (their members' scores are combined within each query; export the
members one by one) and ``missing="iterative"`` (its imputers are models). Into twinrank: multiclass models
(``num_class`` > 1), categorical splits (``num_cat`` > 0), linear trees
(``is_linear=1``), and ``zero_as_missing`` splits that send 0 to the other side of the
threshold than 0 goes. Each is refused with an error naming the field.

**Feature ids.** An export names its features ``f1 ... fN``: column ``j`` of ``X`` is the LETOR
file's feature ``j + 1``, the name ``dump_tree`` and ``twinrank inspect`` give it. LightGBM's own
LibSVM loader takes the ids as 0-based columns: it reads a 1-based LETOR file of N features
as N + 1 columns (``Column_0`` empty, ``Column_k`` = feature k), which an exported model of N
features refuses; give LightGBM the ``X`` that ``read_letor`` or scikit-learn's
``load_svmlight_file(zero_based=False)`` reads instead.

**Bit-for-bit caveats.** LightGBM reads values within 1e-35 of zero as 0 (its dense
input filter): only a threshold inside that band (``t = 0``, written as ``2**-150``) routes a
value in ``(t', 1e-35]`` differently. An imported model scores as LightGBM on float32 features
(and in ``predict_ensemble`` on the float64 array itself); twinrank's ``predict`` reads float32.
An infinite feature value takes the same route in both, since a threshold of ``inf``
(every number goes left) is written as ``inf``, which LightGBM parses.
"""
from __future__ import annotations

import gzip
import zlib

from twinrank.interop._lightgbm_reader import from_lightgbm_text
from twinrank.interop._lightgbm_writer import to_lightgbm_text
from twinrank.reference._streams import CHUNK_BYTES, MAX_DOCUMENT_BYTES, open_input, read_document
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._atomic import atomic_output

_NUL = b"\0"  # never in text

__all__ = ["to_lightgbm_text", "save_lightgbm", "from_lightgbm_text", "load_lightgbm"]


def save_lightgbm(model, path, *, feature_names=None) -> None:
    """Write ``model`` (an Ensemble or a fitted estimator) as a LightGBM text model, atomically."""
    text = to_lightgbm_text(model, feature_names=feature_names)
    with atomic_output(path) as out:
        out.write(text.encode("utf-8"))


def load_lightgbm(path):
    """The :class:`Ensemble` of a LightGBM text model file (``Booster.save_model``'s output).

    The file is read once, as a stream (a pipe will do), plain or gzip, and at most
    ``MAX_DOCUMENT_BYTES`` (2 GiB) of it; text holding a NUL byte is refused from its first
    64 KiB, so ``/dev/zero`` costs nothing.
    """
    def refuse(why):
        return ModelFormatError(f"{path}: not a LightGBM text model ({why})")

    try:
        with open_input(path) as stream:
            head = stream.read(CHUNK_BYTES)
            if _NUL in head:
                raise refuse(f"binary data: a NUL byte at byte {head.index(_NUL)}")
            raw = read_document(stream, MAX_DOCUMENT_BYTES, refuse, first=head)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise refuse(f"corrupt gzip data: {e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None
    return from_lightgbm_text(text, source=str(path))

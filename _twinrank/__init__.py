"""twinrank: learning-to-rank tree ensembles, written twice.

- ``twinrank.reference``: the readable NumPy specification of every algorithm;
- ``twinrank.fast``: the numba-parallel twin, same names, same results;
- ``twinrank.testing``: the twin registry and the tools that compare the two;

and the layers that are not twinned, each in a folder of its own: ``twinrank.cli`` (the
``twinrank`` command), ``twinrank.sklearn`` (the scikit-learn protocol and glue),
``twinrank.interop`` (LightGBM's model format), ``twinrank.grading`` (the course's grader).

``from twinrank.fast import LambdaMART, load_mq2008, evaluate`` is the everyday import.
This package holds the version, :mod:`twinrank._layout` (where each module lives, and the
aliases of release 0.1's import paths, installed here) (``pyproject.toml`` maps the folder ``_twinrank/``
onto it, next to ``reference/``, ``fast/`` and ``testing/``); ``__version__`` is defined
once, in ``twinrank.reference``, where it also works from a source tree that has no
``twinrank/__init__.py`` (a namespace package on ``PYTHONPATH``).
"""
from twinrank import _layout

_layout.install()  # before anything imports a module by its 0.1 path

from twinrank.reference import __version__  # noqa: E402

__all__ = ["__version__"]

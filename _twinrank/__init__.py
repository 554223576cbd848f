"""twinrank: learning-to-rank tree ensembles, written twice.

- ``twinrank.reference``: the readable NumPy specification of every algorithm;
- ``twinrank.fast``: the numba-parallel twin, same names, same results;
- ``twinrank.testing``: the twin registry and the tools that compare the two.

``from twinrank.fast import LambdaMART, load_mq2008, evaluate`` is the everyday import.
This package holds only the version (``pyproject.toml`` maps the folder ``_twinrank/``
onto it, next to ``reference/``, ``fast/`` and ``testing/``); ``__version__`` is defined
once, in ``twinrank.reference``, where it also works from a source tree that has no
``twinrank/__init__.py`` (a namespace package on ``PYTHONPATH``).
"""
from twinrank.reference import __version__

__all__ = ["__version__"]

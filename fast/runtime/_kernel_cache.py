"""numba's ``njit``, with the project's cache: the fast twin's kernels cached only where, and as, twinrank checks.

Every kernel is written ``@njit(cache=True, ...)`` with this module's :func:`njit`: numba's own
``njit``, whose cache is :class:`KernelCache` (a numba ``FunctionCache``) instead of numba's:

* it lives in the folder :func:`._numba_cache.choose` chose, and nowhere else: numba's
  locators, which fall back to other folders (an unkeyed cache) or fail with "no locator
  available" when none can be written, are not asked;
* numba reads and writes its files only through the folder's
  :class:`~._cache_manifest.Manifest`: it unpickles the bytes twinrank wrote, or nothing;
* a kernel missing from the cache is compiled under the compile lock (:mod:`._compile_lock`):
  the lock taken, the cache is looked at again (another process may have compiled it while
  this one waited), and held until the kernel is saved or its compilation failed;
* a cache that cannot be written (a full disk, a quota, a folder made read-only) stops
  saving, with one notice, and the run goes on (the kernels compiled from then on are not
  cached);
* with no folder (``_numba_cache.FOLDER is None``) the kernels are plain, uncached numba kernels.

Built on numba's caching classes (``numba.core.caching``): ``FunctionCache``, its locator and
its index and data file class are subclassed, their file reading and writing replaced.
"""
from __future__ import annotations

import io
import os
import pickle
import threading

import numba
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    _CacheLocator,
    _SourceFileBackedLocatorMixin,
)
from numba.core.event import Listener, register

from twinrank.fast.runtime import _numba_cache
from twinrank.fast.runtime._cache_manifest import Manifest
from twinrank.fast.runtime._compile_lock import LOCK
from twinrank.fast.runtime._compile_notice import NOTICE


def njit(function=None, *, cache: bool = False, **options):
    """``numba.njit(**options)``; with ``cache=True``, cached by :class:`KernelCache` in the kernels'
    folder (uncached when there is none)."""
    def decorate(function):
        dispatcher = numba.njit(**options)(function)
        if cache and _numba_cache.FOLDER is not None and hasattr(dispatcher, "enable_caching"):
            dispatcher._cache = KernelCache(dispatcher.py_func)  # as numba's enable_caching does
        return dispatcher
    return decorate if function is None else decorate(function)


def caching() -> bool:
    """Whether kernels compiled now are saved to the cache."""
    return MANIFEST is not None and not _saving.stopped


def cached_signatures(dispatcher) -> list:
    """The signatures the cache holds for ``dispatcher`` (none if it is not cached)."""
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, KernelCache):
        return []
    return [signature for signature, *_ in cache._cache_file._load_index()]


class _Locator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """The kernels' folder, a sub-folder for each folder of sources (named as numba names them)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(_numba_cache.FOLDER / self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    def ensure_cache_path(self):
        os.makedirs(self._cache_path, mode=0o700, exist_ok=True)

    @classmethod
    def from_function(cls, py_func, py_file):
        return cls(py_func, py_file)


class _Impl(CompileResultCacheImpl):
    _locator_classes = [_Locator]


class _CheckedFiles(IndexDataCacheFile):
    """numba's index and data files, read and written through the :class:`Manifest`."""

    def _load_index(self):
        data = MANIFEST.read(self._index_path)
        if data is None:
            return {}
        stream = io.BytesIO(data)
        try:
            if pickle.load(stream) != self._version:  # another numba's index: compiled again
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except Exception:  # twinrank's own bytes, that this numba cannot read: compiled again
            return {}
        return overloads if stamp == self._source_stamp else {}

    def _load_data(self, name):
        data = MANIFEST.read(self._data_path(name))
        if data is None:
            raise FileNotFoundError(self._data_path(name))  # numba's load: "removed", a miss
        return pickle.loads(data)

    def _save_index(self, overloads):
        MANIFEST.write(self._index_path, pickle.dumps(self._version, protocol=-1)
                       + self._dump((self._source_stamp, overloads)))

    def _save_data(self, name, data):
        MANIFEST.write(self._data_path(name), self._dump(data))


class KernelCache(FunctionCache):
    """numba's cache of one kernel, in the kernels' folder, checked, under the compile lock."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CheckedFiles(self._cache_path, self._impl.filename_base,
                                         self._cache_file._source_stamp)

    def load_overload(self, sig, target_context):
        loaded = self._load(sig, target_context)
        if loaded is not None:
            return loaded
        locking = caching()
        if locking:
            LOCK.acquire(_numba_cache.FOLDER)
            loaded = self._load(sig, target_context)  # compiled by the process this one waited for?
            if loaded is not None:
                LOCK.release()
                return loaded
        _HOLDS.stack.append(locking)  # numba compiles it now: released once saved, or once failed
        return None

    def save_overload(self, sig, data):
        try:
            if caching():
                super().save_overload(sig, data)
        except OSError as error:
            _saving.stop(error)
        finally:
            _release_hold()

    def _load(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:  # twinrank's own bytes that numba cannot rebuild: compiled again
            return None


class _Holds(threading.local):
    """This thread's kernels being compiled after a miss, innermost last: whether each holds the lock."""

    def __init__(self):
        self.stack = []


def _release_hold() -> None:
    if _HOLDS.stack and _HOLDS.stack.pop():
        LOCK.release()


class _ReleaseOnFailure(Listener):
    """Releases the lock of a kernel whose compilation failed (numba then saves nothing)."""

    def on_start(self, event):
        pass

    def on_end(self, event):
        details = getattr(event, "_exc_details", None)  # numba's Event.is_failed reads it the wrong way round
        if details and details[0] is not None and isinstance(event.data["dispatcher"]._cache, KernelCache):
            _release_hold()


class _Saving:
    """Whether the cache can still be written; stopped, with one notice, by the first write that failed."""

    def __init__(self):
        self.stopped = False

    def stop(self, error: OSError) -> None:
        if not self.stopped:
            self.stopped = True
            NOTICE.say(f"twinrank: cannot write the kernel cache in {_numba_cache.FOLDER} "
                       f"({error.strerror or error}): the kernels compiled from now on are not cached")


_HOLDS = _Holds()
_saving = _Saving()
MANIFEST = Manifest(_numba_cache.FOLDER) if _numba_cache.FOLDER is not None else None
register("numba:compile", _ReleaseOnFailure())

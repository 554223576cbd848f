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

A kernel compiled for another kernel (while that one compiles: a callee) gets no Python entry
point (numba's ``no_cpython_wrapper``): the caller links its code, so
unboxing every argument from Python objects, compiled and optimised once per callee, would be
thrown away; leaving it out took 13% of a cold demo's compile time. Such a callee is cached apart
(its index key ends ``"callee"``). Called from Python later, it is compiled again, with the entry
point (:class:`Kernel`).

Nor is such a callee compiled to machine code: numba links a callee into its caller as LLVM IR and
compiles the caller's module, the callee's code in it, to machine code; the callee's own machine
code never runs. The same holds for the bodies of a kernel's parallel loops and numba's own
helpers compiled for it. Every code library made while a twinrank kernel compiles, but the one of
a kernel called from Python, is a :class:`LinkedLibrary`, optimised as numba optimises it and
never compiled to machine code (a fifth of a cold demo's compile time). The callers' machine code
differs a little: numba linked a callee's module as its machine code generation had left it (the
backend's own passes change the module), it now links the module as optimised; the models are the
same bit for bit, and the fit's time the same within the noise (docs/benchmarks.md). Nor is such
a library optimised as a module (numba's module passes, after each function's own): its callers link
its IR and optimise the linked module whole, which numba does anyway, so the callee's code went
through the module passes once per caller and once more on its own (a tenth of a cold demo's compile
CPU; the models the same bit for bit, the fit's CPU the same within the noise).

Nothing compiled while a kernel compiles gets numba's cfunc wrapper (a C entry point, which nothing
calls: no kernel is called by its address), not the kernel, nor its callees, nor numba's own
``@overload`` implementations (``np.empty``, ``min``, ...): numba gives these no Python entry point
but a cfunc wrapper, with which their libraries had an entry point, were optimised as modules and
compiled to machine code (:func:`_without_cfunc_wrapper`; 8-10% less compile CPU of the LambdaRank
kernel and of the metrics, in turn).

A parallel kernel can have a serial twin (:func:`serial`: the same function compiled without its
parallel loops, cached under a name of its own) for data too small for threads: a small data set's
grower compiles no parallel loop.

A kernel's data-dependent selects stay selects on x86 (:func:`_selects_kept`). twinrank's kernels
choose without branches where the choice follows the data (``p + step if t[p + step - 1] < x else p``
in the binning's search, QuickScorer's masks): LLVM compiles such a select to a conditional move,
then its x86 pass ``x86-cmov-conversion`` turns a conditional move in a loop back into a branch
where the CPU's scheduling model predicts that pays. On CPUs modelled as Haswell or Sapphire /
Emerald Rapids it does, and a branch on random data mispredicts about every other value:
``apply_bins`` took 27-57 ns a value instead of 5-8 (2.3 s instead of 0.66-0.9 for 1M x 136 at
2 threads; the scorer and a fit's rounds measured the same either way: docs/benchmarks.md). The
pass is off while a kernel compiles (LLVM's option ``-x86-cmov-converter``, a setting of the
process's LLVM, set back after): the same operations, so the same results bit for bit, and numba
code compiled outside a twinrank kernel is compiled as before.

numba makes and drops many Python objects while it compiles; a kernel compiled from Python raises
the garbage collector's first threshold to :data:`COMPILING_GC_THRESHOLD` meanwhile (then restores
it): fewer young-generation collections, each of which walked the compiler's many live objects (a
seventh of numba's own compile time, ~15 MB more at the peak of a cold demo).

Built on numba's caching classes (``numba.core.caching``): ``FunctionCache``, its locator and
its index and data file class are subclassed, their file reading and writing replaced.
"""
from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import platform
import threading
import types
import weakref

import llvmlite.binding as llvm
import numba
from numba.core import compiler, cpu, sigutils
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    _CacheLocator,
    _SourceFileBackedLocatorMixin,
)
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler_lock import global_compiler_lock
from numba.core.event import Listener, register
from numba.core.registry import CPUDispatcher

from twinrank.fast.runtime import _numba_cache
from twinrank.fast.runtime._cache_manifest import Manifest
from twinrank.fast.runtime._compile_lock import LOCK, wait_for_promise
from twinrank.fast.runtime._compile_notice import NOTICE

COMPILING_GC_THRESHOLD = 50_000


def njit(function=None, *, cache: bool = False, **options):
    """``numba.njit(**options)``; with ``cache=True``, cached by :class:`KernelCache` in the kernels'
    folder (uncached when there is none)."""
    def decorate(function):
        dispatcher = numba.njit(**options)(function)
        if type(dispatcher) is CPUDispatcher:
            dispatcher.__class__ = Kernel
            dispatcher._compiler._customize_flags = _callee_flags
            dispatcher._compiler.pipeline_class = _Pipeline
        if cache and _numba_cache.FOLDER is not None and hasattr(dispatcher, "enable_caching"):
            dispatcher._cache = KernelCache(dispatcher.py_func)  # as numba's enable_caching does
        return dispatcher
    return decorate if function is None else decorate(function)


def serial(kernel):
    """``kernel``, an ``njit(parallel=..., cache=True)`` kernel, compiled without its parallel loops:
    each ``prange`` runs as a plain ``range`` on the calling thread, the same operations in the same
    order, so the same results bit for bit. For data too small for threads, where numba's parallel
    loops (each loop body compiled as a function of its own, with the thread pool's launch around
    it) cost seconds of a cold start's compilation and save microseconds of running. Cached under
    a name of its own, the kernel's with ``_serial`` (numba's cache key does not tell a parallel
    compilation from a serial one of the same function)."""
    py_func = kernel.py_func
    twin = types.FunctionType(py_func.__code__, py_func.__globals__, f"{py_func.__name__}_serial",
                              py_func.__defaults__, py_func.__closure__)
    twin.__qualname__, twin.__doc__ = f"{py_func.__qualname__}_serial", py_func.__doc__
    options = {name: value for name, value in kernel.targetoptions.items() if name not in ("parallel", "nopython")}
    return njit(twin, cache=True, **options)


class Kernel(CPUDispatcher):
    """numba's dispatcher, whose signatures compiled for another kernel have no Python entry point.

    numba compiles a callee while it types its caller, holding its compile lock: a compilation
    that starts with the lock held is a callee's (:func:`_compiling_callee`). Its overload serves
    callers (``overloads``) but is not one Python can call: a call from Python with its signature
    compiles it again, with the entry point, and that replaces it.
    """

    def compile(self, sig):
        callee = _compiling_callee()
        with global_compiler_lock:
            if not callee:
                args, _ = sigutils.normalize_signature(sig)
                existing = self.overloads.get(tuple(args))
                if existing is not None and not has_entry(existing):
                    del self.overloads[tuple(args)]
            codegen = self.targetctx.codegen()
            outer = codegen.__dict__.get("_library_class")  # numba's class, or a compiling caller's
            codegen._library_class = LinkedLibrary  # every library numba makes now, but _Pipeline's
            _CALLEE.stack.append(callee)
            thresholds = gc.get_threshold()
            if not callee and thresholds[0]:  # numba's objects: fewer young-generation collections
                gc.set_threshold(COMPILING_GC_THRESHOLD, *thresholds[1:])
            try:
                with contextlib.nullcontext() if callee else _selects_kept():
                    return super().compile(sig)
            finally:
                gc.set_threshold(*thresholds)
                _CALLEE.stack.pop()
                if outer is None:
                    del codegen._library_class
                else:
                    codegen._library_class = outer

    def add_overload(self, cres):
        if has_entry(cres):
            super().add_overload(cres)
        else:
            self.overloads[tuple(cres.signature.args)] = cres


@contextlib.contextmanager
def _selects_kept():
    """LLVM's x86 pass that turns conditional moves in loops into branches (``x86-cmov-conversion``,
    on by default) off in the block, on again after; nothing on other machines (the option is the
    x86 backend's: LLVM exits the process on an option it does not know)."""
    if platform.machine().lower() not in X86_MACHINES:
        yield
        return
    llvm.set_option("", "-x86-cmov-converter=false")
    try:
        yield
    finally:
        llvm.set_option("", "-x86-cmov-converter=true")


X86_MACHINES = ("x86_64", "amd64", "i386", "i686", "x86")


def has_entry(cres) -> bool:
    """Whether the compiled ``cres`` has its Python entry point (numba's cpython wrapper)."""
    return bool(cres.objectmode or cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name))


def _compiling_callee() -> bool:
    """Whether a compilation starting now is a callee's: this thread already compiles."""
    return global_compiler_lock.is_locked()


class _Pipeline(compiler.Compiler):
    """numba's compiler, which gives a kernel called from Python numba's own code library (compiled to
    machine code); a callee's is made by numba, a :class:`LinkedLibrary` (:meth:`Kernel.compile`)."""

    def compile_extra(self, func):
        if not (_CALLEE.stack and _CALLEE.stack[-1]):
            self.state.library = JITCodeLibrary(self.state.targetctx.codegen(), func.__qualname__)
            self.state.library.enable_object_caching()  # as numba's lowering does for the library it makes
        return super().compile_extra(func)


class LinkedLibrary(JITCodeLibrary):
    """A code library only ever linked into another one: optimised as numba optimises it, not compiled
    to machine code. Its module of the kernels' environment pointers alone is (numba sets them by address
    when a kernel is compiled or loaded), and is its object code in the cache, beside the LLVM IR its
    callers link. A library with an entry point for Python (a parallel loop's body in a kernel called
    from Python has numba's wrapper), or loaded from the cache, is numba's."""

    _linked_only = False  # finalized here without an entry point

    def finalize(self):
        self._linked_only = not any(function.name.startswith(ENTRY_POINTS) and not function.is_declaration
                                    for function in self._final_module.functions)
        super().finalize()

    def _optimize_final_module(self):
        if not self._linked_only:
            super()._optimize_final_module()

    def _finalize_final_module(self):
        if not self._linked_only:
            super()._finalize_final_module()
            return
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        environments = _environments(self._final_module)
        environments._CPUCodeLibrary__library = weakref.proxy(self)  # numba's object cache hook: its code
        self._codegen._add_module(environments)
        self._codegen._engine.finalize_object()
        self._finalized = True

    def get_pointer_to_function(self, name):
        address = super().get_pointer_to_function(name)
        if not address and self._linked_only and _defines(self._final_module, name):
            raise RuntimeError(f"{name} of {self.name} was linked into its caller, never compiled on its own")
        return address


# numba's wrappers' names: ``llvm_cpython_wrapper_name`` (the mangled name in the namespace ``cpython``), and
# ``llvm_cfunc_wrapper_name``
ENTRY_POINTS = ("_ZN7cpython", "cfunc.")


def _environments(module) -> llvm.ModuleRef:
    """A module of ``module``'s environment pointers (numba's ``declare_env_global``), nothing else."""
    names = [gv.name for gv in module.global_variables if gv.name.startswith("_ZN08NumbaEnv")
             and not gv.is_declaration]
    environments = llvm.parse_assembly("".join(f'@"{name}" = common global i8* null\n' for name in names))
    environments.triple, environments.data_layout = module.triple, module.data_layout
    return environments


def _defines(module, name: str) -> bool:
    try:
        return not module.get_function(name).is_declaration
    except NameError:
        return False


def _callee_flags(flags):
    """numba's flags of a compilation (``_FunctionCompiler._customize_flags``): a callee's, no Python entry
    point (nor a cfunc wrapper: :func:`_without_cfunc_wrapper`)."""
    if _CALLEE.stack and _CALLEE.stack[-1]:
        flags.no_cpython_wrapper = True
    return flags


def _without_cfunc_wrapper(finalize):
    """numba's ``CPUTargetOptions.finalize`` (every compilation's flags), which also leaves out the cfunc
    wrapper (``no_cfunc_wrapper``) of whatever compiles while a kernel compiles: the kernel itself, its
    callees, and numba's own ``@overload`` implementations (``np.empty``, ``min``, ...), which numba
    compiles without a Python entry point but with a cfunc wrapper, so their libraries had an entry
    point and were optimised as modules and compiled to machine code (:class:`LinkedLibrary`). Nothing
    calls a kernel by its C address (no ``cfunc``, no first-class function types)."""
    def finalize_flags(self, flags, options):
        finalize(self, flags, options)
        if _CALLEE.stack:
            flags.no_cfunc_wrapper = True
    return finalize_flags


class _Callee(threading.local):
    """This thread's :meth:`Kernel.compile` calls, innermost last: whether each compiles a callee."""

    def __init__(self):
        self.stack = []


def caching() -> bool:
    """Whether kernels compiled now are saved to the cache."""
    return MANIFEST is not None and not _saving.stopped


def cached_signatures(dispatcher) -> list:
    """The signatures the cache holds for ``dispatcher`` with their Python entry point (none if it is not
    cached)."""
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, KernelCache):
        return []
    return [key[0] for key in cache._cache_file._load_index() if len(key) == 3]


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

    def reduce(self, cres):
        """numba's, but for the type annotation's text: numba renders the typed source of every
        kernel it saves (about 2.5 ms of CPU a kernel, 0.2-0.3 s of a cold ``twinrank demo``)
        for ``inspect_types`` of a loaded kernel, which prints ``None`` instead."""
        return cres._replace(type_annotation=None)._reduce()


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
        self._callee_key = False  # the key of a callee's compilation (``_index_key``)
        self.promise = None  # the lock file of another process compiling this kernel, waited for (_compile_lock)

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (("callee",) if self._callee_key else ())

    def load_overload(self, sig, target_context):
        if self.promise is not None:  # another process compiles it for this one: wait, then load it
            wait_for_promise(_numba_cache.FOLDER, self.promise)
            self.promise = None
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
                self._callee_key = not has_entry(data)
                super().save_overload(sig, data)
        except OSError as error:
            _saving.stop(error)
        finally:
            _release_hold()

    def _load(self, sig, target_context):
        """The overload compiled for ``sig``: for a callee, its own or one with the entry point."""
        for self._callee_key in ((True, False) if _CALLEE.stack and _CALLEE.stack[-1] else (False,)):
            try:
                loaded = super().load_overload(sig, target_context)
            except Exception:  # twinrank's own bytes that numba cannot rebuild: compiled again
                loaded = None
            if loaded is not None:
                return loaded
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


_CALLEE = _Callee()
cpu.CPUTargetOptions.finalize = _without_cfunc_wrapper(cpu.CPUTargetOptions.finalize)
_HOLDS = _Holds()
_saving = _Saving()
MANIFEST = Manifest(_numba_cache.FOLDER) if _numba_cache.FOLDER is not None else None
register("numba:compile", _ReleaseOnFailure())

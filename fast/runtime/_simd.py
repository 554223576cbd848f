"""LLVM intrinsics numba does not offer: one vector add for a histogram slot (:func:`add_row`), a
software prefetch (:func:`prefetch`), QuickScorer's exit-leaf values of eight rows (:func:`add_exit_values`)
and an atomic counter for threads that share out work items (:func:`claim`).

``add_row``: ``dst[at:at + 2] += (gh[j], gh[j + 1])``, float64 lanes.

A slot of the fast grower's histograms is two float64 lanes: the sums of $g$
and of $h$ (``_histogram``; rows are counted only where a split needs them,
``_counts``). Written as two scalar statements, numba emits two loads, adds and
stores (its LLVM pipeline runs no SLP vectorizer); this intrinsic loads the row's
``(g, h)`` pair and the slot as ``<2 x double>`` and emits one load, add and store
(SSE2 ``addpd``). Each lane is still one IEEE addition in the same order, so the
sums are bit-identical to the scalar code; only the memory operations change.
The slot was once ``(g, h, count, 0)``, one AVX ``vaddpd ymm`` per row and feature:
half the bytes per add make the histograms about a quarter faster on the speed benchmark.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 2  # float64 lanes of one histogram slot: g, h


@intrinsic
def add_row(typingctx, dst, at, gh, j):
    """``dst[at:at + LANES] += (gh[j], gh[j + 1])`` for C-contiguous 1-D float64 arrays, unchecked."""
    if not (isinstance(dst, types.Array) and isinstance(gh, types.Array)
            and dst.dtype == types.float64 and gh.dtype == types.float64):
        return None
    signature = types.void(dst, at, gh, j)

    def codegen(context, builder, sig, args):
        pair = ir.VectorType(ir.DoubleType(), LANES)
        dst_data = context.make_array(sig.args[0])(context, builder, args[0]).data
        gh_data = context.make_array(sig.args[2])(context, builder, args[2]).data
        slot_ptr = builder.bitcast(builder.gep(dst_data, [args[1]]), pair.as_pointer())
        pair_ptr = builder.bitcast(builder.gep(gh_data, [args[3]]), pair.as_pointer())
        row = builder.load(pair_ptr, align=8)
        builder.store(builder.fadd(builder.load(slot_ptr, align=8), row), slot_ptr, align=8)
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def prefetch(typingctx, array, at):
    """Ask for the cache line of ``array[at]`` (``llvm.prefetch``: a read, kept in every cache
    level); no effect on any value. For rows read through an index (a node's rows scattered over
    the data set), where the hardware cannot guess the next address."""
    if not isinstance(array, types.Array):
        return None
    signature = types.void(array, at)

    def codegen(context, builder, sig, args):
        byte_ptr = ir.IntType(8).as_pointer()
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), byte_ptr)
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), "llvm.prefetch.p0i8")
        builder.call(function, [address, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def claim(typingctx, counter):
    """``counter[0]`` before adding 1 to it, in one atomic step (LLVM ``atomicrmw add``, sequentially
    consistent): kernels running at once on several threads, each claiming items from the same
    counter, get distinct items, in increasing order, and together every item; no lock, no GIL.
    ``counter`` a 1-D int64 array."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None
    signature = types.int64(counter)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        return builder.atomic_rmw("add", data, ir.Constant(ir.IntType(64), 1), "seq_cst")

    return signature, codegen


EXIT_LANES = 8  # rows of one add_exit_values


@intrinsic
def add_exit_values(typingctx, totals, values, words, weight, at):
    """``totals[at + r] += weight * values[lowest set bit of words[at + r]]`` for ``r`` in ``0 .. 7``.

    QuickScorer's step from one tree's bitvectors to the rows' scores (``_quickscorer``), eight
    rows at once: a vector ``cttz``, a gather of the eight leaf values, one vector multiply and one
    vector add. Each lane is the scalar loop's IEEE multiply then add, so the sums are bit for bit
    the same; numba's loop vectorizer leaves that loop scalar (its cost model rejects the gather),
    at about 0.36 ns a row against 0.22 here. ``totals`` and ``values`` float64, ``words`` an
    unsigned integer type, all C-contiguous 1-D; unchecked (a word of 0 is undefined)."""
    if not (isinstance(totals, types.Array) and isinstance(values, types.Array) and isinstance(words, types.Array)
            and totals.dtype == types.float64 and values.dtype == types.float64
            and isinstance(words.dtype, types.Integer) and not words.dtype.signed):
        return None
    signature = types.void(totals, values, words, weight, at)

    def codegen(context, builder, sig, args):
        double, i64 = ir.DoubleType(), ir.IntType(64)
        word = context.get_data_type(sig.args[2].dtype)
        sums_array, values_array, words_array = (context.make_array(sig.args[i])(context, builder, args[i])
                                                 for i in (0, 1, 2))
        at = context.cast(builder, args[4], sig.args[4], types.int64)
        weight = context.cast(builder, args[3], sig.args[3], types.float64)

        def lanes_of(element):
            return ir.VectorType(element, EXIT_LANES)

        def pointer(array, element):
            return builder.bitcast(builder.gep(array.data, [at]), lanes_of(element).as_pointer())

        cttz = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(lanes_of(word), [lanes_of(word), ir.IntType(1)]),
            f"llvm.cttz.v{EXIT_LANES}i{word.width}")
        bits = builder.call(cttz, [builder.load(pointer(words_array, word), align=1), ir.Constant(ir.IntType(1), 1)])
        offsets = builder.zext(bits, lanes_of(i64)) if word.width < 64 else bits
        addresses = builder.add(_splat(builder, builder.ptrtoint(values_array.data, i64)),
                                builder.shl(offsets, _splat(builder, ir.Constant(i64, 3))))  # 8 bytes a value
        gather = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(lanes_of(double), [lanes_of(double.as_pointer()), ir.IntType(32),
                                                               lanes_of(ir.IntType(1)), lanes_of(double)]),
            f"llvm.masked.gather.v{EXIT_LANES}f64.v{EXIT_LANES}p0f64")
        leaf_values = builder.call(gather, [builder.inttoptr(addresses, lanes_of(double.as_pointer())),
                                            ir.Constant(ir.IntType(32), 8),
                                            ir.Constant(lanes_of(ir.IntType(1)), [1] * EXIT_LANES),
                                            ir.Constant(lanes_of(double), ir.Undefined)])
        sums = pointer(sums_array, double)
        builder.store(builder.fadd(builder.load(sums, align=1), builder.fmul(_splat(builder, weight), leaf_values)),
                      sums, align=1)
        return context.get_dummy_value()

    return signature, codegen


def _splat(builder, value):
    """``value`` in every one of ``EXIT_LANES`` lanes."""
    lanes = ir.VectorType(value.type, EXIT_LANES)
    one = builder.insert_element(ir.Constant(lanes, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(lanes, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), EXIT_LANES), [0] * EXIT_LANES))

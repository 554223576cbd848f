"""LLVM intrinsics numba does not offer: one vector add for a histogram slot (:func:`add_row`) and a
software prefetch (:func:`prefetch`).

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

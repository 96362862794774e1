"""The LLVM intrinsics under the engine's kernels (numba offers none of them).

For the tiled kernels: a vectorisable max, 2^k from bits, 512-bit vector hints, an atomic
task counter and a BLAS gemm that accumulates and takes transposes as flags (why each exists
and what it bought is in :mod:`engine.flash`'s docstring). For compile time (the lab's
seq2seq kernels): a matrix view of a flat vector without reshape's checks, and a
``noinline`` mark that keeps a helper's loops out of each of its call sites.
:mod:`engine._intrinsics_py` has a plain-Python twin of each for interpreted mode
(:func:`engine._jit.use_interpreter`).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import populate_array
from numba.extending import intrinsic

from engine._jit import MAXNUM_FLAGS

@intrinsic
def _fmax(typingctx, a, b):
    """``llvm.maxnum(a, b)`` flagged nnan/nsz, so a loop of them vectorises as a reduction."""
    if a != b or a not in (types.float32, types.float64):
        return None

    def codegen(context, builder, signature, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maxnum", [ty], ir.FunctionType(ty, [ty, ty]))
        return builder.call(fn, args, fastmath=MAXNUM_FLAGS)

    return a(a, b), codegen


@intrinsic
def _pow2_round(typingctx, t):
    """2^k as a float, for t = v + 1.5·2²³ (float32) or v + 1.5·2⁵² (float64).

    Adding the magic constant leaves k = round(v) in t's low mantissa bits; shifting them into
    the exponent field and adding the bias gives 2^k with integer operations only, so it
    vectorises. k = −127 (float32) / −1023 (float64) gives exactly 0.0.
    """
    if t not in (types.float32, types.float64):
        return None
    shift, bias, width = (52, 1023, 64) if t == types.float64 else (23, 127, 32)

    def codegen(context, builder, signature, args):
        ity = ir.IntType(width)
        bits = builder.shl(builder.bitcast(args[0], ity), ir.Constant(ity, shift))
        return builder.bitcast(builder.add(bits, ir.Constant(ity, bias << shift)),
                               context.get_value_type(t))

    return t(t), codegen


@intrinsic
def _wide_vectors(typingctx):
    """Let LLVM vectorise the calling function with 512-bit registers where the CPU has them.

    LLVM's tuning for Intel AVX-512 cores prefers 256-bit vectors, so numba's loops use ymm
    registers even there. The function attributes ``prefer-vector-width`` and
    ``min-legal-vector-width`` lift that for this function only (measured here: the
    exponential ~20 % faster, the whole kernel ~5 %); CPUs without AVX-512 ignore them.
    llvmlite only accepts a fixed list of attribute names, so they are added to the set
    directly; should that ever fail, the function compiles as before.
    """
    def codegen(context, builder, signature, args):
        try:
            for attr in ('"prefer-vector-width"="512"', '"min-legal-vector-width"="512"'):
                set.add(builder.function.attributes, attr)
        except Exception:  # noqa: BLE001 - an optimisation hint, never a reason to fail
            pass
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def _view2d(typingctx, flat, start, rows, cols):
    """Entries start … start + rows·cols − 1 of the C-contiguous array ``flat`` (any number of
    dimensions, read in C order) as a (rows, cols) C-contiguous view, with no checks.

    What ``flat.reshape(-1)[a:b].reshape((rows, cols))`` gives, without reshape's size check
    and stride search: numba inlines those at every call, so a kernel taking a dozen
    parameter matrices from one flat vector compiled several times slower. The caller
    guarantees start + rows·cols ≤ flat.size.
    """
    if not (isinstance(flat, types.Array) and flat.layout == "C"):
        return None
    if not all(isinstance(x, types.Integer) for x in (start, rows, cols)):
        return None
    view = flat.copy(ndim=2, layout="C")

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        i0, r, c = (context.cast(builder, v, t, types.intp)
                    for v, t in zip(args[1:], signature.args[1:]))
        out = context.make_array(signature.return_type)(context, builder)
        item = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(flat.dtype)))
        populate_array(out, data=builder.gep(src.data, [i0]),
                       shape=cgutils.pack_array(builder, [r, c]),
                       strides=cgutils.pack_array(builder, [builder.mul(c, item), item]),
                       itemsize=item, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, signature.return_type, out._getvalue())

    return view(flat, start, rows, cols), codegen


@intrinsic
def _no_inline(typingctx):
    """Mark the function that calls this ``noinline``: its callers call it instead of
    inlining it.

    numba links a helper's optimised code into every kernel that calls it, and LLVM inlines
    it at each call site, then vectorises each copy of its loops again (a runtime alias
    check, a vector body, a remainder loop). For small loops called a dozen times from one
    kernel that made most of the kernel's compile; kept apart, each helper is compiled once
    per kernel, for the price of a call (nanoseconds next to the loop over B·d entries).
    """
    def codegen(context, builder, signature, args):
        builder.function.attributes.add("noinline")
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def _compact(typingctx):
    """:func:`_no_inline`, and compile the calling function for size (``minsize``).

    For helpers whose loops run rarely next to the matrix products around them: LLVM leaves
    such a loop scalar instead of emitting a vector body, a runtime alias check and a
    remainder loop for it (a 2-D copy shrank from ~1000 lines of optimised IR to 40), so it
    compiles faster. Not for loops that run over whole blocks at every step: the seq2seq
    lab lost 3-6 % of its training speed when its per-step copies and sums were compacted.
    """
    def codegen(context, builder, signature, args):
        for attribute in ("noinline", "minsize", "optsize"):
            builder.function.attributes.add(attribute)
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def _next_task(typingctx, counter):
    """Atomically counter[0] += 1, returning the old value: the next unclaimed task."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.atomic_rmw("add", ary.data, ir.Constant(ir.IntType(64), 1), "monotonic")

    return types.int64(counter), codegen


_CHAR = ir.IntType(8)
_VOIDP = ir.IntType(8).as_pointer()


@intrinsic
def _gemm(typingctx, A, B, C, trans_a, trans_b, alpha, beta):
    """C = alpha · op(A) · op(B) + beta · C, with op(X) = Xᵀ when trans_x.

    op(A) (m, k), op(B) (k, n), C (m, n): 2-D row-major views whose rows may be strided but
    whose columns are contiguous. Calls ``numba_xxgemm``, numba's bridge to scipy's BLAS that
    ``np.dot(a, b, out)`` uses too, but passes beta, so a product can be accumulated into C.
    Row-major C = op(A) op(B) is the column-major product Cᵀ = op(B)ᵀ op(A)ᵀ.
    """
    arrays = (A, B, C)
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in arrays):
        return None
    if not A.dtype == B.dtype == C.dtype or A.dtype not in (types.float32, types.float64):
        return None
    from numba.np.linalg import ensure_blas

    ensure_blas()  # scipy provides the BLAS; fail at compile time, not with a wrong result
    dtype = A.dtype
    kind = ord("s" if dtype == types.float32 else "d")

    def codegen(context, builder, signature, args):
        a, b, c, ta, tb, al, be = args
        views = [context.make_array(x)(context, builder, v) for x, v in zip(arrays, (a, b, c))]
        size = context.get_constant(types.intp, context.get_abi_sizeof(context.get_value_type(dtype)))
        shapes = [cgutils.unpack_tuple(builder, v.shape, 2) for v in views]
        lds = [builder.sdiv(cgutils.unpack_tuple(builder, v.strides, 2)[0], size) for v in views]
        m = builder.select(ta, shapes[0][1], shapes[0][0])
        k = builder.select(ta, shapes[0][0], shapes[0][1])
        n = builder.select(tb, shapes[1][0], shapes[1][1])
        t_char, n_char = ir.Constant(_CHAR, ord("t")), ir.Constant(_CHAR, ord("n"))
        slots = [cgutils.alloca_once_value(builder, context.cast(builder, v, t, dtype))
                 for v, t in ((al, signature.args[5]), (be, signature.args[6]))]
        fnty = ir.FunctionType(ir.IntType(32), [
            _CHAR, _CHAR, _CHAR, cgutils.intp_t, cgutils.intp_t, cgutils.intp_t,
            _VOIDP, _VOIDP, cgutils.intp_t, _VOIDP, cgutils.intp_t, _VOIDP, _VOIDP, cgutils.intp_t])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        ptr = [builder.bitcast(v.data, _VOIDP) for v in views]
        builder.call(fn, (
            ir.Constant(_CHAR, kind), builder.select(tb, t_char, n_char),
            builder.select(ta, t_char, n_char), n, m, k,
            builder.bitcast(slots[0], _VOIDP), ptr[1], lds[1], ptr[0], lds[0],
            builder.bitcast(slots[1], _VOIDP), ptr[2], lds[2]))
        return context.get_dummy_value()

    return types.void(A, B, C, trans_a, trans_b, alpha, beta), codegen

"""The LLVM intrinsics under the tiled attention (numba offers none of them).

For :mod:`engine.flash` and :mod:`engine.flash_backward` only (through :mod:`engine._tiles`):
a vectorisable max, 2^k from bits, 512-bit vector hints, an atomic task counter and a BLAS
gemm that accumulates and takes transposes as flags (why each exists and what it bought is in
:mod:`engine.flash`'s docstring). This is the one module of the engine that reaches into
numba's and llvmlite's internals; it gets them from :func:`engine._jit.load`, under the
engine's one import lock. Every other kernel is plain numba (``np.dot``, slicing,
``math.exp``), and the tiled attention has no interpreted mode.
"""

from __future__ import annotations

from engine._jit import MAXNUM_FLAGS, load

ir = load("llvmlite.ir")
types = load("numba.core.types")
cgutils = load("numba.core.cgutils")
intrinsic = load("numba.extending").intrinsic
_ensure_blas = load("numba.np.linalg").ensure_blas


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
    _ensure_blas()  # scipy provides the BLAS; fail at compile time, not with a wrong result
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

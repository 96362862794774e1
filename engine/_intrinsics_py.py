"""Plain-Python twins of :mod:`engine._intrinsics`, for interpreted mode.

:func:`engine._jit.use_interpreter` makes every kernel a plain Python function; the kernels
still call these helpers by name, so each has a twin here with the same contract (the
compiled versions are LLVM code and cannot run in Python). They only need to be right, not
fast: interpreted mode is for worked examples, whose matrices are a few rows wide.
``tests/test_interpreted.py`` checks each twin against its intrinsic.
"""

from __future__ import annotations

import threading

import numpy as np

_task_lock = threading.Lock()


def _view2d(flat, start, rows, cols):
    """Entries start … start + rows·cols − 1 of the C-contiguous ``flat`` as a (rows, cols)
    view."""
    return flat.reshape(-1)[start:start + rows * cols].reshape((rows, cols))


def _no_inline():
    """Nothing to do in Python."""


def _compact():
    """Nothing to do in Python."""


def _fmax(a, b):
    """max(a, b) as ``llvm.maxnum``: if one of them is NaN, the other."""
    return b if (b > a or a != a) else a


def _pow2_round(t):
    """2^k for t = v + 1.5·2²³ (float32) or v + 1.5·2⁵² (float64), k = round(v), by the
    same bit arithmetic as the intrinsic: the low mantissa bits of t shifted into the exponent
    field plus the bias (wrapping like the machine's unsigned integers)."""
    if isinstance(t, np.float32):
        bits = np.array([t], np.float32).view(np.uint32)      # (1,)
        shifted = (bits << np.uint32(23)) + np.uint32(127 << 23)
        return shifted.view(np.float32)[0]
    bits = np.array([t], np.float64).view(np.uint64)          # (1,)
    shifted = (bits << np.uint64(52)) + np.uint64(1023 << 52)
    return shifted.view(np.float64)[0]


def _wide_vectors():
    """A vector-width hint to LLVM: nothing to do in Python."""


def _next_task(counter):
    """counter[0] += 1 under a lock, returning the old value (the intrinsic's atomic add)."""
    with _task_lock:
        old = int(counter[0])
        counter[0] = old + 1
    return old


def _gemm(A, B, C, trans_a, trans_b, alpha, beta):
    """C = alpha · op(A) · op(B) + beta · C in place, op(X) = Xᵀ when trans_x; C is not read
    when beta = 0 (as in BLAS, so an uninitialised C is fine)."""
    a = A.T if trans_a else A                                  # (m, k)
    b = B.T if trans_b else B                                  # (k, n)
    product = (a @ b).astype(C.dtype, copy=False)              # (m, n)
    if beta == 0:
        C[...] = C.dtype.type(alpha) * product
    else:
        C[...] = C.dtype.type(alpha) * product + C.dtype.type(beta) * C

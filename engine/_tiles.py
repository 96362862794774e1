"""Row operations of the tiled attention kernels (:mod:`engine.flash`, :mod:`engine.flash_backward`).

The base-2 exponential, row max and row sum, built on the LLVM intrinsics of
:mod:`engine._intrinsics`. Why each exists and what it bought is in :mod:`engine.flash`'s
docstring. Compiled only: the tiled attention has no interpreted mode (no worked example uses
it).
"""

from __future__ import annotations

import numpy as np

from engine._intrinsics import _fmax, _gemm, _next_task, _pow2_round, _wide_vectors, types
from engine._jit import OVERLOAD_OPTIONS, jit, load

__all__ = ["LN2", "LOG2E", "_exp2_inplace", "_fmax", "_gemm", "_mask_tile", "_next_task",
           "_pow2_round", "_row_max", "_row_sum", "_wide_vectors"]

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


# Base-2 exponential, in place. Compiled with ``contract`` (FMA) only: ``reassoc`` would let
# LLVM fold (v + M) − M into v and break the rounding.
@jit(fma=True)
def _exp2_inplace_f32(x, n, mx):
    """x[j] ← 2^(x[j] − mx) for j < n (mx ≥ the finite x[j]); −inf → 0. Rel. error < 3e-7."""
    _wide_vectors()
    for j in range(n):
        v = x[j] - mx
        v = v if v > np.float32(-127.0) else np.float32(-127.0)
        t = v + np.float32(12582912.0)                     # 1.5·2²³: rounds v to an integer
        f = v - (t - np.float32(12582912.0))               # v − round(v), |f| ≤ ½, exact
        p = np.float32(0.0013266971800476313)              # near-minimax 2^f on [−½, ½]
        p = p * f + np.float32(0.009675460867583752)
        p = p * f + np.float32(0.05550742521882057)
        p = p * f + np.float32(0.24022121727466583)
        p = p * f + np.float32(0.6931469440460205)
        p = p * f + np.float32(1.0000001192092896)
        x[j] = p * _pow2_round(t)


@jit(fma=True)
def _exp2_inplace_f64(x, n, mx):
    """float64 twin of :func:`_exp2_inplace_f32`: Taylor series of 2^f to degree 12 (< 3e-16)."""
    _wide_vectors()
    for j in range(n):
        v = x[j] - mx
        v = v if v > -1023.0 else -1023.0
        t = v + 6755399441055744.0                         # 1.5·2⁵²
        f = v - (t - 6755399441055744.0)
        p = 2.5678435993488206e-11                         # (ln 2)^i / i!
        p = p * f + 4.4455382718708116e-10
        p = p * f + 7.054911620801123e-09
        p = p * f + 1.01780860092397e-07
        p = p * f + 1.321548679014431e-06
        p = p * f + 1.5252733804059841e-05
        p = p * f + 0.0001540353039338161
        p = p * f + 0.0013333558146428443
        p = p * f + 0.009618129107628477
        p = p * f + 0.05550410866482158
        p = p * f + 0.24022650695910072
        p = p * f + 0.6931471805599453
        p = p * f + 1.0
        x[j] = p * _pow2_round(t)


def _exp2_inplace(x, n, mx):
    """x[j] ← 2^(x[j] − mx) in x's dtype; compiled code gets the overload below instead."""
    if x.dtype == np.float32:
        _exp2_inplace_f32(x, n, mx)
    else:
        _exp2_inplace_f64(x, n, mx)


@load("numba.extending").overload(_exp2_inplace, jit_options=OVERLOAD_OPTIONS)
def _exp2_inplace_overload(x, n, mx):
    if x.dtype == types.float32:
        return lambda x, n, mx: _exp2_inplace_f32(x, n, mx)
    return lambda x, n, mx: _exp2_inplace_f64(x, n, mx)


# Reductions may be reordered and assume no NaN (engine._jit.REDUCTION_FLAGS: inputs are
# checked finite; −inf from masks is fine because ninf is not set).
@jit(reduction=True)
def _row_max(x, n, start):
    """max(start, x[0..n)) — vectorised."""
    _wide_vectors()
    m = start
    for j in range(n):
        m = _fmax(m, x[j])
    return m


@jit(reduction=True)
def _row_sum(x, n):
    """Σ x[0..n) in x's dtype — vectorised."""
    _wide_vectors()
    s = x[0] - x[0]
    for j in range(n):
        s += x[j]
    return s


@jit
def _mask_tile(s, b, i0, bq, k0, bk, causal, key_ok, has_pad):
    """s[i, j] ← −inf where query i0 + i may not see key k0 + j (causal: key after query;
    padding: key_ok[b, key] False), for the (bq, bk) tile of batch b."""
    if not ((causal and k0 + bk - 1 > i0) or has_pad):
        return
    for i in range(bq):
        for j in range(bk):
            if (causal and k0 + j > i0 + i) or (has_pad and not key_ok[b, k0 + j]):
                s[i, j] = -np.inf

"""Tiled, FlashAttention-style attention: the output without the n×n weight matrix.

Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", Algorithm 1, on a CPU. For each block of queries we walk over blocks of keys
and keep, per query row, a running maximum m, a running denominator l and an unnormalised
output accumulator O:

    S    = Q_blk K_blkᵀ · scale                       # (B_q, B_k) scores of this block
    m'   = max(m, rowmax(S))                           # new running max
    P    = exp(S − m')                                 # (B_q, B_k), never stored for all keys
    l    = l · exp(m − m') + rowsum(P)                 # rescale the old sum, add the new
    O    = O · exp(m − m') + P V_blk                   # rescale the old output, add the new
    out  = O / l                                       # after the last key block

Memory beyond the inputs and the output is one (B_q, B_k) tile per thread, so it does not
grow with n², and the result equals softmax(Q Kᵀ · scale) V up to rounding.

Two things make it fast on a CPU: the two block products go to BLAS (numba's ``np.dot`` with
an ``out`` array, which calls scipy's OpenBLAS without allocating), and the exponential is a
branch-free polynomial that LLVM vectorises (``math.exp`` in a loop does not vectorise and
costs several times more). BLAS runs single-threaded inside the parallel loop over query
blocks, so the two levels of threading do not fight over the cores.

Masks follow the rest of the engine (and PyTorch SDPA): ``causal=True`` lets query i see keys
j ≤ i (top-left aligned when L ≠ S); ``key_padding`` marks real keys with True; a query that
may see no key gets a zero output.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types
from numba.extending import overload

from engine._jit import jit, pjit
from engine._validate import as_bool, as_float, check_positive_int, check_scalar, result_dtype

BLOCK_Q = 128
BLOCK_K = 512


# --------------------------------------------------------------------------- vectorised exp

@jit(fma=True)
def _exp_shifted_f32(x, n, mx, out, kbuf):
    """out[j] = exp(x[j] − mx) for j < n (≤ 0 expected); −inf → 0. Rel. error < 3e-7.

    Cody–Waite range reduction x = k·ln2 + r with |r| ≤ ln2/2, a degree-6 Taylor polynomial
    for eʳ, then 2ᵏ built from its exponent bits. The rounding of k uses the 1.5·2²³ trick, so
    this function must not be compiled with ``reassoc``.
    """
    for j in range(n):
        v = x[j] - mx
        v = v if v > np.float32(-87.0) else np.float32(-87.0)
        t = v * np.float32(1.4426950408889634) + np.float32(12582912.0)
        k = t - np.float32(12582912.0)
        r = v - k * np.float32(0.693145751953125)
        r = r - k * np.float32(1.428606765330187e-06)
        p = np.float32(1.0 / 720.0)
        p = p * r + np.float32(1.0 / 120.0)
        p = p * r + np.float32(1.0 / 24.0)
        p = p * r + np.float32(1.0 / 6.0)
        p = p * r + np.float32(0.5)
        p = p * r + np.float32(1.0)
        p = p * r + np.float32(1.0)
        out[j] = p
        kbuf[j] = (np.int32(k) + np.int32(127)) << 23
    scale = kbuf.view(np.float32)
    for j in range(n):
        keep = x[j] - mx > np.float32(-87.0)
        out[j] = out[j] * scale[j] if keep else np.float32(0.0)


@jit(fma=True)
def _exp_shifted_f64(x, n, mx, out, kbuf):
    """float64 twin of :func:`_exp_shifted_f32` (degree-11 polynomial, rel. error < 1e-15)."""
    for j in range(n):
        v = x[j] - mx
        v = v if v > -708.0 else -708.0
        t = v * 1.4426950408889634 + 6755399441055744.0
        k = t - 6755399441055744.0
        r = v - k * 0.6931471803691238
        r = r - k * 1.9082149292705877e-10
        p = 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        out[j] = p
        kbuf[j] = (np.int64(k) + np.int64(1023)) << 52
    scale = kbuf.view(np.float64)
    for j in range(n):
        keep = x[j] - mx > -708.0
        out[j] = out[j] * scale[j] if keep else 0.0


def _exp_shifted(x, n, mx, out, kbuf):  # pragma: no cover - replaced by the overload in numba
    raise NotImplementedError


def _exponent_buffer(n, x):  # pragma: no cover - replaced by the overload in numba
    raise NotImplementedError


@overload(_exponent_buffer, jit_options={"cache": True})
def _exponent_buffer_overload(n, x):
    """Scratch integers as wide as x's float type (int32 for float32, int64 for float64)."""
    if x.dtype == types.float32:
        return lambda n, x: np.empty(n, np.int32)
    return lambda n, x: np.empty(n, np.int64)


@overload(_exp_shifted, jit_options={"cache": True})
def _exp_shifted_overload(x, n, mx, out, kbuf):
    if x.dtype == types.float32:
        return lambda x, n, mx, out, kbuf: _exp_shifted_f32(x, n, mx, out, kbuf)
    return lambda x, n, mx, out, kbuf: _exp_shifted_f64(x, n, mx, out, kbuf)


# Reductions may be reordered (reassoc) and assume no NaN (inputs are checked finite; -inf
# from masks is fine because ninf is not set).
@jit(fastmath={"reassoc", "nsz", "nnan", "contract"})
def _row_max(x, n, start):
    """max(start, x[0..n)) — vectorised."""
    m = start
    for j in range(n):
        m = x[j] if x[j] > m else m
    return m


@jit(fastmath={"reassoc", "nsz", "nnan", "contract"})
def _row_sum(x, n):
    """Σ x[0..n) — vectorised."""
    s = x[0] * 0
    for j in range(n):
        s += x[j]
    return s


# --------------------------------------------------------------------------- the kernel

@pjit(fma=True)
def _flash_kernel(Q, K, V, scale, causal, key_ok, has_pad, bq_size, bk_size, out):
    """out (B, L, d_v) = softmax(Q Kᵀ · scale, masked) V for Q (B, L, d), K (B, S, d), V (B, S, d_v).

    key_ok (B, S) marks real keys when has_pad. Parallel over (batch, query block).
    """
    B, L, d = Q.shape
    S = K.shape[1]
    dv = V.shape[2]
    nqb = (L + bq_size - 1) // bq_size
    neg_inf = -np.inf
    for task in prange(B * nqb):
        b = task // nqb
        i0 = (task % nqb) * bq_size
        i1 = min(L, i0 + bq_size)
        bq = i1 - i0
        m = np.empty(bq, Q.dtype)                          # (B_q,) running max
        m[:] = neg_inf
        l = np.zeros(bq, Q.dtype)                          # (B_q,) running sum
        acc = np.zeros((bq, dv), Q.dtype)                  # (B_q, d_v) unnormalised output
        pv = np.empty((bq, dv), Q.dtype)                   # (B_q, d_v) this block's P V
        s_flat = np.empty(bq * bk_size, Q.dtype)           # score tile, reshaped per block
        p_flat = np.empty(bq * bk_size, Q.dtype)           # exp tile
        kbuf = _exponent_buffer(bk_size, Q)
        q_blk = np.ascontiguousarray(Q[b, i0:i1]) * scale  # (B_q, d), scale folded into Q
        k_end = min(S, i1) if causal else S                # causal: keys past the last query are unseen
        for k0 in range(0, k_end, bk_size):
            k1 = min(k_end, k0 + bk_size)
            bk = k1 - k0
            s = s_flat[: bq * bk].reshape(bq, bk)           # (B_q, B_k)
            p = p_flat[: bq * bk].reshape(bq, bk)           # (B_q, B_k)
            np.dot(q_blk, K[b, k0:k1].T, s)                 # BLAS: scores of this block
            partial = (causal and k1 - 1 > i0) or has_pad
            if partial:
                for i in range(bq):
                    for j in range(bk):
                        if (causal and k0 + j > i0 + i) or (has_pad and not key_ok[b, k0 + j]):
                            s[i, j] = neg_inf
            for i in range(bq):
                m_new = _row_max(s[i], bk, m[i])
                if m_new == neg_inf:                        # nothing visible yet in this row
                    continue
                corr = math.exp(m[i] - m_new)               # exp(−inf) = 0 on the first block
                _exp_shifted(s[i], bk, m_new, p[i], kbuf)
                l[i] = l[i] * corr + _row_sum(p[i], bk)
                for c in range(dv):
                    acc[i, c] *= corr
                m[i] = m_new
            np.dot(p, V[b, k0:k1], pv)                      # BLAS: (B_q, B_k) @ (B_k, d_v)
            for i in range(bq):
                for c in range(dv):
                    acc[i, c] += pv[i, c]
        for i in range(bq):
            if l[i] > 0:
                inv = 1.0 / l[i]
                for c in range(dv):
                    out[b, i0 + i, c] = acc[i, c] * inv
            else:                                           # fully masked row → zero output
                for c in range(dv):
                    out[b, i0 + i, c] = 0.0


# --------------------------------------------------------------------------- public API

def flash_attention(
    Q: object,
    K: object,
    V: object,
    *,
    causal: bool = False,
    key_padding: object | None = None,
    scale: float | None = None,
    block_q: int = BLOCK_Q,
    block_k: int = BLOCK_K,
) -> np.ndarray:
    """Exact scaled dot-product attention computed tile by tile (no n×n matrix).

    Args:
        Q: queries, (L, d) or (B, L, d).
        K: keys, (S, d) or (B, S, d).
        V: values, (S, d_v) or (B, S, d_v).
        causal: query i sees keys j ≤ i only (top-left aligned when L ≠ S, as PyTorch).
        key_padding: booleans (S,) or (B, S), True = a real key that may be attended.
        scale: score multiplier; default 1/√d.
        block_q: query rows per tile (and per parallel task).
        block_k: keys per tile.

    Returns:
        The attention output, (L, d_v) or (B, L, d_v), same dtype as Q (float32 stays
        float32). Rows that may see no key are zero.

    Raises:
        ValueError: on mismatched shapes, non-finite values or bad block sizes.
    """
    q = as_float(Q, "Q", ndim=(2, 3))
    dtype = result_dtype(q, np.asarray(K), np.asarray(V))
    q = q.astype(dtype, copy=False)
    k = as_float(K, "K", ndim=q.ndim, dtype=dtype)
    v = as_float(V, "V", ndim=q.ndim, dtype=dtype)
    squeeze = q.ndim == 2
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    B, L, d = q.shape
    if k.shape[0] != B or k.shape[2] != d:
        raise ValueError(f"K: expected shape {(B, 'S', d)[1 if squeeze else 0:]}, got {k.shape[1 if squeeze else 0:]}")
    S = k.shape[1]
    if v.shape[0] != B or v.shape[1] != S:
        raise ValueError(f"V: expected shape {(B, S, 'd_v')[1 if squeeze else 0:]}, got {v.shape[1 if squeeze else 0:]}")
    bq = check_positive_int(block_q, "block_q")
    bk = check_positive_int(block_k, "block_k")
    sc = 1.0 / math.sqrt(d) if scale is None else check_scalar(scale, "scale")
    if key_padding is None:
        key_ok, has_pad = np.ones((1, 1), np.bool_), False
    else:
        key_ok = as_bool(key_padding, "key_padding", shape=(S,) if squeeze else (B, S))
        key_ok, has_pad = np.ascontiguousarray(key_ok.reshape(B, S)), True
    out = np.empty((B, L, v.shape[2]), dtype)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        _flash_kernel(q, k, v, dtype.type(sc), bool(causal), key_ok, has_pad, bq, bk, out)
    return out[0] if squeeze else out

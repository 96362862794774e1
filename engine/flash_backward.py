"""The tiled attention backward: gradients without the n×n weight matrix.

Dao (2023), "FlashAttention-2: Faster Attention with Better Parallelism and Work
Partitioning", Algorithm 2, on a CPU. The forward (:func:`engine.flash.flash_attention` with
``return_lse=True``) keeps only the output O and one number per query row,
lse_i = ln Σ_j exp(s_ij). From these the weights of any tile can be recomputed exactly,
α_ij = exp(s_ij − lse_i), so the backward walks the same tiles again:

    D_i  = do_i · o_i   (= α_i · dα_i, the softmax Jacobian's row term; once, O(n d))
    for each block of keys j (one task; its dK_j, dV_j stay in the thread):
        for each block of queries i:
            S    = Q_i K_jᵀ · scale                    # recomputed, (B_q, B_k)
            P    = exp(S − lse_i)                      # the weights of this tile
            dV_j += Pᵀ dO_i                            # dV = αᵀ dO
            dP   = dO_i V_jᵀ                           # dα = dO Vᵀ
            dS   = P ⊙ (dP − D_i)                      # (diag α − ααᵀ) dα, row by row
            dK_j += scale · dSᵀ Q_i                    # dK = scale dsᵀ Q
            dQ_i += scale · dS K_j                     # dQ = scale ds K

Several key blocks add into the same dQ_i; on a GPU FlashAttention-2 uses atomic adds. Here
each thread adds into its own copy of dQ and the copies are summed at the end, so the extra
memory is (threads + 1)·n·d numbers plus two (B_q, B_k) tiles per thread: O(n), never n².

The five block products go to BLAS through :func:`engine._tiles._gemm` (transposes are
BLAS flags, no copies); scores are kept in base 2 so P comes from the same vectorised 2^x as
the forward. Masks follow the forward: causal (top-left aligned) and key padding; a query row
that sees no key has lse = −inf, zero weights and so zero gradients.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine._jit import jit
from engine._tiles import LOG2E, _exp2_inplace, _gemm, _mask_tile, _next_task, _wide_vectors
from engine._validate import as_float, check_positive_int, shape_str
from engine.flash import (
    _blocked_transpose,
    flash_attention,
    get_threads,
    prepare_flash,
    run_on_threads,
    small_matrix_blas,
)

BACKWARD_SMALL_PIECE_BLOCKS = (64, 128)
"""(B_q, B_k) where OpenBLAS has its small-matrix path (``engine.flash.small_matrix_blas``):
every product of a tile is then one small call on operands read in place (tuned on a 2-core
AVX-512 Xeon)."""
BACKWARD_WHOLE_TILE_BLOCKS = (256, 256)
"""(B_q, B_k) for OpenBLAS's other kernel sets, which pack every call: bigger tiles. On a
2-core AMD EPYC of family 26 (Zen 5, OpenBLAS's Haswell kernels), n = 4096, d = 64: 115 ms
against 133 ms with 64 × 128 on one thread, 63 ms against 79 ms on two."""


def default_backward_blocks(core: str | None = None) -> tuple[int, int]:
    """The backward's (B_q, B_k) for the OpenBLAS kernel set ``core`` (default: this
    machine's), as :func:`engine.flash.default_tiles` chooses the forward's."""
    return BACKWARD_SMALL_PIECE_BLOCKS if small_matrix_blas(core) else BACKWARD_WHOLE_TILE_BLOCKS


class FlashGrads(NamedTuple):
    """Gradients of a scalar loss through :func:`engine.flash.flash_attention`."""

    dQ: np.ndarray
    dK: np.ndarray
    dV: np.ndarray


@jit(fma=True)
def _ds_rows(p, dp, Dr, b, i0, bq, bk):
    """dp[i, :bk] ← p[i, :bk] · (dp[i, :bk] − D[b, i0 + i]) for i < bq (vectorised)."""
    _wide_vectors()
    for i in range(bq):
        d = Dr[b, i0 + i]
        for j in range(bk):
            dp[i, j] = p[i, j] * (dp[i, j] - d)


@jit(fma=True)
def _flash_backward_kernel(Q, K, Kt, Vt, dO, lse2, Dr, scale, scale2, causal, key_ok, has_pad,
                           bq_size, bk_size, dQ, dK, dV, counter):
    """dQ (accumulated into, this thread's copy), dK, dV (written) for Q (B, L, d),
    K (B, S, d), dO (B, L, d_v), lse2 (B, L) = lse · log₂e (+inf where a row sees no key) and
    Dr (B, L) = rowsum(dO ⊙ O). Kt, Vt hold K and V in transposed key blocks of bk_size
    (``engine.flash._blocked_transpose``), so S and dP are plain products: a transposed
    operand costs OpenBLAS's small-matrix path about 1.5× here.

    Tasks are (batch, key block), claimed from ``counter``; scale2 = scale · log₂e.
    """
    B, L, d = Q.shape
    S = K.shape[1]
    dv = Vt.shape[2]
    nkb = (S + bk_size - 1) // bk_size
    bqm, bkm = min(L, bq_size), min(S, bk_size)
    p = np.empty((bqm, bkm), Q.dtype)                      # (B_q, B_k) scores, then P
    dp = np.empty((bqm, bkm), Q.dtype)                     # (B_q, B_k) dP, then dS
    gk = np.empty((bkm, d), Q.dtype)                       # (B_k, d)   dK_j
    gv = np.empty((bkm, dv), Q.dtype)                      # (B_k, d_v) dV_j
    while True:
        task = _next_task(counter)
        if task >= B * nkb:
            break
        b = task // nkb
        kb = task % nkb                                    # causal: early key blocks have the
        k0 = kb * bk_size                                  # most queries, so they go first
        k1 = min(S, k0 + bk_size)
        bk = k1 - k0
        gk[:bk] = 0.0
        gv[:bk] = 0.0
        first = (k0 // bq_size) * bq_size if causal else 0  # causal: queries i < k0 see none
        for i0 in range(first, L, bq_size):
            i1 = min(L, i0 + bq_size)
            bq = i1 - i0
            P = p[:bq, :bk]
            dS = dp[:bq, :bk]
            _gemm(Q[b, i0:i1], Kt[b, kb, :, :bk], P, False, False, scale2, 0.0)  # S, base 2
            _mask_tile(p, b, i0, bq, k0, bk, causal, key_ok, has_pad)  # p: P's buffer, as the forward
            for i in range(bq):
                _exp2_inplace(p[i], bk, lse2[b, i0 + i])   # P = 2^(S − lse₂) = exp(s − lse)
            _gemm(P, dO[b, i0:i1], gv[:bk], True, False, 1.0, 1.0)        # dV_j += Pᵀ dO_i
            _gemm(dO[b, i0:i1], Vt[b, kb, :, :bk], dS, False, False, 1.0, 0.0)  # dP = dO_i V_jᵀ
            _ds_rows(p, dp, Dr, b, i0, bq, bk)                            # dS = P ⊙ (dP − D)
            _gemm(dS, Q[b, i0:i1], gk[:bk], True, False, scale, 1.0)      # dK_j += s dSᵀ Q_i
            _gemm(dS, K[b, k0:k1], dQ[b, i0:i1], False, False, scale, 1.0)  # dQ_i += s dS K_j
        for j in range(bk):
            for c in range(d):
                dK[b, k0 + j, c] = gk[j, c]
            for c in range(dv):
                dV[b, k0 + j, c] = gv[j, c]


def flash_attention_backward(
    Q: object,
    K: object,
    V: object,
    dO: object,
    *,
    out: object | None = None,
    lse: object | None = None,
    causal: bool = False,
    key_padding: object | None = None,
    scale: float | None = None,
    block_q: int | None = None,
    block_k: int | None = None,
) -> FlashGrads:
    """Gradients of :func:`engine.flash.flash_attention` given dO = ∂L/∂out, tile by tile.

    Args:
        Q: queries, (L, d) or (B, L, d).
        K: keys, (S, d) or (B, S, d).
        V: values, (S, d_v) or (B, S, d_v).
        dO: ∂L/∂out, shaped like the output (L, d_v) or (B, L, d_v).
        out: the forward's output; with ``lse``, skips recomputing the forward.
        lse: the forward's row statistics (``flash_attention(..., return_lse=True)``).
        causal, key_padding, scale: as the forward (they must be the same).
        block_q: query rows per tile; default from :func:`default_backward_blocks`.
        block_k: keys per tile (and per parallel task); default likewise. Only speed
            depends on them.

    Returns:
        :class:`FlashGrads` ``(dQ, dK, dV)``, shaped and typed like Q, K, V. Equal to
        :func:`engine.attention_backward.attention_backward` with the same mask, up to
        rounding.

    Raises:
        ValueError: on the forward's input errors, dO / out / lse of the wrong shape, or only
            one of out and lse given.
    """
    q, k, v, key_ok, has_pad, sc, squeeze = prepare_flash(Q, K, V, key_padding, scale)
    if block_q is None or block_k is None:
        default_q, default_k = default_backward_blocks()
        block_q = default_q if block_q is None else block_q
        block_k = default_k if block_k is None else block_k
    bq = check_positive_int(block_q, "block_q")
    bk = check_positive_int(block_k, "block_k")
    B, L, d = q.shape
    S, dv = v.shape[1], v.shape[2]
    dt = q.dtype
    lead = () if squeeze else (B,)
    g = as_float(dO, "dO", dtype=dt)
    if g.shape != lead + (L, dv):
        raise ValueError(f"dO: expected shape {shape_str(lead + (L, dv))} like the output, got "
                         f"shape {shape_str(g.shape)}")
    if (out is None) != (lse is None):
        raise ValueError("out, lse: pass both (from flash_attention(..., return_lse=True)) or "
                         "neither (the forward is then recomputed)")
    if out is None:
        o, m = flash_attention(q, k, v, causal=causal, key_padding=None if not has_pad else key_ok,
                               scale=sc, return_lse=True)
    else:
        o = as_float(out, "out", shape=lead + (L, dv), dtype=dt).reshape(B, L, dv)
        m = as_float(lse, "lse", shape=lead + (L,), dtype=dt, finite=False).reshape(B, L)
        if np.isnan(m).any() or np.isposinf(m).any():
            raise ValueError("lse: contains NaN or +inf; expected the forward's row statistics "
                             "(finite, or -inf for a row that sees no key)")
    g3 = g.reshape(B, L, dv)
    Dr = np.einsum("bld,bld->bl", g3, o).astype(dt)        # (B, L) D_i = do_i · o_i
    lse2 = np.where(np.isneginf(m), np.inf, m * LOG2E).astype(dt)  # (B, L); +inf → P row = 0
    workers = max(1, min(get_threads(), B * -(-S // bk)))
    dQs = [np.zeros((B, L, d), dt) for _ in range(workers)]  # one dQ per thread
    dK, dV = np.empty((B, S, d), dt), np.empty((B, S, dv), dt)
    kt, vt = _blocked_transpose(k, bk), _blocked_transpose(v, bk)  # (B, ⌈S/B_k⌉, ·, B_k)
    args = (q, k, kt, vt, np.ascontiguousarray(g3), lse2, Dr, dt.type(sc), dt.type(sc * LOG2E),
            bool(causal), key_ok, has_pad, bq, bk)
    run_on_threads(_flash_backward_kernel, workers, lambda t: args + (dQs[t], dK, dV))
    dQ = dQs[0]
    for extra in dQs[1:]:
        dQ += extra
    if squeeze:
        return FlashGrads(dQ[0], dK[0], dV[0])
    return FlashGrads(dQ, dK, dV)

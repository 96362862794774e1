"""Backpropagation through scaled dot-product attention (lecture §5, §12).

Forward (:func:`engine.attention.attention`), one query row i at a time:

    s_ij = scale · q_i · k_j        α_i = softmax(s_i) over the allowed j        o_i = Σ_j α_ij v_j

Backward, given the upstream gradient dO = ∂L/∂O (the chain rule read right to left):

    dV        = αᵀ dO                        ∂L/∂v_j  = Σ_i α_ij do_i
    dα        = dO Vᵀ                        ∂L/∂α_ij = do_i · v_j
    ds_i      = (diag(α_i) − α_i α_iᵀ) dα_i  = α_i ⊙ (dα_i − (α_i · dα_i))    (softmax Jacobian)
    dQ        = scale · ds K                 dK = scale · dsᵀ Q

The identity α_i · dα_i = do_i · o_i (FlashAttention-2's "D_i") is what the tiled backward in
:mod:`engine.flash_backward` uses; here the dot is taken over the row directly. Masked
positions have α_ij = 0, so they pass no gradient to s_ij, k_j or v_j, and a fully masked row
(zero weights, zero output) gives a zero dQ row — as PyTorch's ``scaled_dot_product_attention``
with a boolean mask under autograd. The conventions (row layout, True = may attend, default
scale 1/√d_k, gradients summed over broadcast batch dims) are PyTorch's, so the results agree
with ``torch.autograd`` to rounding.

Other engine code (the Transformer lab) calls the kernels from ``@njit`` code with the weights
it kept from its forward pass: :func:`_sdpa_grad` (float64 loops, for small inputs) or
:func:`_sdpa_grad_blas` (BLAS products, float32-friendly), or :func:`_sdpa_grad_auto`, which
picks by size like the forward does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine._jit import jit
from engine._validate import as_float, shape_str
from engine.attention import (
    BLAS_MIN_WORK,
    _sdpa,
    _sdpa_blas,
    prepare_attention,
    prepare_multi_head,
    readonly,
    split_heads,
)


class AttentionGrads(NamedTuple):
    """Gradients of a scalar loss with respect to attention's inputs (shapes as the inputs)."""

    dQ: np.ndarray
    dK: np.ndarray
    dV: np.ndarray
    d_weights: np.ndarray
    """∂L/∂α = dO Vᵀ, (..., L, S): the gradient reaching the attention weights (before the
    softmax Jacobian), over the broadcast batch."""


@jit
def _sdpa_grad(Q, K, V, W, dO, scale, dQ, dK, dV, dW):
    """Backward of :func:`engine.attention._sdpa`, accumulated in float64.

    Q (B, L, d_k), K (B, S, d_k), V (B, S, d_v), forward weights W (B, L, S), dO (B, L, d_v);
    writes dQ (B, L, d_k), dK (B, S, d_k), dV (B, S, d_v) and dW = ∂L/∂α (B, L, S).
    """
    B, L, d_k = Q.shape
    S = K.shape[1]
    d_v = V.shape[2]
    ds = np.empty(S)                                       # (S,) one row of ∂L/∂s
    gK = np.empty((S, d_k))                                # float64 accumulators over i
    gV = np.empty((S, d_v))
    for b in range(B):
        gK[:] = 0.0
        gV[:] = 0.0
        for i in range(L):
            dot = 0.0                                      # α_i · dα_i
            for j in range(S):
                acc = 0.0
                for c in range(d_v):
                    acc += dO[b, i, c] * V[b, j, c]        # dα_ij = do_i · v_j
                dW[b, i, j] = acc
                dot += W[b, i, j] * acc
            for j in range(S):
                a = W[b, i, j]
                ds[j] = a * (dW[b, i, j] - dot)           # (diag α − ααᵀ) dα, row i
                if a != 0.0:
                    for c in range(d_v):
                        gV[j, c] += a * dO[b, i, c]        # dV += α_ij do_i
                    g = ds[j] * scale
                    for c in range(d_k):
                        gK[j, c] += g * Q[b, i, c]         # dK += scale ds_ij q_i
            for c in range(d_k):
                acc = 0.0
                for j in range(S):
                    acc += ds[j] * K[b, j, c]
                dQ[b, i, c] = acc * scale                  # dq_i = scale Σ_j ds_ij k_j
        for j in range(S):
            for c in range(d_k):
                dK[b, j, c] = gK[j, c]
            for c in range(d_v):
                dV[b, j, c] = gV[j, c]


@jit
def _sdpa_grad_blas(Q, K, V, W, dO, scale, dQ, dK, dV, dW):
    """Same contract as :func:`_sdpa_grad`; the four products go to BLAS (in the inputs' dtype)."""
    B, L, _ = Q.shape
    S = K.shape[1]
    ds = np.empty((L, S), Q.dtype)                         # (L, S) ∂L/∂s
    for b in range(B):
        np.dot(W[b].T, dO[b], dV[b])                        # (S, d_v) dV = αᵀ dO
        np.dot(dO[b], V[b].T, dW[b])                        # (L, S)   dα = dO Vᵀ
        for i in range(L):
            dot = 0.0
            for j in range(S):
                dot += W[b, i, j] * dW[b, i, j]
            for j in range(S):
                ds[i, j] = W[b, i, j] * (dW[b, i, j] - dot) * scale
        np.dot(ds, K[b], dQ[b])                             # (L, d_k) dQ = scale ds K
        np.dot(ds.T, Q[b], dK[b])                           # (S, d_k) dK = scale dsᵀ Q


@jit
def _sdpa_grad_auto(Q, K, V, W, dO, scale, dQ, dK, dV, dW):
    """:func:`_sdpa_grad_blas` from L·S·d_k ≥ ``BLAS_MIN_WORK`` (as the forward), else loops."""
    if Q.shape[1] * K.shape[1] * Q.shape[2] >= BLAS_MIN_WORK:
        _sdpa_grad_blas(Q, K, V, W, dO, scale, dQ, dK, dV, dW)
    else:
        _sdpa_grad(Q, K, V, W, dO, scale, dQ, dK, dV, dW)


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes along which an input of ``shape`` was broadcast (as autograd)."""
    extra = grad.ndim - len(shape)
    g = grad.sum(axis=tuple(range(extra))) if extra else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def attention_backward(Q: object, K: object, V: object, mask: object | None, dO: object,
                       scale: float | None = None) -> AttentionGrads:
    """Gradients of scaled dot-product attention, given ∂L/∂out.

    The forward is :func:`engine.attention.attention` (recomputed here); shapes, masks and
    broadcasting are the same.

    Args:
        Q: queries (..., L, d_k).
        K: keys (..., S, d_k).
        V: values (..., S, d_v).
        mask: bool broadcastable to (..., L, S), True = may attend; None = attend everywhere.
        dO: upstream gradient ∂L/∂out, (..., L, d_v) over the broadcast batch.
        scale: score multiplier, default 1/√d_k; must be > 0.

    Returns:
        :class:`AttentionGrads` ``(dQ, dK, dV, d_weights)``: dQ, dK, dV shaped like Q, K, V
        (summed over broadcast batch dims) and d_weights = ∂L/∂α (..., L, S). Masked
        positions and fully masked rows receive no gradient. float32 in → float32 out.

    Raises:
        ValueError: on wrong or mismatched shapes (dO included), NaN/inf, empty input, a bad
            mask or scale <= 0.
    """
    q3, k3, v3, m3, use_mask, sc, batch, dt, shapes = prepare_attention(Q, K, V, mask, scale)
    L, S, d_v = q3.shape[1], k3.shape[1], v3.shape[2]
    want = batch + (L, d_v)
    g = as_float(dO, "dO")
    if g.shape != want:
        raise ValueError(f"dO: expected shape {shape_str(want)} (..., L, d_v) like the attention "
                         f"output, got shape {shape_str(g.shape)}")
    nb = q3.shape[0]
    g3 = readonly(np.ascontiguousarray(g, dtype=dt).reshape(nb, L, d_v))
    out = np.empty((nb, L, d_v), dt)                       # (B, L, d_v)
    W = np.empty((nb, L, S), dt)                           # (B, L, S)
    big = L * S * q3.shape[2] >= BLAS_MIN_WORK
    (_sdpa_blas if big else _sdpa)(q3, k3, v3, m3, use_mask, dt.type(sc), out, W)
    dQ, dK, dV = np.empty_like(q3), np.empty_like(k3), np.empty_like(v3)
    dW = np.empty((nb, L, S), dt)
    (_sdpa_grad_blas if big else _sdpa_grad)(q3, k3, v3, readonly(W), g3, dt.type(sc), dQ, dK,
                                             dV, dW)
    return AttentionGrads(
        unbroadcast(dQ.reshape(batch + (L, -1)), shapes[0]),
        unbroadcast(dK.reshape(batch + (S, -1)), shapes[1]),
        unbroadcast(dV.reshape(batch + (S, d_v)), shapes[2]),
        dW.reshape(batch + (L, S)),
    )


class MultiHeadGrads(NamedTuple):
    """Gradients of a scalar loss through :func:`engine.attention.multi_head_attention`.

    For self-attention (the same X passed as X_q and X_kv) the gradient of X is
    ``dX_q + dX_kv``.
    """

    dX_q: np.ndarray   # (L, d_q_in)
    dX_kv: np.ndarray  # (S, d_kv_in)
    dW_Q: np.ndarray   # (d_q_in, d_model)
    dW_K: np.ndarray   # (d_kv_in, d_model)
    dW_V: np.ndarray   # (d_kv_in, d_model)
    dW_O: np.ndarray   # (d_model, d_out)
    d_weights: np.ndarray  # (h, L, S) ∂L/∂α per head


def multi_head_attention_backward(X_q: object, X_kv: object, W_Q: object, W_K: object,
                                  W_V: object, W_O: object, num_heads: int, mask: object | None,
                                  d_out: object) -> MultiHeadGrads:
    """Gradients of multi-head attention (Vaswani et al., 2017 §3.2.2) given ∂L/∂out.

    Backward of out = concat(head_1, …, head_h) W_O with head_i = attention(X_q W_Q^i,
    X_kv W_K^i, X_kv W_V^i) (column slices, scale 1/√d_head):

        dW_O = concatᵀ d_out            d concat = d_out W_Oᵀ, cut into the heads' columns
        (dQ_i, dK_i, dV_i) = attention backward of head i, put back side by side as dQ, dK, dV
        dW_Q = X_qᵀ dQ   dW_K = X_kvᵀ dK   dW_V = X_kvᵀ dV
        dX_q = dQ W_Qᵀ   dX_kv = dK W_Kᵀ + dV W_Vᵀ

    Args:
        X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask: as
            :func:`engine.attention.multi_head_attention`.
        d_out: ∂L/∂out, (L, d_out).

    Returns:
        :class:`MultiHeadGrads`, each gradient shaped like its input.

    Raises:
        ValueError: on the forward's input errors, or d_out of the wrong shape.
    """
    xq, xkv, wq, wk, wv, wo, h, m, dt = prepare_multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O,
                                                           num_heads, mask)
    L, S, d_model = xq.shape[0], xkv.shape[0], wq.shape[1]
    g = as_float(d_out, "d_out")
    if g.shape != (L, wo.shape[1]):
        raise ValueError(f"d_out: expected shape {shape_str((L, wo.shape[1]))} (L, d_out) like "
                         f"the output, got shape {shape_str(g.shape)}")
    xq, xkv, wq, wk, wv, wo, g = (a.astype(dt, copy=False) for a in (xq, xkv, wq, wk, wv, wo, g))
    Qh = readonly(split_heads(xq @ wq, h))                 # (h, L, d_head)
    Kh = readonly(split_heads(xkv @ wk, h))                # (h, S, d_head)
    Vh = readonly(split_heads(xkv @ wv, h))                # (h, S, d_head)
    m3 = readonly(np.ones((1, 1, 1), np.bool_) if m is None else m)
    out_h = np.empty_like(Qh)                              # (h, L, d_head)
    W = np.empty((h, L, S), dt)                            # (h, L, S)
    sc = dt.type(1.0 / np.sqrt(d_model // h))
    big = L * S * (d_model // h) >= BLAS_MIN_WORK
    (_sdpa_blas if big else _sdpa)(Qh, Kh, Vh, m3, m is not None, sc, out_h, W)
    concat = out_h.transpose(1, 0, 2).reshape(L, d_model)  # (L, d_model)
    dW_O = concat.T @ g                                    # (d_model, d_out)
    dOh = readonly(split_heads(g @ wo.T, h))               # (h, L, d_head)
    dQh, dKh, dVh = np.empty_like(Qh), np.empty_like(Kh), np.empty_like(Vh)
    dW = np.empty_like(W)
    (_sdpa_grad_blas if big else _sdpa_grad)(Qh, Kh, Vh, readonly(W), dOh, sc, dQh, dKh, dVh, dW)
    dQ = dQh.transpose(1, 0, 2).reshape(L, d_model)        # (L, d_model)
    dK = dKh.transpose(1, 0, 2).reshape(S, d_model)        # (S, d_model)
    dV = dVh.transpose(1, 0, 2).reshape(S, d_model)        # (S, d_model)
    return MultiHeadGrads(dQ @ wq.T, dK @ wk.T + dV @ wv.T, xq.T @ dQ, xkv.T @ dK, xkv.T @ dV,
                          dW_O, dW)

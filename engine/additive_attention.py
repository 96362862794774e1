"""Additive (Bahdanau) attention and its backward pass (lecture §8, §12).

Forward (Bahdanau et al., 2014, eq. 6 in the row layout of :mod:`engine.scoring`):

    a_i = W_q q_i   (h,)        b_j = W_k k_j   (h,)        t_ij = tanh(a_i + b_j)   (h,)
    e_ij = v · t_ij             α_i = softmax(e_i) over the allowed j        o_i = Σ_j α_ij v_j

Backward, given dO = ∂L/∂O. The value side and the softmax are the same as scaled
dot-product attention's (:mod:`engine.attention_backward`); what differs is the scorer:

    dV = αᵀ dO,   dα = dO Vᵀ,   de_i = (diag(α_i) − α_i α_iᵀ) dα_i
    dv   = Σ_ij de_ij t_ij                          (the scorer's own output vector learns)
    g_ij = de_ij · v ⊙ (1 − t_ij²)                   (through tanh: a second way to saturate)
    da_i = Σ_j g_ij,   db_j = Σ_i g_ij
    dW_q = Σ_i da_i q_iᵀ,   dq_i = W_qᵀ da_i,   dW_k = Σ_j db_j k_jᵀ,   dk_j = W_kᵀ db_j

There is no 1/√d_k: the score's size is set by v and bounded by ‖v‖₁, and the gradient into
q or k passes through the scorer's weights instead of the other side's vector (in
dot-product attention dq_i = scale Σ_j ds_ij k_j).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from engine._jit import jit
from engine._validate import as_float, broadcast_mask, check_same_dim, result_dtype, shape_str
from engine.attention import readonly
from engine.scoring import _additive_scores, _project_rows, check_additive_params
from engine.softmax import _NO_MASK, _softmax_rows


class AdditiveGrads(NamedTuple):
    """Gradients of a scalar loss through :func:`additive_attention` (shapes as the inputs)."""

    dQ: np.ndarray    # (L, d_q)
    dK: np.ndarray    # (S, d_k)
    dV: np.ndarray    # (S, d_v)
    dW_q: np.ndarray  # (h, d_q)
    dW_k: np.ndarray  # (h, d_k)
    dv: np.ndarray    # (h,)
    d_weights: np.ndarray  # (L, S) ∂L/∂α


@jit
def _additive_grad(Q, K, V, W_q, W_k, v, W, dO, dQ, dK, dV, dW_q, dW_k, dv, dW):
    """Backward of additive attention for Q (L, d_q), K (S, d_k), V (S, d_v), W_q (h, d_q),
    W_k (h, d_k), v (h,), forward weights W (L, S) and dO (L, d_v); float64 accumulation."""
    L, d_q = Q.shape
    S, d_k = K.shape
    h = v.shape[0]
    d_v = V.shape[1]
    A = _project_rows(Q, W_q)                              # (L, h) W_q q_i
    Bk = _project_rows(K, W_k)                             # (S, h) W_k k_j
    dA = np.zeros((L, h))
    dB = np.zeros((S, h))
    gv = np.zeros(h)
    gV = np.zeros((S, d_v))
    for i in range(L):
        dot = 0.0                                          # α_i · dα_i
        for j in range(S):
            acc = 0.0
            for c in range(d_v):
                acc += dO[i, c] * V[j, c]                  # dα_ij = do_i · v_j
            dW[i, j] = acc
            dot += W[i, j] * acc
        for j in range(S):
            al = W[i, j]
            if al == 0.0:                                  # masked (or underflowed): no gradient
                continue
            for c in range(d_v):
                gV[j, c] += al * dO[i, c]
            de = al * (dW[i, j] - dot)                     # softmax Jacobian, row i
            for a in range(h):
                t = math.tanh(A[i, a] + Bk[j, a])
                gv[a] += de * t                            # ∂e_ij/∂v = t_ij
                g = de * v[a] * (1.0 - t * t)              # ∂e_ij/∂(a_i + b_j) = v ⊙ (1 − t²)
                dA[i, a] += g
                dB[j, a] += g
    for a in range(h):
        dv[a] = gv[a]
        for c in range(d_q):
            acc = 0.0
            for i in range(L):
                acc += dA[i, a] * Q[i, c]
            dW_q[a, c] = acc                               # dW_q = Σ_i da_i q_iᵀ
        for c in range(d_k):
            acc = 0.0
            for j in range(S):
                acc += dB[j, a] * K[j, c]
            dW_k[a, c] = acc                               # dW_k = Σ_j db_j k_jᵀ
    for i in range(L):
        for c in range(d_q):
            acc = 0.0
            for a in range(h):
                acc += dA[i, a] * W_q[a, c]
            dQ[i, c] = acc                                 # dq_i = W_qᵀ da_i
    for j in range(S):
        for c in range(d_k):
            acc = 0.0
            for a in range(h):
                acc += dB[j, a] * W_k[a, c]
            dK[j, c] = acc                                 # dk_j = W_kᵀ db_j
        for c in range(d_v):
            dV[j, c] = gV[j, c]


def _prepare(Q, K, V, W_q, W_k, v, mask):
    q = as_float(Q, "Q", ndim=2)
    k = as_float(K, "K", ndim=2)
    val = as_float(V, "V", ndim=2)
    check_same_dim(val, 0, k.shape[0], "V", (k.shape[0], "d_v"), f"one value per key, S = {k.shape[0]}")
    wq, wk, vv = check_additive_params(q, k, W_q, W_k, v)
    dt = result_dtype(q, k, val, wq, wk, vv)
    L, S = q.shape[0], k.shape[0]
    m = None if mask is None else broadcast_mask(mask, (L, S), expected="(L, S)")
    # writable, C-contiguous copies or views, as engine.scoring.additive_scores passes them
    # (numba compiles a kernel once per such type: see engine.attention.readonly)
    arrays = tuple(np.ascontiguousarray(a, dtype=dt) for a in (q, k, val, wq, wk, vv))
    return arrays, None if m is None else np.array(m), dt


def _forward(q, k, val, wq, wk, vv, m, dt):
    L, S = q.shape[0], k.shape[0]
    scores = np.empty((L, S), dt)                          # (L, S) e_ij
    _additive_scores(q, k, wq, wk, vv, scores)
    W = np.empty((L, S), dt)                               # (L, S) α
    # masks reach _softmax_rows read-only, as from engine.softmax (one compiled copy)
    mk = _NO_MASK if m is None else readonly(m)
    _softmax_rows(scores, mk, m is not None, 1.0, W)
    return W @ val, W                                      # (L, d_v), (L, S)


def additive_attention(Q: object, K: object, V: object, W_q: object, W_k: object, v: object,
                       mask: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Additive attention: softmax over vᵀ tanh(W_q q_i + W_k k_j), then Σ_j α_ij v_j.

    Args:
        Q: queries (L, d_q).
        K: keys (S, d_k).
        V: values (S, d_v).
        W_q: (h, d_q) query projection.
        W_k: (h, d_k) key projection.
        v: (h,) scoring vector.
        mask: optional bool broadcastable to (L, S), True = may attend.

    Returns:
        ``(out, weights)``: out (L, d_v), weights (L, S); a fully masked row is all zeros.

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf or empty input, a bad mask.
    """
    (q, k, val, wq, wk, vv), m, dt = _prepare(Q, K, V, W_q, W_k, v, mask)
    return _forward(q, k, val, wq, wk, vv, m, dt)


def additive_attention_backward(Q: object, K: object, V: object, W_q: object, W_k: object,
                                v: object, mask: object | None, dO: object) -> AdditiveGrads:
    """Gradients of :func:`additive_attention` given dO = ∂L/∂out (forward recomputed).

    Args:
        Q, K, V, W_q, W_k, v, mask: as :func:`additive_attention`.
        dO: ∂L/∂out, (L, d_v).

    Returns:
        :class:`AdditiveGrads` ``(dQ, dK, dV, dW_q, dW_k, dv, d_weights)``; masked positions
        and fully masked rows pass no gradient. float32 in → float32 out.

    Raises:
        ValueError: on the forward's input errors, or dO of the wrong shape.
    """
    arrays, m, dt = _prepare(Q, K, V, W_q, W_k, v, mask)
    q, k, val, wq, wk, vv = arrays
    g = as_float(dO, "dO")
    want = (q.shape[0], val.shape[1])
    if g.shape != want:
        raise ValueError(f"dO: expected shape {shape_str(want)} (L, d_v) like the output, got "
                         f"shape {shape_str(g.shape)}")
    _, W = _forward(q, k, val, wq, wk, vv, m, dt)
    dq, dk, dval, dwq, dwk, dvv = (np.empty_like(a) for a in (q, k, val, wq, wk, vv))
    dW = np.empty_like(W)
    _additive_grad(q, k, val, wq, wk, vv, W, np.array(g, dtype=dt), dq, dk, dval, dwq, dwk, dvv, dW)
    return AdditiveGrads(dq, dk, dval, dwq, dwk, dvv, dW)

"""The Transformer's sublayers, each forward step next to its backward step.

Every sublayer is pre-norm with a residual connection (``norm_first=True`` in PyTorch):

    x ← x + Sublayer(LN(x))

and works on the residual stream ``x`` (B·L, d) **in place**: the forward adds the sublayer's
output to ``x`` and returns a cache; the backward receives dL/dx at the sublayer's output in
``dx`` and turns it, in place, into dL/dx at its input (the residual path passes ``dx``
through unchanged, the sublayer path adds its part). Parameter gradients are written into
``g``, the named views of a flat gradient vector shaped like ``theta``.

Multi-head attention (Vaswani et al. 2017 §3.2.2, ``nn.MultiheadAttention``): the projected
queries, keys and values (B·L, d) are cut into h heads of d_head = d / h columns, and each
(sequence, head) pair is scaled dot-product attention with scale 1/√d_head; the heads'
outputs side by side are projected by W_O. Each head is a strided view of the projection's
columns (:func:`split_heads`), so NumPy's batched matmul reads Q, K and V and writes O (and
dQ, dK, dV) in place, one small BLAS product per (sequence, head); the masked softmax and its
backward are two small kernels (float32 exponentials for a float32 model). The weights
(B·h, L, S) are kept for the backward pass and the lab's head plots.

Dropout (training only, ``drop`` a :class:`engine.transformer.dropout.Dropout`; None = no
dropout, exactly the code path without it) sits where PyTorch's layers put it: on the
attention weights inside each multi-head attention (O = (α ⊙ m) V), on each sublayer's output
before the residual add (x ← x + m ⊙ Sublayer(LN(x))), and in the feed-forward block after
the ReLU. On the weights it is plain NumPy around the same kernels: O = (α ⊙ m) V,
dV = (α ⊙ m)ᵀ dO, dα = (dO Vᵀ) ⊙ m, so dropout adds no compiled kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from engine.transformer import _kernels as K
from engine.transformer.dropout import Dropout

Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class Shape:
    """B sequences of L query rows (and S key rows), h heads of d_head columns."""

    B: int
    L: int
    S: int
    H: int
    d: int

    @property
    def d_head(self) -> int:
        return self.d // self.H


# ---------------------------------------------------------------------------- LayerNorm


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, tuple]:
    """LN(x) row by row (N, d) → (N, d) and its cache (x̂, 1/σ)."""
    y = np.empty_like(x)                                     # (N, d)
    xhat = np.empty_like(x)                                  # (N, d)
    rstd = np.empty(x.shape[0], x.dtype)                     # (N,)
    K._layernorm(x, g, b, y, xhat, rstd)
    return y, (xhat, rstd)


def layer_norm_backward(dy: np.ndarray, cache: tuple, g: np.ndarray, dx: np.ndarray,
                        dg: np.ndarray, db: np.ndarray) -> None:
    """dx += dL/dx of LN given dy (N, d); writes dg, db."""
    xhat, rstd = cache
    K._layernorm_backward(dy, xhat, rstd, g, dx, dg, db)


# ---------------------------------------------------------------------------- attention heads


class AttentionCache(NamedTuple):
    """What :func:`heads_attention_backward` reads: the heads' queries, keys and values
    (views (B, h, n, d_head) of the projected rows), the softmax weights (B·h, L, S) before
    dropout, and the weights' dropout mask (None without dropout)."""

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    weights: np.ndarray
    drop: np.ndarray | None


def split_heads(P: np.ndarray, col: int, shape: Shape) -> np.ndarray:
    """The view (B, h, n, d_head) of the d columns of P (B·n, ·) from ``col``: head k of
    sequence b is P[b·n:(b+1)·n, col + k·d_head : col + (k+1)·d_head]. No copy: NumPy's
    matmul reads (and writes) it in place."""
    n = P.shape[0] // shape.B
    return P[:, col:col + shape.d].reshape(shape.B, n, shape.H, shape.d_head).transpose(0, 2, 1, 3)


def heads_attention(P_q: np.ndarray, col_q: int, P_kv: np.ndarray, col_k: int, col_v: int,
                    shape: Shape, mask: np.ndarray,
                    drop: np.ndarray | None = None) -> tuple[np.ndarray, AttentionCache]:
    """Multi-head scaled dot-product attention on projected rows.

    Args:
        P_q: (B·L, ·) rows holding the queries in columns [col_q, col_q + d).
        P_kv: (B·S, ·) rows holding keys at [col_k, col_k + d) and values at [col_v, col_v + d).
        shape: the sizes; mask: (B·h, L, S) bool, True = may attend.
        drop: (B·h, L, S) dropout mask of the weights (None: no dropout).

    Returns:
        (o, cache): the heads side by side, o (B·L, d), and the :class:`AttentionCache`.
    """
    B, L, S, H = shape.B, shape.L, shape.S, shape.H
    dt = P_q.dtype
    Q = split_heads(P_q, col_q, shape)                       # (B, h, L, d_head) views
    Kh, Vh = split_heads(P_kv, col_k, shape), split_heads(P_kv, col_v, shape)   # (B, h, S, d_head)
    W = np.matmul(Q, Kh.transpose(0, 1, 3, 2))              # (B, h, L, S) scores Q Kᵀ
    K._softmax(W.reshape(B * H * L, S), mask.reshape(B * H * L, S),
               dt.type(1 / math.sqrt(shape.d_head)))        # the weights α, in place
    W = W.reshape(B * H, L, S)                               # (B·h, L, S) the weights α
    o = np.empty((B * L, shape.d), dt)                       # (B·L, d)
    Wd = W if drop is None else W * drop                     # α ⊙ m
    np.matmul(Wd.reshape(B, H, L, S), Vh, out=split_heads(o, 0, shape))    # O = (α ⊙ m) V
    return o, AttentionCache(Q, Kh, Vh, W, drop)


def heads_attention_backward(do: np.ndarray, cache: AttentionCache, shape: Shape,
                             dP_q: np.ndarray, col_q: int, dP_kv: np.ndarray, col_k: int,
                             col_v: int) -> None:
    """Backward of :func:`heads_attention`: writes dQ, dK, dV into their columns of
    dP_q (B·L, ·) and dP_kv (B·S, ·) given do (B·L, d)."""
    Q, Kh, Vh, W, drop = cache
    B, L, S, H = shape.B, shape.L, shape.S, shape.H
    dO = split_heads(do, 0, shape)                           # (B, h, L, d_head)
    Wd = (W if drop is None else W * drop).reshape(B, H, L, S)                # α ⊙ m
    np.matmul(Wd.transpose(0, 1, 3, 2), dO, out=split_heads(dP_kv, col_v, shape))  # dV = (α ⊙ m)ᵀ dO
    dW = np.matmul(dO, Vh.transpose(0, 1, 3, 2))             # (B, h, L, S) ∂L/∂(α ⊙ m) = dO Vᵀ
    if drop is not None:
        dW *= drop.reshape(B, H, L, S)                       # ∂L/∂α
    K._softmax_backward(W.reshape(B * H * L, S), dW.reshape(B * H * L, S),
                        W.dtype.type(1 / math.sqrt(shape.d_head)))    # dW ← ∂L/∂(Q Kᵀ)
    np.matmul(dW, Kh, out=split_heads(dP_q, col_q, shape))                     # dQ
    np.matmul(dW.transpose(0, 1, 3, 2), Q, out=split_heads(dP_kv, col_k, shape))  # dK


def residual_add(p: Params, pre: str, proj: str, o: np.ndarray, x: np.ndarray,
                 drop: Dropout | None, name: str) -> np.ndarray | None:
    """x += Dropout(o W + b) for the linear layer ``{pre}.{proj}``; returns the mask (None
    without dropout, when the product is added straight into x)."""
    W, b = p[f"{pre}.{proj}.weight"], p[f"{pre}.{proj}.bias"]
    if drop is None:
        K._linear(o, W, b, x, K.ADD)
        return None
    z = np.empty_like(x)                                     # (N, d) the sublayer's output
    K._linear(o, W, b, z, K.WRITE)
    m = drop.mask(name, z.shape)
    x += z * m
    return m


# ---------------------------------------------------------------------------- sublayers
#
# ``drop`` is the pass's Dropout (None: no dropout). Each sublayer's output dropout is
# PyTorch's ``dropout{k}`` for the sublayer normed by ``norm{k}`` (norm1 → dropout1, ...).


def _out_dropout(pre: str, norm: str) -> str:
    return f"{pre}.dropout{norm[-1]}"


def _grad_through(dx: np.ndarray, m: np.ndarray | None) -> np.ndarray:
    """dL/d(sublayer output) from dL/dx: the residual add passes dx, dropout multiplies by m."""
    return dx if m is None else dx * m


def self_attention_block(p: Params, pre: str, norm: str, x: np.ndarray, shape: Shape,
                         mask: np.ndarray, drop: Dropout | None = None) -> tuple:
    """x ← x + Dropout(MHA(LN(x), LN(x), LN(x))); ``pre`` names the layer, ``norm`` its LayerNorm."""
    d, a = shape.d, f"{pre}.self_attn"
    h, ln = layer_norm(x, p[f"{pre}.{norm}.weight"], p[f"{pre}.{norm}.bias"])   # (B·L, d)
    qkv = np.empty((x.shape[0], 3 * d), x.dtype)                                 # (B·L, 3d)
    K._linear(h, p[f"{a}.in_proj_weight"], p[f"{a}.in_proj_bias"], qkv, K.WRITE)
    m_w = None if drop is None else drop.mask(a, (shape.B * shape.H, shape.L, shape.S))
    o, att = heads_attention(qkv, 0, qkv, d, 2 * d, shape, mask, m_w)           # (B·L, d)
    m = residual_add(p, a, "out_proj", o, x, drop, _out_dropout(pre, norm))
    return ln, h, att, o, m


def self_attention_block_backward(p: Params, g: Params, pre: str, norm: str, cache: tuple,
                                  dx: np.ndarray, shape: Shape) -> None:
    ln, h, att, o, m = cache
    d, a = shape.d, f"{pre}.self_attn"
    do = np.empty_like(o)                                                        # (B·L, d)
    K._linear_backward(o, p[f"{a}.out_proj.weight"], _grad_through(dx, m), g[f"{a}.out_proj.weight"],
                       g[f"{a}.out_proj.bias"], do, K.DX_WRITE)
    dqkv = np.empty((dx.shape[0], 3 * d), dx.dtype)                              # (B·L, 3d)
    heads_attention_backward(do, att, shape, dqkv, 0, dqkv, d, 2 * d)
    dh = np.empty_like(h)                                                        # (B·L, d)
    K._linear_backward(h, p[f"{a}.in_proj_weight"], dqkv, g[f"{a}.in_proj_weight"],
                       g[f"{a}.in_proj_bias"], dh, K.DX_WRITE)
    layer_norm_backward(dh, ln, p[f"{pre}.{norm}.weight"], dx, g[f"{pre}.{norm}.weight"],
                        g[f"{pre}.{norm}.bias"])


def cross_attention_block(p: Params, pre: str, y: np.ndarray, mem: np.ndarray, shape: Shape,
                          mask: np.ndarray, drop: Dropout | None = None) -> tuple:
    """y ← y + Dropout(MHA(LN₂(y), memory, memory)): queries from the decoder, keys/values
    from the encoder's output ``mem`` (B·S, d)."""
    d, a = shape.d, f"{pre}.multihead_attn"
    h, ln = layer_norm(y, p[f"{pre}.norm2.weight"], p[f"{pre}.norm2.bias"])     # (B·L, d)
    q = np.empty_like(y)                                                         # (B·L, d)
    K._linear(h, p[f"{a}.q_proj_weight"], p[f"{a}.q_proj_bias"], q, K.WRITE)
    kv = np.empty((mem.shape[0], 2 * d), y.dtype)                                # (B·S, 2d)
    K._linear(mem, p[f"{a}.kv_proj_weight"], p[f"{a}.kv_proj_bias"], kv, K.WRITE)
    m_w = None if drop is None else drop.mask(a, (shape.B * shape.H, shape.L, shape.S))
    o, att = heads_attention(q, 0, kv, 0, d, shape, mask, m_w)                   # (B·L, d)
    m = residual_add(p, a, "out_proj", o, y, drop, _out_dropout(pre, "norm2"))
    return ln, h, att, o, m


def cross_attention_block_backward(p: Params, g: Params, pre: str, cache: tuple, dy: np.ndarray,
                                   mem: np.ndarray, dmem: np.ndarray, shape: Shape) -> None:
    """As the self-attention backward; the keys' and values' gradient is added to dmem."""
    ln, h, att, o, m = cache
    d, a = shape.d, f"{pre}.multihead_attn"
    do = np.empty_like(o)
    K._linear_backward(o, p[f"{a}.out_proj.weight"], _grad_through(dy, m), g[f"{a}.out_proj.weight"],
                       g[f"{a}.out_proj.bias"], do, K.DX_WRITE)
    dq = np.empty_like(o)                                                        # (B·L, d)
    dkv = np.empty((mem.shape[0], 2 * d), dy.dtype)                              # (B·S, 2d)
    heads_attention_backward(do, att, shape, dq, 0, dkv, 0, d)
    K._linear_backward(mem, p[f"{a}.kv_proj_weight"], dkv, g[f"{a}.kv_proj_weight"],
                       g[f"{a}.kv_proj_bias"], dmem, K.DX_ADD)
    dh = np.empty_like(h)
    K._linear_backward(h, p[f"{a}.q_proj_weight"], dq, g[f"{a}.q_proj_weight"],
                       g[f"{a}.q_proj_bias"], dh, K.DX_WRITE)
    layer_norm_backward(dh, ln, p[f"{pre}.norm2.weight"], dy, g[f"{pre}.norm2.weight"],
                        g[f"{pre}.norm2.bias"])


def ffn_block(p: Params, pre: str, norm: str, x: np.ndarray, drop: Dropout | None = None) -> tuple:
    """x ← x + Dropout(W₂ Dropout(ReLU(W₁ LN(x) + b₁)) + b₂) (position-wise: the same for
    every row)."""
    h, ln = layer_norm(x, p[f"{pre}.{norm}.weight"], p[f"{pre}.{norm}.bias"])   # (N, d)
    W1 = p[f"{pre}.linear1.weight"]
    f = np.empty((x.shape[0], W1.shape[1]), x.dtype)                             # (N, d_ff)
    K._linear(h, W1, p[f"{pre}.linear1.bias"], f, K.RELU)
    m_f = None if drop is None else drop.mask(f"{pre}.dropout", f.shape)
    if m_f is not None:
        f *= m_f                                                                 # (N, d_ff)
    m = residual_add(p, pre, "linear2", f, x, drop, _out_dropout(pre, norm))
    return ln, h, f, m_f, m


def ffn_block_backward(p: Params, g: Params, pre: str, norm: str, cache: tuple,
                       dx: np.ndarray) -> None:
    ln, h, f, m_f, m = cache
    df = np.empty_like(f)                                    # (N, d_ff), at the ReLU's input
    # f = ReLU(·) (⊙ m_f): DX_RELU zeroes where f ≤ 0, i.e. where the unit was off or dropped
    K._linear_backward(f, p[f"{pre}.linear2.weight"], _grad_through(dx, m), g[f"{pre}.linear2.weight"],
                       g[f"{pre}.linear2.bias"], df, K.DX_RELU)
    if m_f is not None:
        df *= m_f                                            # through the dropout after the ReLU
    dh = np.empty_like(h)                                    # (N, d)
    K._linear_backward(h, p[f"{pre}.linear1.weight"], df, g[f"{pre}.linear1.weight"],
                       g[f"{pre}.linear1.bias"], dh, K.DX_WRITE)
    layer_norm_backward(dh, ln, p[f"{pre}.{norm}.weight"], dx, g[f"{pre}.{norm}.weight"],
                        g[f"{pre}.{norm}.bias"])


# ---------------------------------------------------------------------------- whole layers


def encoder_layer(p: Params, i: int, x: np.ndarray, shape: Shape, mask: np.ndarray,
                  drop: Dropout | None = None) -> tuple:
    """``nn.TransformerEncoderLayer(norm_first=True)`` on x (B·S, d), in place."""
    pre = f"encoder.layers.{i}"
    sa = self_attention_block(p, pre, "norm1", x, shape, mask, drop)
    ff = ffn_block(p, pre, "norm2", x, drop)
    return sa, ff


def encoder_layer_backward(p: Params, g: Params, i: int, cache: tuple, dx: np.ndarray,
                           shape: Shape) -> None:
    pre = f"encoder.layers.{i}"
    sa, ff = cache
    ffn_block_backward(p, g, pre, "norm2", ff, dx)
    self_attention_block_backward(p, g, pre, "norm1", sa, dx, shape)


def decoder_layer(p: Params, i: int, y: np.ndarray, mem: np.ndarray, self_shape: Shape,
                  self_mask: np.ndarray, cross_shape: Shape, cross_mask: np.ndarray,
                  drop: Dropout | None = None) -> tuple:
    """``nn.TransformerDecoderLayer(norm_first=True)`` on y (B·T, d), in place."""
    pre = f"decoder.layers.{i}"
    sa = self_attention_block(p, pre, "norm1", y, self_shape, self_mask, drop)
    ca = cross_attention_block(p, pre, y, mem, cross_shape, cross_mask, drop)
    ff = ffn_block(p, pre, "norm3", y, drop)
    return sa, ca, ff


def decoder_layer_backward(p: Params, g: Params, i: int, cache: tuple, dy: np.ndarray,
                           mem: np.ndarray, dmem: np.ndarray, self_shape: Shape,
                           cross_shape: Shape) -> None:
    pre = f"decoder.layers.{i}"
    sa, ca, ff = cache
    ffn_block_backward(p, g, pre, "norm3", ff, dy)
    cross_attention_block_backward(p, g, pre, ca, dy, mem, dmem, cross_shape)
    self_attention_block_backward(p, g, pre, "norm1", sa, dy, self_shape)

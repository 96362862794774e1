"""Scaled dot-product, self-, cross- and multi-head attention (lecture §5–§7).

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V                    (Vaswani et al., 2017, eq. 1)

Row convention of the notes and of PyTorch: one token per row, Q = X W_Q with X (n, d) and
W_Q (d, d_k). Masks are boolean with True = may attend and broadcast to the scores (..., L, S),
exactly as ``torch.nn.functional.scaled_dot_product_attention(attn_mask=bool)``. A query row
with no allowed key gets all-zero weights and a zero output (recent PyTorch SDPA does the same
instead of returning NaN), so padded or fully masked queries contribute nothing.

Multi-head attention follows Vaswani et al. §3.2.2 / ``torch.nn.MultiheadAttention``: head i
uses columns [i·d_head, (i+1)·d_head) of the projected Q, K, V, the heads' outputs are
concatenated and multiplied by W_O; each head scales by 1/√d_head.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from engine._jit import jit
from engine._validate import (
    as_float,
    broadcast_mask,
    check_positive_int,
    check_same_dim,
    check_scalar,
    result_dtype,
    shape_str,
)
from engine.masks import causal_mask


@jit
def _sdpa(Q, K, V, mask, use_mask, scale, out, W):
    """Batched attention: Q (B, L, d_k), K (B, S, d_k), V (B, S, d_v), mask (B, L, S).

    Writes weights W (B, L, S) and outputs out (B, L, d_v); a row with no allowed key gets
    zero weights and a zero output.
    """
    B, L, d_k = Q.shape
    S = K.shape[1]
    d_v = V.shape[2]
    s = np.empty(S)  # one row of scores, float64
    z = np.empty(d_v)  # one output row, accumulated in float64 even for float32 inputs
    for b in range(B):
        for i in range(L):
            m = -np.inf
            for j in range(S):
                if use_mask and not mask[b, i, j]:
                    s[j] = -np.inf
                    continue
                acc = 0.0
                for c in range(d_k):
                    acc += Q[b, i, c] * K[b, j, c]
                s[j] = acc * scale  # score_ij = q_i · k_j / √d_k
                if s[j] > m:
                    m = s[j]
            for c in range(d_v):
                z[c] = 0.0
            if m == -np.inf:  # fully masked row: zero weights, zero output
                for j in range(S):
                    W[b, i, j] = 0.0
                for c in range(d_v):
                    out[b, i, c] = 0.0
                continue
            total = 0.0
            for j in range(S):
                e = 0.0 if s[j] == -np.inf else math.exp(s[j] - m)  # stable softmax
                s[j] = e
                total += e
            for j in range(S):
                a = s[j] / total  # α_ij
                W[b, i, j] = a
                if a != 0.0:
                    for c in range(d_v):
                        z[c] += a * V[b, j, c]  # z_i = Σ_j α_ij v_j
            for c in range(d_v):
                out[b, i, c] = z[c]


@jit(error_model="numpy")  # total ≥ 1 (the max's term): no zero-division check needed
def _softmax_rows_inplace(W, mask, use_mask, scale):
    """W (L, S) ← softmax(W · scale) row by row, in place; masked entries and rows with no
    allowed key → 0 (the softmax of :func:`engine.softmax._softmax_rows`, in W's dtype)."""
    L, S = W.shape
    for i in range(L):
        row = W[i]
        m = -np.inf
        for j in range(S):
            if use_mask and not mask[i, j]:
                row[j] = -np.inf
            else:
                row[j] = row[j] * scale
                if row[j] > m:
                    m = row[j]
        if m == -np.inf:                                    # nothing may be attended
            for j in range(S):
                row[j] = 0.0
            continue
        total = 0.0
        for j in range(S):
            e = math.exp(row[j] - m)                        # masked (−inf) → exactly 0
            row[j] = e
            total += e
        for j in range(S):
            row[j] = row[j] / total


@jit
def _sdpa_blas(Q, K, V, mask, use_mask, scale, out, W):
    """Same contract as :func:`_sdpa` for big inputs: the two products go to BLAS.

    W[b] = Q[b] K[b]ᵀ (BLAS), W[b] = softmax(W[b] · scale) row by row in place (masked rows
    → 0), out[b] = W[b] V[b] (BLAS). The n×n weights are
    materialised — this is the plain algorithm, just with fast matrix products, so that
    comparing it with the tiled kernel compares memory and algorithms rather than a scalar
    loop against BLAS.
    """
    for b in range(Q.shape[0]):
        np.dot(Q[b], K[b].T, W[b])                          # (L, S) raw scores Q Kᵀ
        _softmax_rows_inplace(W[b], mask[b if use_mask else 0], use_mask, scale)
        np.dot(W[b], V[b], out[b])                          # (L, d_v)


BLAS_MIN_WORK = 1 << 18
"""L·S·d_k from which :func:`attention` uses the BLAS kernel (smaller inputs keep the exact
float64-accumulating loop, which is also what the traces' small examples use)."""


def readonly(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr`` (the caller's array keeps its flags).

    numba compiles a kernel once per argument type, and read-only is part of the type:
    ``np.broadcast_to`` views are read-only, copies are not, so without this the same kernel
    would be compiled twice (a second or more each, cold) depending on whether an input
    happened to be broadcast. Every array the attention kernels only read goes through here.
    """
    view = arr.view()
    view.flags.writeable = False
    return view


def _batched(arr: np.ndarray, name: str, expected: str) -> np.ndarray:
    if arr.ndim < 2:
        raise ValueError(f"{name}: expected shape {expected}, got shape {shape_str(arr.shape)}")
    return arr


class PreparedAttention(NamedTuple):
    """Checked attention inputs flattened to one batch axis (what the kernels take)."""

    Q: np.ndarray  # (B, L, d_k)
    K: np.ndarray  # (B, S, d_k)
    V: np.ndarray  # (B, S, d_v)
    mask: np.ndarray  # (B, L, S), or (1, 1, 1) when use_mask is False
    use_mask: bool
    scale: float
    batch: tuple[int, ...]  # the broadcast leading dims, B = prod(batch)
    dtype: np.dtype
    input_shapes: tuple[tuple[int, ...], ...]  # Q's, K's and V's shapes as given


def prepare_attention(Q: object, K: object, V: object, mask: object | None,
                      scale: float | None) -> PreparedAttention:
    """Validate and broadcast :func:`attention`'s arguments (shared with its backward)."""
    q = _batched(as_float(Q, "Q"), "Q", "(..., L, d_k)")
    k = _batched(as_float(K, "K"), "K", "(..., S, d_k)")
    v = _batched(as_float(V, "V"), "V", "(..., S, d_v)")
    L, d_k = q.shape[-2:]
    S = k.shape[-2]
    check_same_dim(k, -1, d_k, "K", ("...", "S", d_k), f"keys need the queries' d_k = {d_k}")
    check_same_dim(v, -2, S, "V", ("...", S, "d_v"), f"one value per key, S = {S}")
    sc = 1.0 / math.sqrt(d_k) if scale is None else check_scalar(
        scale, "scale", low=0.0, low_open=True)
    batch_shapes = [q.shape[:-2], k.shape[:-2], v.shape[:-2]]
    m = None
    if mask is not None:
        m = np.asarray(mask)
        if m.ndim > 2:
            batch_shapes.append(m.shape[:-2])
    try:
        batch = np.broadcast_shapes(*batch_shapes)
    except ValueError:
        raise ValueError(
            "Q, K, V: leading batch dims do not broadcast: "
            + ", ".join(f"{n} {shape_str(a.shape)}" for n, a in (("Q", q), ("K", k), ("V", v)))
            + (f", mask {shape_str(m.shape)}" if m is not None and m.ndim > 2 else "")
        ) from None
    dt = result_dtype(q, k, v)
    nb = int(np.prod(batch, dtype=np.int64))
    q3 = np.ascontiguousarray(np.broadcast_to(q, batch + q.shape[-2:]), dtype=dt).reshape(nb, L, d_k)
    k3 = np.ascontiguousarray(np.broadcast_to(k, batch + k.shape[-2:]), dtype=dt).reshape(nb, S, d_k)
    v3 = np.ascontiguousarray(np.broadcast_to(v, batch + v.shape[-2:]), dtype=dt).reshape(nb, S, -1)
    if m is None:
        m3 = np.ones((1, 1, 1), dtype=np.bool_)
    else:
        m3 = broadcast_mask(m, batch + (L, S)).reshape(nb, L, S)
    return PreparedAttention(readonly(q3), readonly(k3), readonly(v3), readonly(m3),
                             m is not None, sc, batch, dt, (q.shape, k.shape, v.shape))


def attention(Q: object, K: object, V: object, mask: object | None = None,
              scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention softmax(Q Kᵀ · scale) V with an optional boolean mask.

    Args:
        Q: queries (..., L, d_k).
        K: keys (..., S, d_k).
        V: values (..., S, d_v). Leading batch dims of Q, K, V (and mask) broadcast.
        mask: bool broadcastable to (..., L, S), True = may attend; None = attend everywhere.
        scale: score multiplier, default 1/√d_k; must be > 0.

    Returns:
        ``(out, weights)``: out (..., L, d_v) and weights (..., L, S). Each weights row is
        non-negative and sums to 1, except a fully masked row, which is all zeros (and its
        output is zero).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf, empty input, a non-boolean or
            non-broadcastable mask, or scale <= 0.
    """
    q3, k3, v3, m3, use_mask, sc, batch, dt, _ = prepare_attention(Q, K, V, mask, scale)
    nb, L, d_k = q3.shape
    S = k3.shape[1]
    out = np.empty((nb, L, v3.shape[2]), dtype=dt)  # (B, L, d_v)
    weights = np.empty((nb, L, S), dtype=dt)  # (B, L, S)
    kernel = _sdpa_blas if L * S * d_k >= BLAS_MIN_WORK else _sdpa
    kernel(q3, k3, v3, m3, use_mask, dt.type(sc), out, weights)
    return out.reshape(batch + (L, v3.shape[2])), weights.reshape(batch + (L, S))


def _project(X: np.ndarray, W: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Row convention projection X (n, d) W (d, d') → (n, d') in dtype ``dt``."""
    return np.ascontiguousarray(X.astype(dt, copy=False) @ W.astype(dt, copy=False))


def _weight(W: object, name: str, rows: int, rows_name: str, cols: str) -> np.ndarray:
    w = as_float(W, name, ndim=2)
    check_same_dim(w, 0, rows, name, (rows, cols), f"it multiplies rows of width {rows_name} = {rows}")
    return w


def self_attention(X: object, W_Q: object, W_K: object, W_V: object, mask: object | None = None,
                   causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention: queries, keys and values all come from the same sequence X.

    Q = X W_Q, K = X W_K, V = X W_V, then :func:`attention` with scale 1/√d_k.

    Args:
        X: token embeddings (n, d), one token per row.
        W_Q: (d, d_k) query projection.
        W_K: (d, d_k) key projection.
        W_V: (d, d_v) value projection.
        mask: optional bool broadcastable to (n, n), True = may attend.
        causal: also forbid attending to later tokens (j > i), as in a GPT decoder.

    Returns:
        ``(out, weights)``: out (n, d_v), weights (n, n).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf or empty input.
    """
    x = as_float(X, "X", ndim=2)
    n, d = x.shape
    wq = _weight(W_Q, "W_Q", d, "d", "d_k")
    wk = _weight(W_K, "W_K", d, "d", "d_k")
    check_same_dim(wk, 1, wq.shape[1], "W_K", (d, wq.shape[1]),
                   f"keys need the queries' d_k = {wq.shape[1]}")
    wv = _weight(W_V, "W_V", d, "d", "d_v")
    dt = result_dtype(x, wq, wk, wv)
    m = None if mask is None else broadcast_mask(mask, (n, n), expected="(n, n)")
    if causal:
        c = causal_mask(n)
        m = c if m is None else (m & c)
    return attention(_project(x, wq, dt), _project(x, wk, dt), _project(x, wv, dt), mask=m)


def cross_attention(S_dec: object, H_enc: object, W_Q: object, W_K: object, W_V: object,
                    mask: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cross-attention: queries from decoder states, keys and values from encoder states.

    Q = S_dec W_Q, K = H_enc W_K, V = H_enc W_V, then :func:`attention` (scale 1/√d_k).

    Args:
        S_dec: decoder states (L, d_s), one per target step.
        H_enc: encoder states (S, d_h), one per source token.
        W_Q: (d_s, d_k) query projection.
        W_K: (d_h, d_k) key projection.
        W_V: (d_h, d_v) value projection.
        mask: optional bool broadcastable to (L, S), e.g. a source padding mask (S,).

    Returns:
        ``(out, weights)``: contexts out (L, d_v), weights (L, S) (rows = target steps,
        columns = source tokens, as in an alignment heatmap).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf or empty input.
    """
    s_dec = as_float(S_dec, "S_dec", ndim=2)
    h_enc = as_float(H_enc, "H_enc", ndim=2)
    wq = _weight(W_Q, "W_Q", s_dec.shape[1], "d_s", "d_k")
    wk = _weight(W_K, "W_K", h_enc.shape[1], "d_h", "d_k")
    check_same_dim(wk, 1, wq.shape[1], "W_K", (h_enc.shape[1], wq.shape[1]),
                   f"keys need the queries' d_k = {wq.shape[1]}")
    wv = _weight(W_V, "W_V", h_enc.shape[1], "d_h", "d_v")
    dt = result_dtype(s_dec, h_enc, wq, wk, wv)
    L, S = s_dec.shape[0], h_enc.shape[0]
    m = None if mask is None else broadcast_mask(mask, (L, S), expected="(L, S)")
    return attention(_project(s_dec, wq, dt), _project(h_enc, wk, dt), _project(h_enc, wv, dt),
                     mask=m)


def multi_head_attention(X_q: object, X_kv: object, W_Q: object, W_K: object, W_V: object,
                         W_O: object, num_heads: int,
                         mask: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention (Vaswani et al., 2017 §3.2.2), self- or cross- by the inputs.

    Head i attends with Q_i = (X_q W_Q)[:, i·d_head:(i+1)·d_head] and likewise K_i, V_i,
    scale 1/√d_head; out = concat(head_1, ..., head_h) W_O. Pass the same array as X_q and
    X_kv for self-attention.

    Args:
        X_q: query-side inputs (L, d_q_in).
        X_kv: key/value-side inputs (S, d_kv_in).
        W_Q: (d_q_in, d_model).
        W_K: (d_kv_in, d_model).
        W_V: (d_kv_in, d_model).
        W_O: (d_model, d_out), usually d_out = d_model.
        num_heads: h; d_model must be divisible by h (d_head = d_model / h).
        mask: optional bool broadcastable to (h, L, S) — e.g. (L, S) shared by every head.

    Returns:
        ``(out, weights)``: out (L, d_out) and per-head weights (h, L, S).

    Raises:
        ValueError: on wrong or mismatched shapes, d_model % num_heads != 0, NaN/inf or
            empty input.
    """
    xq, xkv, wq, wk, wv, wo, h, m, dt = prepare_multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O,
                                                           num_heads, mask)
    L, d_model = xq.shape[0], wq.shape[1]
    Qh = split_heads(_project(xq, wq, dt), h)  # (h, L, d_head)
    Kh = split_heads(_project(xkv, wk, dt), h)  # (h, S, d_head)
    Vh = split_heads(_project(xkv, wv, dt), h)  # (h, S, d_head)
    out_h, weights = attention(Qh, Kh, Vh, mask=m)  # (h, L, d_head), (h, L, S)
    concat = out_h.transpose(1, 0, 2).reshape(L, d_model)  # (L, d_model)
    return concat @ wo.astype(dt, copy=False), weights  # (L, d_out)


def split_heads(P: np.ndarray, h: int) -> np.ndarray:
    """(n, d_model) → (h, n, d_head): head i takes columns [i·d_head, (i+1)·d_head)."""
    n, d_model = P.shape
    return np.ascontiguousarray(P.reshape(n, h, d_model // h).transpose(1, 0, 2))


def prepare_multi_head(X_q: object, X_kv: object, W_Q: object, W_K: object, W_V: object,
                       W_O: object, num_heads: int, mask: object | None) -> tuple:
    """Check :func:`multi_head_attention`'s arguments (shared with its backward).

    Returns ``(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask (h, L, S) or None, dtype)``.
    """
    xq = as_float(X_q, "X_q", ndim=2)
    xkv = as_float(X_kv, "X_kv", ndim=2)
    h = check_positive_int(num_heads, "num_heads")
    wq = _weight(W_Q, "W_Q", xq.shape[1], "d_q_in", "d_model")
    d_model = wq.shape[1]
    if d_model % h:
        raise ValueError(f"num_heads: d_model = {d_model} (W_Q's columns) is not divisible by "
                         f"num_heads = {h}; choose a divisor of {d_model}")
    wk = as_float(W_K, "W_K", shape=(xkv.shape[1], d_model))
    wv = as_float(W_V, "W_V", shape=(xkv.shape[1], d_model))
    wo = as_float(W_O, "W_O", ndim=2)
    check_same_dim(wo, 0, d_model, "W_O", (d_model, "d_out"),
                   f"it multiplies the concatenated heads, width d_model = {d_model}")
    dt = result_dtype(xq, xkv, wq, wk, wv, wo)
    L, S = xq.shape[0], xkv.shape[0]
    m = None if mask is None else broadcast_mask(mask, (h, L, S), expected="(h, L, S)")
    return xq, xkv, wq, wk, wv, wo, h, m, dt

"""A slow, obviously-right NumPy Transformer: one unpadded sequence at a time, from the formulas.

Written from Vaswani et al. (2017) and the PyTorch documentation of ``nn.LayerNorm``,
``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``
with ``norm_first=True`` (not from the engine's code): explicit per-head loops over the
naive attention of :mod:`tests.reference`, no batching, no padding, no caches. Parameters are
read by the names and input-major layout that ``engine.transformer.model`` documents.

Dropout: every layer function takes ``masks``, the inverted-dropout masks of that layer by
PyTorch's module names (``{layer}.self_attn`` (h, L, S) on the attention weights,
``{layer}.dropout1``/``2``/``3`` (L, d) on the sublayer outputs, ``{layer}.dropout`` (L, d_ff)
after the FFN's ReLU), already scaled by 1/(1 − p); None drops nothing.
"""

from __future__ import annotations

import math

import numpy as np

import reference as ref


def layer_norm(x, g, b, eps=1e-5):
    """(x − mean) / sqrt(biased var + ε) · g + b over the last axis."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        mu = sum(x[i]) / x.shape[1]
        var = sum((v - mu) ** 2 for v in x[i]) / x.shape[1]
        out[i] = (x[i] - mu) / math.sqrt(var + eps) * g + b
    return out


def mha(x_q, x_kv, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, heads, mask=None, drop=None):
    """Multi-head attention with biases; returns (out (L, d), weights (h, L, S)). ``drop``
    (h, L, S) multiplies each head's weights before they weight the values."""
    Q = x_q @ W_q + b_q
    K = x_kv @ W_k + b_k
    V = x_kv @ W_v + b_v
    dh = Q.shape[1] // heads
    outs, weights = [], []
    for h in range(heads):
        cols = slice(h * dh, (h + 1) * dh)
        o, w = ref.attention_2d(Q[:, cols], K[:, cols], V[:, cols], mask)
        if drop is not None:
            o = (w * drop[h]) @ V[:, cols]
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=1) @ W_o + b_o, np.stack(weights)


def _drop(masks, name, x):
    return x if masks is None else x * masks[name]


def _self_attn(p, pre, x, heads, mask, drop=None):
    W, bias = p[f"{pre}.in_proj_weight"], p[f"{pre}.in_proj_bias"]
    d = x.shape[1]
    return mha(x, x, W[:, :d], bias[:d], W[:, d:2 * d], bias[d:2 * d], W[:, 2 * d:], bias[2 * d:],
               p[f"{pre}.out_proj.weight"], p[f"{pre}.out_proj.bias"], heads, mask, drop)


def _ffn(p, pre, x, masks=None):
    hidden = np.maximum(x @ p[f"{pre}.linear1.weight"] + p[f"{pre}.linear1.bias"], 0.0)
    hidden = _drop(masks, f"{pre}.dropout", hidden)
    return hidden @ p[f"{pre}.linear2.weight"] + p[f"{pre}.linear2.bias"]


def _norm(p, name, x):
    return layer_norm(x, p[f"{name}.weight"], p[f"{name}.bias"])


def encoder_layer(p, i, x, heads, masks=None):
    """x + SA(LN1 x), then + FFN(LN2 x); returns (x, self-attention weights)."""
    pre = f"encoder.layers.{i}"
    w_drop = None if masks is None else masks[f"{pre}.self_attn"]
    a, w = _self_attn(p, f"{pre}.self_attn", _norm(p, f"{pre}.norm1", x), heads, None, w_drop)
    x = x + _drop(masks, f"{pre}.dropout1", a)
    return x + _drop(masks, f"{pre}.dropout2", _ffn(p, pre, _norm(p, f"{pre}.norm2", x), masks)), w


def decoder_layer(p, i, y, mem, heads, masks=None):
    """y + causal SA(LN1 y), + cross-attention(LN2 y, mem), + FFN(LN3 y)."""
    pre = f"decoder.layers.{i}"
    T = y.shape[0]
    a, w_self = _self_attn(p, f"{pre}.self_attn", _norm(p, f"{pre}.norm1", y), heads,
                           ref.causal_mask(T), None if masks is None else masks[f"{pre}.self_attn"])
    y = y + _drop(masks, f"{pre}.dropout1", a)
    c = f"{pre}.multihead_attn"
    d = y.shape[1]
    kv_w, kv_b = p[f"{c}.kv_proj_weight"], p[f"{c}.kv_proj_bias"]
    a, w_cross = mha(_norm(p, f"{pre}.norm2", y), mem, p[f"{c}.q_proj_weight"], p[f"{c}.q_proj_bias"],
                     kv_w[:, :d], kv_b[:d], kv_w[:, d:], kv_b[d:], p[f"{c}.out_proj.weight"],
                     p[f"{c}.out_proj.bias"], heads, None,
                     None if masks is None else masks[f"{pre}.multihead_attn"])
    y = y + _drop(masks, f"{pre}.dropout2", a)
    return (y + _drop(masks, f"{pre}.dropout3", _ffn(p, pre, _norm(p, f"{pre}.norm3", y), masks)),
            w_self, w_cross)


def embed(table, tokens, positions, scaled=True):
    """E[token] · √d (or unscaled) plus the sinusoidal table when ``positions``."""
    d = table.shape[1]
    x = np.array([table[t] * (math.sqrt(d) if scaled else 1.0) for t in tokens])
    if positions:
        x = x + ref.sinusoidal_encoding(len(tokens), d)
    return x


def logits(p, cfg, src, tgt_in, masks=None):
    """Logits (T, V) of one sequence: src (S,) real tokens only, decoder inputs tgt_in (T,);
    ``masks``: every layer's dropout masks for this sequence (None: no dropout)."""
    pos = cfg.positions == "sinusoidal"
    x = embed(p["src_embed.weight"], src, pos, cfg.scale_embeddings)
    for i in range(cfg.num_encoder_layers):
        x, _ = encoder_layer(p, i, x, cfg.num_heads, masks)
    mem = _norm(p, "encoder.norm", x)
    y = embed(p["tgt_embed.weight"], tgt_in, pos, cfg.scale_embeddings)
    for i in range(cfg.num_decoder_layers):
        y, _, _ = decoder_layer(p, i, y, mem, cfg.num_heads, masks)
    z = _norm(p, "decoder.norm", y)
    W = p["tgt_embed.weight"].T if cfg.tie_embeddings else p["out.weight"]
    return z @ W + p["out.bias"]


def sequence_masks(masks, b, B, S, T, heads):
    """Sequence b's part of a padded batch's masks: weights (B·h, L, S_max) → (h, L_b, S_b),
    rows (B·L_max, ·) → (L_b, ·), with L_b, S_b its real lengths (S, T: (B,) lengths)."""
    out = {}
    for name, m in masks.items():
        kind = "decoder" if name.startswith("decoder") else "encoder"
        rows = T[b] if kind == "decoder" else S[b]
        if m.ndim == 3:                                          # attention weights
            cols = S[b] if name.endswith("multihead_attn") or kind == "encoder" else T[b]
            out[name] = m.reshape(B, heads, m.shape[1], m.shape[2])[b, :, :rows, :cols]
        else:
            out[name] = m.reshape(B, -1, m.shape[1])[b, :rows]
    return out


def batch_loss(p, cfg, src, src_len, tgt, tgt_len, label_smoothing=0.0, bos=1, masks=None):
    """Mean cross-entropy over every real target token of a padded batch, one sequence at a
    time; ``masks``: the batch's dropout masks by name (as the engine draws them), or None."""
    total, count = 0.0, 0
    for b in range(src.shape[0]):
        t = [int(v) for v in tgt[b, :tgt_len[b]]]
        mb = None if masks is None else sequence_masks(masks, b, src.shape[0], src_len, tgt_len,
                                                       cfg.num_heads)
        z = logits(p, cfg, [int(v) for v in src[b, :src_len[b]]], [bos] + t[:-1], mb)
        total += ref.cross_entropy(z, t, reduction="sum", label_smoothing=label_smoothing)
        count += len(t)
    return total / count

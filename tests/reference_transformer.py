"""A slow, obviously-right NumPy Transformer: one unpadded sequence at a time, from the formulas.

Written from Vaswani et al. (2017) and the PyTorch documentation of ``nn.LayerNorm``,
``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``
with ``norm_first=True`` (not from the engine's code): explicit per-head loops over the
naive attention of :mod:`tests.reference`, no batching, no padding, no caches. Parameters are
read by the names and input-major layout that ``engine.transformer.model`` documents.
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


def mha(x_q, x_kv, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, heads, mask=None):
    """Multi-head attention with biases; returns (out (L, d), weights (h, L, S))."""
    Q = x_q @ W_q + b_q
    K = x_kv @ W_k + b_k
    V = x_kv @ W_v + b_v
    dh = Q.shape[1] // heads
    outs, weights = [], []
    for h in range(heads):
        cols = slice(h * dh, (h + 1) * dh)
        o, w = ref.attention_2d(Q[:, cols], K[:, cols], V[:, cols], mask)
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=1) @ W_o + b_o, np.stack(weights)


def _self_attn(p, pre, x, heads, mask):
    W, bias = p[f"{pre}.in_proj_weight"], p[f"{pre}.in_proj_bias"]
    d = x.shape[1]
    return mha(x, x, W[:, :d], bias[:d], W[:, d:2 * d], bias[d:2 * d], W[:, 2 * d:], bias[2 * d:],
               p[f"{pre}.out_proj.weight"], p[f"{pre}.out_proj.bias"], heads, mask)


def _ffn(p, pre, x):
    hidden = np.maximum(x @ p[f"{pre}.linear1.weight"] + p[f"{pre}.linear1.bias"], 0.0)
    return hidden @ p[f"{pre}.linear2.weight"] + p[f"{pre}.linear2.bias"]


def _norm(p, name, x):
    return layer_norm(x, p[f"{name}.weight"], p[f"{name}.bias"])


def encoder_layer(p, i, x, heads):
    """x + SA(LN1 x), then + FFN(LN2 x); returns (x, self-attention weights)."""
    pre = f"encoder.layers.{i}"
    a, w = _self_attn(p, f"{pre}.self_attn", _norm(p, f"{pre}.norm1", x), heads, None)
    x = x + a
    return x + _ffn(p, pre, _norm(p, f"{pre}.norm2", x)), w


def decoder_layer(p, i, y, mem, heads):
    """y + causal SA(LN1 y), + cross-attention(LN2 y, mem), + FFN(LN3 y)."""
    pre = f"decoder.layers.{i}"
    T = y.shape[0]
    a, w_self = _self_attn(p, f"{pre}.self_attn", _norm(p, f"{pre}.norm1", y), heads,
                           ref.causal_mask(T))
    y = y + a
    c = f"{pre}.multihead_attn"
    d = y.shape[1]
    kv_w, kv_b = p[f"{c}.kv_proj_weight"], p[f"{c}.kv_proj_bias"]
    a, w_cross = mha(_norm(p, f"{pre}.norm2", y), mem, p[f"{c}.q_proj_weight"], p[f"{c}.q_proj_bias"],
                     kv_w[:, :d], kv_b[:d], kv_w[:, d:], kv_b[d:], p[f"{c}.out_proj.weight"],
                     p[f"{c}.out_proj.bias"], heads)
    y = y + a
    return y + _ffn(p, pre, _norm(p, f"{pre}.norm3", y)), w_self, w_cross


def embed(table, tokens, positions, scaled=True):
    """E[token] · √d (or unscaled) plus the sinusoidal table when ``positions``."""
    d = table.shape[1]
    x = np.array([table[t] * (math.sqrt(d) if scaled else 1.0) for t in tokens])
    if positions:
        x = x + ref.sinusoidal_encoding(len(tokens), d)
    return x


def logits(p, cfg, src, tgt_in):
    """Logits (T, V) of one sequence: src (S,) real tokens only, decoder inputs tgt_in (T,)."""
    pos = cfg.positions == "sinusoidal"
    x = embed(p["src_embed.weight"], src, pos, cfg.scale_embeddings)
    for i in range(cfg.num_encoder_layers):
        x, _ = encoder_layer(p, i, x, cfg.num_heads)
    mem = _norm(p, "encoder.norm", x)
    y = embed(p["tgt_embed.weight"], tgt_in, pos, cfg.scale_embeddings)
    for i in range(cfg.num_decoder_layers):
        y, _, _ = decoder_layer(p, i, y, mem, cfg.num_heads)
    z = _norm(p, "decoder.norm", y)
    W = p["tgt_embed.weight"].T if cfg.tie_embeddings else p["out.weight"]
    return z @ W + p["out.bias"]


def batch_loss(p, cfg, src, src_len, tgt, tgt_len, label_smoothing=0.0, bos=1):
    """Mean cross-entropy over every real target token of a padded batch, one sequence at a time."""
    total, count = 0.0, 0
    for b in range(src.shape[0]):
        t = [int(v) for v in tgt[b, :tgt_len[b]]]
        z = logits(p, cfg, [int(v) for v in src[b, :src_len[b]]], [bos] + t[:-1])
        total += ref.cross_entropy(z, t, reduction="sum", label_smoothing=label_smoothing)
        count += len(t)
    return total / count

"""The whole encoder-decoder pass: embeddings, N encoder layers, N decoder layers, output.

:func:`forward` runs the model on a padded batch with the decoder fed the whole (shifted)
target at once, as in training (the causal mask keeps step t from seeing later steps), and
returns the logits plus everything :func:`backward` needs. Masks (True = may attend):

    encoder self-attention     key j of sequence b is real: j < src_len[b]     (B·h, S, S)
    decoder self-attention     causal, j ≤ i                                   (B·h, T, T)
    cross-attention            source key j is real: j < src_len[b]            (B·h, T, S)

Target padding needs no mask: padded steps come after the real ones, the causal mask already
hides them from real steps, and the loss ignores their outputs.

``drop`` (a :class:`engine.transformer.dropout.Dropout`) makes it a training pass with
dropout; without it (the default, and always when decoding) nothing is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.transformer import _kernels as K
from engine.transformer.dropout import Dropout
from engine.transformer.layers import (
    Shape,
    decoder_layer,
    decoder_layer_backward,
    encoder_layer,
    encoder_layer_backward,
    layer_norm,
    layer_norm_backward,
)
from engine.transformer.model import Transformer


def key_mask(src_len: np.ndarray, H: int, L: int, S: int) -> np.ndarray:
    """(B·h, L, S): query rows of sequence b may attend to its real keys j < src_len[b]."""
    real = np.arange(S)[None, :] < src_len[:, None]                          # (B, S)
    B = real.shape[0]
    return np.ascontiguousarray(np.broadcast_to(real[:, None, None, :], (B, H, L, S))).reshape(B * H, L, S)


def causal_mask_heads(B: int, H: int, T: int) -> np.ndarray:
    """(B·h, T, T): step i may attend to steps j ≤ i (top-left aligned, as PyTorch)."""
    c = np.tril(np.ones((T, T), np.bool_))                                   # (T, T)
    return np.ascontiguousarray(np.broadcast_to(c, (B * H, T, T)))


def check_length(model: Transformer, n: int, name: str) -> None:
    if n > model.config.max_len:
        raise ValueError(f"{name}: length {n} exceeds the model's max_len = {model.config.max_len}; "
                         "build the model with a larger max_len")


@dataclass
class ForwardCache:
    """What the backward pass reads; ``attention`` exposes the weights per layer."""

    src: np.ndarray
    tgt_in: np.ndarray
    enc_shape: Shape
    self_shape: Shape
    cross_shape: Shape
    enc: list
    enc_norm: tuple
    mem: np.ndarray
    dec: list
    dec_norm: tuple
    z: np.ndarray
    W_out: np.ndarray

    def attention(self) -> dict[str, list[np.ndarray]]:
        """Per layer, the weights (B, h, L, S) of encoder self-, decoder self- and cross-attention."""
        def heads(w: np.ndarray, shape: Shape) -> np.ndarray:
            return w.reshape(shape.B, shape.H, w.shape[1], w.shape[2])
        return {
            "encoder": [heads(sa[2].weights, self.enc_shape) for sa, _ in self.enc],
            "decoder": [heads(sa[2].weights, self.self_shape) for sa, _, _ in self.dec],
            "cross": [heads(ca[2].weights, self.cross_shape) for _, ca, _ in self.dec],
        }


def embed(model: Transformer, table: str, tokens: np.ndarray) -> np.ndarray:
    """E[token] · √d (or · 1) (+ PE[position]) for tokens (B, L) → (B·L, d)."""
    c = model.config
    x = np.empty((tokens.size, c.d_model), c.np_dtype)                      # (B·L, d)
    K._embed(model.params[table], tokens, c.embed_scale, model.pe,
             c.positions == "sinusoidal", x)
    return x


def output_weight(model: Transformer) -> np.ndarray:
    """W_out (d, V): its own matrix, or a contiguous copy of E_tgtᵀ when tied."""
    p = model.params
    if model.config.tie_embeddings:
        return np.ascontiguousarray(p["tgt_embed.weight"].T)
    return p["out.weight"]


def encode(model: Transformer, src: np.ndarray, src_len: np.ndarray,
           drop: Dropout | None = None) -> tuple[np.ndarray, list, tuple, Shape]:
    """The encoder: memory (B·S, d) = LN_enc(layers(embed(src))), with the layers' caches."""
    c, p = model.config, model.params
    B, S = src.shape
    shape = Shape(B, S, S, c.num_heads, c.d_model)
    mask = key_mask(src_len, c.num_heads, S, S)                              # (B·h, S, S)
    x = embed(model, "src_embed.weight", src)                                # (B·S, d)
    caches = [encoder_layer(p, i, x, shape, mask, drop) for i in range(c.num_encoder_layers)]
    mem, norm = layer_norm(x, p["encoder.norm.weight"], p["encoder.norm.bias"])
    return mem, caches, norm, shape


def decode_all(model: Transformer, mem: np.ndarray, src_len: np.ndarray, tgt_in: np.ndarray,
               drop: Dropout | None = None) -> tuple[np.ndarray, list, tuple, np.ndarray, Shape, Shape]:
    """The decoder on every step at once: logits (B·T, V) for inputs tgt_in (B, T) given the
    memory (B·S, d); also its caches (layers, final norm, z = LN_dec(y)) and shapes."""
    c, p = model.config, model.params
    B, T = tgt_in.shape
    S = mem.shape[0] // B
    self_shape = Shape(B, T, T, c.num_heads, c.d_model)
    cross_shape = Shape(B, T, S, c.num_heads, c.d_model)
    self_mask = causal_mask_heads(B, c.num_heads, T)                         # (B·h, T, T)
    cross_mask = key_mask(src_len, c.num_heads, T, S)                        # (B·h, T, S)
    y = embed(model, "tgt_embed.weight", tgt_in)                             # (B·T, d)
    dec = [decoder_layer(p, i, y, mem, self_shape, self_mask, cross_shape, cross_mask, drop)
           for i in range(c.num_decoder_layers)]
    z, dec_norm = layer_norm(y, p["decoder.norm.weight"], p["decoder.norm.bias"])   # (B·T, d)
    logits = np.empty((B * T, c.vocab_size), c.np_dtype)                    # (B·T, V)
    K._linear(z, output_weight(model), p["out.bias"], logits, K.WRITE)
    return logits, dec, dec_norm, z, self_shape, cross_shape


def forward(model: Transformer, src: np.ndarray, src_len: np.ndarray, tgt_in: np.ndarray,
            drop: Dropout | None = None) -> tuple[np.ndarray, ForwardCache]:
    """Logits (B·T, V) for decoder inputs tgt_in (B, T), and the cache for :func:`backward`.

    ``src`` (B, S), ``src_len`` (B,), ``tgt_in`` must be validated int64 arrays; ``drop``
    the pass's dropout masks (None: evaluation, nothing dropped).
    """
    mem, enc, enc_norm, enc_shape = encode(model, src, src_len, drop)
    logits, dec, dec_norm, z, self_shape, cross_shape = decode_all(model, mem, src_len, tgt_in,
                                                                   drop)
    return logits, ForwardCache(src, tgt_in, enc_shape, self_shape, cross_shape, enc, enc_norm,
                                mem, dec, dec_norm, z, output_weight(model))


def backward(model: Transformer, cache: ForwardCache, dlogits: np.ndarray, grad: np.ndarray) -> None:
    """dL/dθ into ``grad`` (shaped like theta, overwritten) given dL/dlogits (B·T, V)."""
    c, p = model.config, model.params
    grad[:] = 0.0
    g = model.views(grad)
    dz = np.empty_like(cache.z)                                              # (B·T, d)
    if c.tie_embeddings:
        gW = np.empty_like(cache.W_out)                                      # (d, V)
        K._linear_backward(cache.z, cache.W_out, dlogits, gW, g["out.bias"], dz, K.DX_WRITE)
        g["tgt_embed.weight"] += gW.T                                        # logits = z E_tgtᵀ
    else:
        K._linear_backward(cache.z, cache.W_out, dlogits, g["out.weight"], g["out.bias"], dz,
                           K.DX_WRITE)
    dy = np.zeros_like(cache.z)                                              # (B·T, d)
    layer_norm_backward(dz, cache.dec_norm, p["decoder.norm.weight"], dy, g["decoder.norm.weight"],
                        g["decoder.norm.bias"])
    dmem = np.zeros_like(cache.mem)                                          # (B·S, d)
    for i in range(c.num_decoder_layers - 1, -1, -1):
        decoder_layer_backward(p, g, i, cache.dec[i], dy, cache.mem, dmem, cache.self_shape,
                               cache.cross_shape)
    scale = c.embed_scale
    K._embed_backward(dy, cache.tgt_in, scale, g["tgt_embed.weight"])
    dx = np.zeros_like(cache.mem)                                            # (B·S, d)
    layer_norm_backward(dmem, cache.enc_norm, p["encoder.norm.weight"], dx, g["encoder.norm.weight"],
                        g["encoder.norm.bias"])
    for i in range(c.num_encoder_layers - 1, -1, -1):
        encoder_layer_backward(p, g, i, cache.enc[i], dx, cache.enc_shape)
    K._embed_backward(dx, cache.src, scale, g["src_embed.weight"])

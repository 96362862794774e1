"""Inference with a trained Transformer: batched greedy decoding with a key-value cache, the
per-head attention of one example, and a step model for :mod:`engine.decoding`.

Greedy decoding is free running (lecture §10): each step's argmax is fed back as the next
input. The encoder runs once; each decoder layer keeps the projected keys and values of the
steps already taken (a KV cache), so step t costs one new row per layer instead of
re-running the whole prefix. Because the decoder is causal, feeding the same tokens all at
once (:func:`attention_maps`) gives exactly the weights the steps used one at a time.
"""

from __future__ import annotations

import numpy as np

from engine._validate import as_int, check_positive_int
from engine.seq2seq.decode import check_sources, check_step_inputs
from engine.softmax import log_softmax
from engine.transformer import _kernels as K
from engine.transformer.layers import Shape, heads_attention, layer_norm
from engine.transformer.model import Transformer
from engine.transformer.network import check_length, decode_all, encode, forward, key_mask, output_weight
from engine.transformer.train import BOS


def sources(model: Transformer, src: object, src_len: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validated (B, S) int64 sources and (B,) lengths (default: S for every row), as the
    seq2seq's decoder checks them, and no longer than the model's ``max_len``."""
    s, lens = check_sources(model.config.vocab_size, src, src_len)
    check_length(model, s.shape[1], "src")
    return s, lens


def greedy_decode(model: Transformer, src: object, steps: int,
                  src_len: object | None = None) -> np.ndarray:
    """Free-running greedy decoding of ``steps`` tokens for a batch of sources.

    Args:
        model: a trained model.
        src: (B, S) source tokens (or one (S,) sequence).
        steps: tokens to generate (EOS does not stop it; compare up to your length).
        src_len: (B,) real lengths, default S for all.

    Returns:
        (B, steps) int64 tokens.
    """
    c, p = model.config, model.params
    s, lens = sources(model, src, src_len)
    steps = check_positive_int(steps, "steps")
    check_length(model, steps, "steps")
    B, S = s.shape
    d, H, V = c.d_model, c.num_heads, c.vocab_size
    dt = c.np_dtype
    mem = encode(model, s, lens)[0]                                          # (B·S, d)
    cross_kv = []                                                            # per layer (B·S, 2d)
    for i in range(c.num_decoder_layers):
        a = f"decoder.layers.{i}.multihead_attn"
        kv = np.empty((B * S, 2 * d), dt)
        K._linear(mem, p[f"{a}.kv_proj_weight"], p[f"{a}.kv_proj_bias"], kv, K.WRITE)
        cross_kv.append(kv)
    cross_shape = Shape(B, 1, S, H, d)
    cross_mask = key_mask(lens, H, 1, S)                                     # (B·h, 1, S)
    self_rows = [np.empty((B, steps, 3 * d), dt) for _ in range(c.num_decoder_layers)]
    W_out = output_weight(model)
    tokens = np.full((B, 1), BOS, np.int64)
    out = np.empty((B, steps), np.int64)
    for t in range(steps):
        y = np.empty((B, d), dt)                                             # (B, d) step t's row
        K._embed(p["tgt_embed.weight"], tokens, c.embed_scale, model.pe[t:t + 1],
                 c.positions == "sinusoidal", y)
        self_shape = Shape(B, 1, t + 1, H, d)
        self_mask = np.ones((B * H, 1, t + 1), np.bool_)                     # the past and now
        for i in range(c.num_decoder_layers):
            pre = f"decoder.layers.{i}"
            # masked self-attention: this step's query against the cached keys/values of 0..t
            h, _ = layer_norm(y, p[f"{pre}.norm1.weight"], p[f"{pre}.norm1.bias"])
            row = np.empty((B, 3 * d), dt)                                   # (B, 3d) this step's q, k, v
            K._linear(h, p[f"{pre}.self_attn.in_proj_weight"], p[f"{pre}.self_attn.in_proj_bias"],
                      row, K.WRITE)
            self_rows[i][:, t] = row                                         # into the cache
            past = np.ascontiguousarray(self_rows[i][:, :t + 1]).reshape(B * (t + 1), 3 * d)
            o, _ = heads_attention(row, 0, past, d, 2 * d, self_shape, self_mask)
            K._linear(o, p[f"{pre}.self_attn.out_proj.weight"], p[f"{pre}.self_attn.out_proj.bias"],
                      y, K.ADD)
            # cross-attention over the memory
            a = f"{pre}.multihead_attn"
            h, _ = layer_norm(y, p[f"{pre}.norm2.weight"], p[f"{pre}.norm2.bias"])
            q = np.empty((B, d), dt)
            K._linear(h, p[f"{a}.q_proj_weight"], p[f"{a}.q_proj_bias"], q, K.WRITE)
            o, _ = heads_attention(q, 0, cross_kv[i], 0, d, cross_shape, cross_mask)
            K._linear(o, p[f"{a}.out_proj.weight"], p[f"{a}.out_proj.bias"], y, K.ADD)
            # feed-forward
            h, _ = layer_norm(y, p[f"{pre}.norm3.weight"], p[f"{pre}.norm3.bias"])
            f = np.empty((B, c.d_ff), dt)
            K._linear(h, p[f"{pre}.linear1.weight"], p[f"{pre}.linear1.bias"], f, K.RELU)
            K._linear(f, p[f"{pre}.linear2.weight"], p[f"{pre}.linear2.bias"], y, K.ADD)
        z, _ = layer_norm(y, p["decoder.norm.weight"], p["decoder.norm.bias"])
        logits = np.empty((B, V), dt)                                        # (B, V)
        K._linear(z, W_out, p["out.bias"], logits, K.WRITE)
        tokens[:, 0] = np.argmax(logits, axis=1)                             # the next input
        out[:, t] = tokens[:, 0]
    return out


def attention_maps(model: Transformer, src: object,
                   tgt_in: object) -> tuple[np.ndarray, dict[str, list[np.ndarray]]]:
    """Run one sequence with the decoder fed ``tgt_in`` (T,) and return (log P (T, V), weights).

    Weights: ``{"encoder": [(h, S, S) per layer], "decoder": [(h, T, T)], "cross": [(h, T, S)]}``
    — rows are the attending positions, columns the attended ones.
    """
    s, lens = sources(model, src)
    y = as_int(tgt_in, "tgt_in", ndim=1, low=0, high=model.config.vocab_size)
    if y.size == 0:
        raise ValueError("tgt_in: is empty; expected at least BOS")
    check_length(model, y.size, "tgt_in")
    logits, cache = forward(model, s, lens, y[None, :].copy())
    maps = {k: [w[0].astype(np.float64) for w in v] for k, v in cache.attention().items()}
    return log_softmax(logits.astype(np.float64), axis=-1), maps


class TransformerStepModel:
    """A trained model conditioned on one source sequence, as a :class:`engine.decoding.StepModel`.

    The state is the tuple of tokens fed so far (immutable, so beam search may branch from
    any state); each step re-runs the decoder over that prefix (sources here are short).
    """

    def __init__(self, model: Transformer, src: object, vocab: tuple[str, ...],
                 eos_token: int | None = None) -> None:
        s, lens = sources(model, src)
        check_step_inputs(s, vocab, model.config.vocab_size)
        self.vocab = tuple(vocab)
        self.bos_token: int | None = BOS
        self.eos_token = eos_token
        self.initial_state: tuple[int, ...] = ()
        self._model = model.copy()
        self._lens = lens
        self._mem = encode(self._model, s, lens)[0]                          # (S, d)

    def step(self, state: tuple[int, ...], token: int | None) -> tuple[np.ndarray, tuple[int, ...]]:
        """Feed ``token`` after ``state``; log P(next) (V,) and the new state."""
        if token is None:
            raise ValueError("token: expected an id; this model always starts from its BOS token")
        tok = int(token)
        if not 0 <= tok < len(self.vocab):
            raise ValueError(f"token: expected an id in [0, {len(self.vocab)}), got {tok}")
        fed = state + (tok,)
        check_length(self._model, len(fed), "decoded sequence")
        logits = decode_all(self._model, self._mem, self._lens, np.array([fed], np.int64))[0]
        return log_softmax(logits[-1].astype(np.float64)), fed


def step_function(model: Transformer, src: object, vocab: tuple[str, ...] | None = None,
                  eos_token: int | None = None) -> TransformerStepModel:
    """The model conditioned on one source (S,) for ``engine.decoding.greedy_decode`` /
    ``beam_search``; ``vocab`` defaults to the token ids as strings."""
    words = tuple(vocab) if vocab is not None else tuple(str(i) for i in range(model.config.vocab_size))
    return TransformerStepModel(model, src, words, eos_token)

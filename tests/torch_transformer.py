"""The PyTorch twin of ``engine.transformer`` (for the tests and ``benchmarks/lab_transformer.py``).

Built only from PyTorch's own modules — ``nn.Embedding``, ``nn.TransformerEncoder`` /
``nn.TransformerDecoder`` of ``norm_first=True``, ReLU layers with the config's ``dropout``
(0 unless set; it acts in ``twin.train()`` mode only), with a final
``nn.LayerNorm`` each, ``nn.Linear`` — plus the same input rule E·√d + PE. Its state-dict
names are those :func:`engine.transformer.torch_state_dict` produces, so
``twin.load_state_dict(torch_state_dict(model))`` gives both the same weights. torch is
imported by :func:`make_twin`, never by the engine.
"""

from __future__ import annotations

from typing import Any


def make_twin(cfg: Any) -> Any:
    """An ``nn.Module`` equal to a Transformer of config ``cfg``: ``twin(src, src_len, tgt_in)``
    returns logits (B, T, V) for int64 tensors src (B, S), src_len (B,), tgt_in (B, T)."""
    import torch
    from torch import nn

    from engine.positional import sinusoidal_encoding

    d = cfg.d_model
    scale = cfg.embed_scale

    class Twin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.src_embed = nn.Embedding(cfg.vocab_size, d)
            self.tgt_embed = nn.Embedding(cfg.vocab_size, d)
            p = getattr(cfg, "dropout", 0.0)
            enc = nn.TransformerEncoderLayer(d, cfg.num_heads, cfg.d_ff, p, batch_first=True,
                                             norm_first=True)
            dec = nn.TransformerDecoderLayer(d, cfg.num_heads, cfg.d_ff, p, batch_first=True,
                                             norm_first=True)
            self.encoder = nn.TransformerEncoder(enc, cfg.num_encoder_layers, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
            self.decoder = nn.TransformerDecoder(dec, cfg.num_decoder_layers, norm=nn.LayerNorm(d))
            self.out = nn.Linear(d, cfg.vocab_size)
            if cfg.tie_embeddings:
                self.out.weight = self.tgt_embed.weight
            self.pe = torch.from_numpy(sinusoidal_encoding(cfg.max_len, d))

        def embed(self, table: Any, x: Any) -> Any:
            h = table(x) * scale
            return h + self.pe[:x.shape[1]].to(h.dtype) if cfg.positions == "sinusoidal" else h

        def forward(self, src: Any, src_len: Any, tgt_in: Any) -> Any:
            pad = torch.arange(src.shape[1])[None, :] >= src_len[:, None]      # True = padding
            mem = self.encoder(self.embed(self.src_embed, src), src_key_padding_mask=pad)
            T = tgt_in.shape[1]
            causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)        # True = hidden
            y = self.decoder(self.embed(self.tgt_embed, tgt_in), mem, tgt_mask=causal,
                             memory_key_padding_mask=pad)
            return self.out(y)

    twin = Twin()
    return twin.double() if cfg.dtype == "float64" else twin.float()


def padded_targets(tgt: Any, tgt_len: Any) -> Any:
    """int64 tensor (B, T): the targets with padded steps set to -100 (ignore_index)."""
    import torch

    t = torch.from_numpy(tgt.copy())
    t[torch.arange(tgt.shape[1])[None, :] >= torch.from_numpy(tgt_len)[:, None]] = -100
    return t

"""A tiny encoder-decoder Transformer in numba, trained live in the lab (lecture §5–§8).

Vaswani et al. 2017 ("Attention Is All You Need") with PyTorch's pre-norm layer maths
(``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``, ``norm_first=True``,
``dropout`` 0 by default, ReLU): self-attention in the encoder, masked (causal) self-attention and
cross-attention in the decoder, position-wise feed-forward blocks, residual connections and
LayerNorm, sinusoidal positions (or none), optional tied output embedding.

Modules: :mod:`.model` (config, parameter layout and PyTorch names, initialisation),
:mod:`._kernels` (the numba primitives), :mod:`.layers` (each sublayer's forward next to its
backward), :mod:`.dropout` (the training pass's dropout masks), :mod:`.network` (the whole
pass), :mod:`.train` (loss, gradient, Adam step),
:mod:`.decode` (greedy decoding with a key-value cache, a step model for beam search).
"""

from engine.transformer.model import DTYPES, POSITIONS, Transformer, TransformerConfig, torch_state_dict
from engine.transformer.train import (
                                      BOS,
                                      TransformerStep,
                                      decoder_inputs,
                                      loss_and_grad,
                                      make_optimizer,
                                      train_step,
)

__all__ = [
    "BOS", "DTYPES", "POSITIONS", "Transformer", "TransformerConfig", "TransformerStep",
    "decoder_inputs", "loss_and_grad", "make_optimizer", "torch_state_dict", "train_step",
]

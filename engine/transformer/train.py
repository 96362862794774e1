"""Loss, gradient and one training step of the Transformer.

Training feeds the decoder the whole target shifted right by one (BOS first) in a single
pass — teacher forcing for every step at once, which is what makes a Transformer fast to
train compared with the step-by-step RNN decoder. The loss is PyTorch's
``cross_entropy(logits, targets, ignore_index=padding, label_smoothing=ε)``, the mean over
the real target tokens of the batch, computed by :mod:`engine.loss`'s kernels. The optimiser
is :class:`engine.seq2seq.Adam` (Adam with global-norm clipping on the flat vector).

Dropout (the config's ``dropout`` p > 0) acts only in a pass given a generator ``rng``, which
draws its masks (:mod:`engine.transformer.dropout`); without one the pass is an evaluation and
equals the model with p = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine._validate import check_scalar
from engine.loss import _ce_grad_rows, _ce_rows
from engine.seq2seq import Adam, Batch, check_batch
from engine.transformer.dropout import Dropout
from engine.transformer.model import Transformer
from engine.transformer.network import backward, check_length, forward

BOS = 1          # the token fed to the decoder's first step (engine.lab's vocabulary)
IGNORE = -100    # target value of a padded step: contributes nothing (PyTorch's ignore_index)


@dataclass(frozen=True)
class TransformerStep:
    """What one training pass saw.

    Attributes:
        loss: mean cross-entropy per real target token (label smoothing included).
        predictions: (B, T) the argmax at each step, given the true previous tokens.
        grad_norm: global gradient norm before clipping (NaN when no update was made).
    """

    loss: float
    predictions: np.ndarray
    grad_norm: float = float("nan")


def decoder_inputs(tgt: np.ndarray) -> np.ndarray:
    """(B, T): BOS, then the target shifted right by one (y_0 … y_{T-2})."""
    out = np.empty_like(tgt)
    out[:, 0] = BOS
    out[:, 1:] = tgt[:, :-1]
    return out


def padded_targets(tgt: np.ndarray, tgt_len: np.ndarray) -> np.ndarray:
    """(B, T) targets with every step t ≥ tgt_len[b] set to IGNORE."""
    out = tgt.copy()
    out[np.arange(tgt.shape[1])[None, :] >= tgt_len[:, None]] = IGNORE
    return out


def loss_and_grad(model: Transformer, batch: Batch, label_smoothing: float = 0.0,
                  want_grad: bool = True, rng: np.random.Generator | Dropout | None = None,
                  ) -> tuple[TransformerStep, np.ndarray | None]:
    """Forward pass on a padded batch, and the backward pass when ``want_grad``.

    Args:
        model: the model (its ``theta`` is read, not changed).
        batch: src (B, S), src_len, tgt (B, T) ending with EOS, tgt_len.
        label_smoothing: ε in [0, 1], as PyTorch's cross-entropy.
        want_grad: compute dL/dθ too.
        rng: a training pass's dropout: the generator its masks are drawn from (nothing is
            drawn when the config's dropout is 0), or a :class:`Dropout` (its masks are then
            kept in it, or replayed from it); None = no dropout (evaluation).

    Returns:
        (result, grad): grad is a flat array shaped like ``model.theta`` (None without it).

    Raises:
        ValueError: on a malformed batch, tokens outside the vocabulary or sequences longer
            than the model's ``max_len``.
    """
    b = check_batch(batch, model.config.vocab_size)
    eps = check_scalar(label_smoothing, "label_smoothing", low=0.0, high=1.0)
    check_length(model, b.src.shape[1], "src")
    check_length(model, b.tgt.shape[1], "tgt")
    B, T = b.tgt.shape
    logits, cache = forward(model, b.src, b.src_len, decoder_inputs(b.tgt),
                            _dropout(model, rng))                              # (B·T, V)
    t = padded_targets(b.tgt, b.tgt_len).reshape(-1)                           # (B·T,)
    losses = np.empty(B * T)                                                   # (B·T,)
    count = _ce_rows(logits, t, IGNORE, eps, losses)
    loss = float(losses.sum()) / count
    pred = np.argmax(logits, axis=1).reshape(B, T)
    if not want_grad:
        return TransformerStep(loss, pred), None
    dlogits = np.empty_like(logits)                                            # (B·T, V)
    _ce_grad_rows(logits, t, IGNORE, eps, 1.0 / count, dlogits)
    grad = np.empty_like(model.theta)
    backward(model, cache, dlogits, grad)
    return TransformerStep(loss, pred), grad


def _dropout(model: Transformer, rng: np.random.Generator | Dropout | None) -> Dropout | None:
    """The pass's Dropout: None for evaluation or p = 0 (the code path without dropout)."""
    if isinstance(rng, Dropout):
        return rng
    if rng is None or model.config.dropout == 0.0:
        return None
    return Dropout(model.config.dropout, rng, model.config.np_dtype)


def make_optimizer(model: Transformer, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.98),
                   eps: float = 1e-9, max_grad_norm: float = 1.0) -> Adam:
    """Adam with Vaswani et al.'s β = (0.9, 0.98), ε = 1e-9 and global-norm clipping."""
    return Adam(model.config.n_params, lr=lr, betas=betas, eps=eps, max_grad_norm=max_grad_norm)


def train_step(model: Transformer, optimizer: Adam, batch: Batch, label_smoothing: float = 0.0,
               rng: np.random.Generator | None = None) -> TransformerStep:
    """One step: loss and gradient on ``batch``, clip, Adam update of ``model.theta``; with the
    config's dropout p > 0, ``rng`` draws the step's masks (None: no dropout)."""
    res, grad = loss_and_grad(model, batch, label_smoothing, rng=rng)
    assert grad is not None                                         # want_grad is True
    norm = optimizer.step(model.theta, grad)
    return TransformerStep(res.loss, res.predictions, norm)

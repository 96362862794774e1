"""Loss, gradient, teacher forcing, Adam with global-norm clipping: one training step.

The loss is the lecture's (§3, §12): categorical cross-entropy summed over the decoder
steps of each sequence, padding ignored, averaged over the sequences of a batch.
The teacher-forcing ratio mixes ground truth and the model's own predictions per step
(scheduled sampling, Bengio et al. 2015): 1.0 is pure teacher forcing, 0.0 free running.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np

from engine._validate import as_int, check_positive_int, check_scalar
from engine.seq2seq import _kernels as K
from engine.seq2seq.model import Seq2Seq
from engine.seq2seq.workspace import Work, Workspace


@dataclass(frozen=True)
class Batch:
    """A padded batch, batch-major: B sequences.

    Attributes:
        src: (B, S) source tokens; src_len (B,) how many are real (≥ 1).
        tgt: (B, T) target tokens, each ending with EOS; tgt_len (B,) how many are real.
    """

    src: np.ndarray
    src_len: np.ndarray
    tgt: np.ndarray
    tgt_len: np.ndarray

    @property
    def size(self) -> int:
        return int(self.src.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.tgt_len.sum())


def check_batch(batch: Batch, vocab_size: int) -> Batch:
    """Validated, contiguous int64 copy of ``batch`` (ValueError naming the bad field)."""
    src = as_int(batch.src, "src", ndim=2, low=0, high=vocab_size)
    tgt = as_int(batch.tgt, "tgt", ndim=2, low=0, high=vocab_size)
    B = src.shape[0]
    if B == 0 or src.shape[1] == 0 or tgt.shape[1] == 0:
        raise ValueError(f"src/tgt: expected non-empty (B, S) and (B, T), got {src.shape} and {tgt.shape}")
    if tgt.shape[0] != B:
        raise ValueError(f"tgt: expected shape ({B}, T) (B from src), got shape {tgt.shape}")
    src_len = as_int(batch.src_len, "src_len", ndim=1, low=1, high=src.shape[1] + 1)
    tgt_len = as_int(batch.tgt_len, "tgt_len", ndim=1, low=1, high=tgt.shape[1] + 1)
    if src_len.shape != (B,) or tgt_len.shape != (B,):
        raise ValueError(f"src_len/tgt_len: expected shape ({B},), got {src_len.shape} and {tgt_len.shape}")
    return Batch(src, src_len, tgt, tgt_len)


@dataclass(frozen=True)
class StepResult:
    """What one forward(-backward) pass saw.

    Attributes:
        loss: cross-entropy summed over steps, mean over the batch.
        decoder_inputs: (B, T) token fed at each decoder step (BOS first).
        predictions: (B, T) argmax output at each step.
        grad_norm: global gradient norm before clipping (NaN when no gradient was taken).
    """

    loss: float
    decoder_inputs: np.ndarray
    predictions: np.ndarray
    grad_norm: float = float("nan")


def _forward_backward(model: Seq2Seq, batch: Batch, teacher_forcing_ratio: float,
                      rng: np.random.Generator | int | None, want_grad: bool,
                      workspace: Workspace | None, parts: int = 1,
                      pool: Executor | None = None) -> tuple[StepResult, np.ndarray]:
    """The checked pass behind :func:`loss_and_grad` and :func:`train_step`.

    With ``parts`` > 1 the batch's rows are cut into that many blocks, each block's loss and
    gradient is computed on its own (averaged over the whole batch), and they are added in
    block order: the same numbers whether the blocks ran one after the other or some of them
    on ``pool``'s threads. Returns the result and the gradient, which stays in the
    workspace (read it before the next pass).
    """
    b = check_batch(batch, model.config.vocab_size)
    ratio = check_scalar(teacher_forcing_ratio, "teacher_forcing_ratio", low=0.0, high=1.0)
    B, T = b.tgt.shape
    S = b.src.shape[1]
    check_positive_int(parts, "parts")
    parts = min(parts, B)
    ws = workspace if workspace is not None else Workspace()
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    dec_in = np.zeros((B, T), np.int64)
    pred = np.zeros((B, T), np.int64)
    c = model.config
    kinds = (c.cell_kind, c.bidirectional, c.decoder == "attention")
    p = model.params
    if parts == 1:
        w = ws.work(c, B, S, T)
        gen.random(out=w.coins)                     # (T, B), the draws of gen.random((T, B))
        loss = K.training_pass(p, *kinds, b.src, b.src_len, b.tgt, b.tgt_len, ratio, B, dec_in,
                               pred, w, c.views(w.grad) if want_grad else None)
        return StepResult(float(loss), dec_in, pred), w.grad
    coins = gen.random((T, B))                      # the same draws, cut by rows below
    rows = [B * k // parts for k in range(parts + 1)]

    def run(k: int) -> tuple[float, Work]:
        lo, hi = rows[k], rows[k + 1]
        w = ws.part(k).work(c, hi - lo, S, T)
        w.coins[...] = coins[:, lo:hi]
        loss = K.training_pass(p, *kinds, b.src[lo:hi], b.src_len[lo:hi], b.tgt[lo:hi],
                               b.tgt_len[lo:hi], ratio, B, dec_in[lo:hi], pred[lo:hi], w,
                               c.views(w.grad) if want_grad else None)
        return float(loss), w

    later = [pool.submit(run, k) for k in range(1, parts)] if pool is not None else []
    done = [run(0)] + ([f.result() for f in later] if later else [run(k) for k in range(1, parts)])
    loss, grad = done[0][0], done[0][1].grad
    for part_loss, w in done[1:]:                   # in block order: reproducible sums
        loss += part_loss
        if want_grad:
            grad += w.grad
    return StepResult(loss, dec_in, pred), grad


def loss_and_grad(model: Seq2Seq, batch: Batch, teacher_forcing_ratio: float = 1.0,
                  rng: np.random.Generator | int | None = 0, want_grad: bool = True,
                  workspace: Workspace | None = None, parts: int = 1,
                  pool: Executor | None = None) -> tuple[StepResult, np.ndarray | None]:
    """Forward pass, and backward through time when ``want_grad``.

    Args:
        model: the model (its ``theta`` is read, not changed).
        batch: a padded batch (see :class:`Batch`).
        teacher_forcing_ratio: probability that a decoder step after the first is fed the
            ground-truth previous token instead of the model's own argmax prediction;
            drawn independently per sequence and step from ``rng``.
        rng: a Generator or seed for those draws.
        want_grad: compute dL/dθ too.
        workspace: where the pass keeps its work arrays (a fresh one if None); reuse one
            across calls to stop each call allocating them.
        parts: cut the batch's rows into this many blocks and add their gradients in
            block order (the same sum as one pass up to rounding; the same bits for any
            ``pool``).
        pool: an executor that runs blocks 1, 2, … while this thread runs block 0 (e.g.
            on a core another job left free); None runs them one after the other.

    Returns:
        (result, grad): grad is a new flat array shaped like ``model.theta`` (None without it).
    """
    res, grad = _forward_backward(model, batch, teacher_forcing_ratio, rng, want_grad, workspace,
                                  parts, pool)
    return res, (grad.copy() if want_grad else None)


class Adam:
    """Adam (Kingma & Ba 2015) with global-norm gradient clipping, on a flat vector.

    Args:
        n_params: size of the parameter vector.
        lr: learning rate.
        betas: (β1, β2).
        eps: ε in the denominator.
        max_grad_norm: clip the gradient to this global L2 norm first (0 = no clipping).
    """

    def __init__(self, n_params: int, lr: float = 3e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, max_grad_norm: float = 5.0) -> None:
        self.lr = check_scalar(lr, "lr", low=0.0, low_open=True)
        self.beta1 = check_scalar(betas[0], "betas[0]", low=0.0, high=1.0, high_open=True)
        self.beta2 = check_scalar(betas[1], "betas[1]", low=0.0, high=1.0, high_open=True)
        self.eps = check_scalar(eps, "eps", low=0.0, low_open=True)
        self.max_grad_norm = check_scalar(max_grad_norm, "max_grad_norm", low=0.0)
        self.m = np.zeros(n_params)
        self.v = np.zeros(n_params)
        self.steps = 0

    def step(self, theta: np.ndarray, grad: np.ndarray) -> float:
        """Update ``theta`` in place; returns the gradient norm before clipping."""
        self.steps += 1
        return float(K._clip_and_adam(theta, grad, self.m, self.v, float(self.steps), self.lr,
                                      self.beta1, self.beta2, self.eps, self.max_grad_norm))


def train_step(model: Seq2Seq, optimizer: Adam, batch: Batch, teacher_forcing_ratio: float = 1.0,
               rng: np.random.Generator | int | None = 0,
               workspace: Workspace | None = None, parts: int = 1,
               pool: Executor | None = None) -> StepResult:
    """One step: loss and gradient on ``batch``, clip, Adam update of ``model.theta``.

    A training loop passes the same ``workspace`` to every step (one per training loop), so
    no step allocates its work arrays. ``parts`` and ``pool`` as in :func:`loss_and_grad`:
    a run with a fixed ``parts`` is reproducible whether or not a step had a ``pool``."""
    res, grad = _forward_backward(model, batch, teacher_forcing_ratio, rng, True, workspace,
                                  parts, pool)
    norm = optimizer.step(model.theta, grad)
    return StepResult(res.loss, res.decoder_inputs, res.predictions, norm)

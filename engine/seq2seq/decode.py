"""Inference with a trained model: batched greedy decoding and a step function.

Greedy decoding is free running (lecture §3, §10): each step's argmax is the next step's
input; nothing from the target is used. :func:`step_function` exposes the model in the
decoding engine's protocol ``step(state, token) -> (log_probs, new_state)`` so greedy,
beam search and sampling in :mod:`engine.decoding` can drive it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine._validate import as_int, check_positive_int
from engine.seq2seq import _kernels as K
from engine.seq2seq.model import Seq2Seq
from engine.seq2seq.workspace import Workspace


def check_sources(vocab_size: int, src: object,
                  src_len: object | None) -> tuple[np.ndarray, np.ndarray]:
    """Validated (B, S) int64 sources (a 1-D src is one row) with tokens below ``vocab_size``,
    and their (B,) lengths in [1, S] (default: S for every row)."""
    s = as_int(src, "src", low=0, high=vocab_size)
    if s.ndim == 1:
        s = s[None, :]
    if s.ndim != 2 or s.shape[1] == 0:
        raise ValueError(f"src: expected shape (B, S) or (S,), got shape {s.shape}")
    if src_len is None:
        lens = np.full(s.shape[0], s.shape[1], np.int64)
    else:
        lens = as_int(np.atleast_1d(np.asarray(src_len)), "src_len", ndim=1, low=1, high=s.shape[1] + 1)
        if lens.shape != (s.shape[0],):
            raise ValueError(f"src_len: expected shape ({s.shape[0]},), got shape {lens.shape}")
    return np.ascontiguousarray(s), lens


def greedy_decode(model: Seq2Seq, src: object, steps: int, src_len: object | None = None,
                  keep_attention: bool = False,
                  workspace: Workspace | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Free-running greedy decoding of ``steps`` tokens for a batch of sources.

    Args:
        model: a trained model.
        src: (B, S) source tokens (or one (S,) sequence).
        steps: how many tokens to generate (EOS does not stop it; compare up to your length).
        src_len: (B,) real lengths, default S for all.
        keep_attention: also return the attention weights.
        workspace: where the pass keeps its work arrays (a fresh one if None).

    Returns:
        (tokens (B, steps), α (B, steps, S) or None). For the fixed-context model α is
        all zeros: there is nothing to attend with.
    """
    s, lens = check_sources(model.config.vocab_size, src, src_len)
    steps = check_positive_int(steps, "steps")
    B, S = s.shape
    # the training pass, free running (ratio 0: every input after BOS is the previous
    # argmax) and without a gradient: no second forward kernel to compile; the targets
    # only feed its (unused) loss
    tgt = np.zeros((B, steps), np.int64)
    tgt_len = np.full(B, steps, np.int64)
    w = (workspace if workspace is not None else Workspace()).work(model.config, B, S, steps)
    w.coins[:] = 0.0
    dec_in = np.zeros((B, steps), np.int64)
    pred = np.zeros((B, steps), np.int64)
    c = model.config
    K.training_pass(model.params, c.cell_kind, c.bidirectional, c.decoder == "attention", s,
                    lens, tgt, tgt_len, 0.0, B, dec_in, pred, w)
    return pred, (w.Al.transpose(1, 0, 2).copy() if keep_attention else None)  # (B, T, S)


def check_step_inputs(src: np.ndarray, vocab: tuple[str, ...], vocab_size: int) -> None:
    """A step model decodes one source (1, S) with one word per vocabulary entry.

    Raises:
        ValueError: for a batch of sources or a vocabulary of the wrong size.
    """
    if src.shape[0] != 1:
        raise ValueError(f"src: expected one sequence (S,), got shape {src.shape}")
    if len(vocab) != vocab_size:
        raise ValueError(f"vocab: expected {vocab_size} words (the model's V), got {len(vocab)}")


@dataclass(frozen=True)
class DecoderState:
    """The decoder's state between steps: hidden state s_t (d,) and the last attention (S,)."""

    hidden: np.ndarray
    attention: np.ndarray


class Seq2SeqStepModel:
    """A trained model conditioned on one source sequence, as a step model.

    Implements :class:`engine.decoding.StepModel`: ``vocab``, ``bos_token``, ``eos_token``,
    ``initial_state`` and ``step(state, token) -> (log_probs (V,), new_state)``. States are
    immutable, so beam search may branch from any of them; ``state.attention`` holds the
    weights the step used (all zero for the fixed-context model).
    """

    def __init__(self, model: Seq2Seq, src: object, vocab: tuple[str, ...],
                 bos_token: int = K.BOS, eos_token: int | None = None) -> None:
        s, lens = check_sources(model.config.vocab_size, src, None)
        check_step_inputs(s, vocab, model.config.vocab_size)
        self.vocab = tuple(vocab)
        self.bos_token = bos_token
        self.eos_token = eos_token
        c = model.config
        self._params = c.views(model.theta.copy())
        self._kinds = (c.cell_kind, c.decoder == "attention")
        self._lens = lens
        # one workspace for the whole decoding (B = 1, T = 1): the encoder's annotations and
        # keys stay in it, each step overwrites the decoder's part
        w = self._work = Workspace().work(c, 1, s.shape[1], 1)
        K.encode(self._params, c.cell_kind, c.bidirectional, c.decoder == "attention", s, lens, w)
        self._step_io = (np.zeros((1, 1), np.int64), np.ones(1, np.int64),  # tgt, tgt_len
                         np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64))  # dec_in, pred
        self.initial_state = DecoderState(w.Hs[0, s.shape[1], 0].copy(), np.zeros(s.shape[1]))

    def step(self, state: DecoderState, token: int) -> tuple[np.ndarray, DecoderState]:
        """Feed ``token`` after ``state``; log P(next) (V,) and the new state."""
        tok = int(token)
        if not 0 <= tok < len(self.vocab):
            raise ValueError(f"token: expected an id in [0, {len(self.vocab)}), got {tok}")
        w = self._work
        w.Sd[0, 0] = state.hidden                   # s_{t-1}
        w.tokens[0] = tok
        tgt, tgt_len, dec_in, pred = self._step_io    # one step, its (unused) loss on token 0
        K.decode(self._params, *self._kinds, self._lens, tgt, tgt_len, 0.0, 1, dec_in, pred, w)
        return w.LP[0, 0].copy(), DecoderState(w.Sd[1, 0].copy(), w.Al[0, 0].copy())


def step_function(model: Seq2Seq, src: object, vocab: tuple[str, ...] | None = None,
                  eos_token: int | None = None) -> Seq2SeqStepModel:
    """The model, conditioned on one source sequence (S,), for :mod:`engine.decoding`:
    ``greedy_decode(step_function(model, src, vocab, eos), max_length)`` or ``beam_search``.
    ``vocab`` defaults to the token ids as strings."""
    words = tuple(vocab) if vocab is not None else tuple(str(i) for i in range(model.config.vocab_size))
    return Seq2SeqStepModel(model, src, words, K.BOS, eos_token)

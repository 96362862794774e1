"""``decoder-step`` (§1): H = tanh(W_HH H_prev + W_HY Y_prev + W_HC C + b), softmax(W_O H)."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.rnn import decoder_step
from engine.traces._common import Draw, one_hot, word_index

TRACE = "decoder-step"
MISTAKES = ("tanh-left-out", "rnn-bias-forgotten", "decoder-context-dropped", "transposed-weight",
            "no-exp", "no-normalise", "rounded-intermediates")
PAIRS = (("tanh-left-out", "rnn-bias-forgotten"), ("tanh-left-out", "decoder-context-dropped"),
         ("rnn-bias-forgotten", "decoder-context-dropped"), ("tanh-left-out", "rounded-intermediates"))


def compute(inp: dict, s: Slips) -> dict:
    C, H_prev, vocab, prev, seed = (inp[k] for k in ("C", "H_prev", "vocab", "prev", "seed"))
    d_h, V = C.size, len(vocab)
    readable = ["<start>"] + [w for w in vocab if w != "<start>"]
    y = one_hot(word_index(prev, readable, "prev"), len(readable))
    draw = Draw(seed)
    W_HH, W_HY, W_HC = draw(d_h, d_h), draw(d_h, len(readable)), draw(d_h, d_h)
    b = draw(d_h, scale=0.1)
    W_O = draw(V, d_h, scale=1.0)
    s.fact(bias=_ops.show(b))
    a = s.r(_ops.transpose_if_square(W_HH, s) @ H_prev)
    c = s.r(W_HY @ y)
    e = s.r(_ops.transpose_if_square(W_HC, s) @ C)
    pre = s.r(a + c + (0.0 if s.on("decoder-context-dropped") else e)
              + (0.0 if s.on("rnn-bias-forgotten") else b))
    h = pre if s.on("tanh-left-out") else s.r(np.tanh(pre))
    if s.ids:
        logits = s.r(W_O @ h)
    else:  # the engine's decoder step
        h, logits, _ = decoder_step(H_prev, y, C, W_HH, W_HY, W_HC, b, W_O)
    probs = _ops.weights(logits, s)
    return {"W_HH": W_HH, "W_HY": W_HY, "W_HC": W_HC, "b": b, "W_O": W_O, "Y_prev": y,
            "W_HH H_prev": a, "W_HY Y_prev": c, "W_HC C": e, "pre-activation": pre, "H": h,
            "logits": logits, "probs": probs}

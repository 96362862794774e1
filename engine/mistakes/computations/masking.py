"""``masking`` (§8): padding and causal masks before the softmax."""

from __future__ import annotations

import numpy as np

from engine.masks import causal_mask, padding_mask
from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import Draw

TRACE = "masking"
MISTAKES = ("mask-zero", "mask-after-softmax", "causal-transposed", "padding-queries-kept",
            "no-scale", "scale-by-dk", "rounded-intermediates", "no-exp", "no-normalise",
            "softmax-wrong-axis")
PAIRS = (("mask-zero", "rounded-intermediates"), ("mask-after-softmax", "rounded-intermediates"),
         ("causal-transposed", "rounded-intermediates"), ("mask-zero", "causal-transposed"),
         ("mask-after-softmax", "causal-transposed"), ("padding-queries-kept", "causal-transposed"),
         ("no-scale", "mask-zero"), ("no-scale", "mask-after-softmax"))


def compute(inp: dict, s: Slips) -> dict:
    tokens, length, causal, d_k, seed = (inp[k] for k in ("tokens", "length", "causal", "d_k", "seed"))
    m = len(tokens)
    if length > m:
        raise ValueError(f"input length: got {length}, expected a whole number from 0 to {m}")
    draw = Draw(seed)
    X = draw(m, 4, scale=1.0)
    W_Q, W_K, W_V = draw(4, d_k, scale=0.7), draw(4, d_k, scale=0.7), draw(4, 2, scale=0.7)
    pad = padding_mask([length], max_len=m)[0]  # (n,)
    rows = np.ones(m, bool) if s.on("padding-queries-kept") else pad
    mask = rows[:, None] & pad[None, :]
    out = {"padding": pad}
    if causal:
        cm = causal_mask(m)
        if s.on("causal-transposed"):
            cm = cm.T
        mask = mask & cm
        out["causal"] = cm
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    if inp.get("scores") is None:
        S = s.r(Q @ K.T / _ops.scale(d_k, s))
    else:
        S = inp["scores"]
        s.fact(d_k=d_k, sqrt_dk=_ops.show(np.sqrt(d_k)))
    masked = np.where(mask, S, 0.0 if s.on("mask-zero") else -np.inf)
    A = _ops.weights(S, s, mask=mask)
    out.update({"mask": mask, "scores": S, "masked_scores": masked, "A": A, "Z": s.r(A @ V)})
    return out

"""``multi-head`` (§6): heads as slices of one projection, concatenated, then W_O."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import Draw

TRACE = "multi-head"
MISTAKES = ("scale-by-dmodel", "no-scale", "scale-by-dk", "softmax-wrong-axis", "multihead-no-wo",
            "rounded-intermediates", "no-exp")
PAIRS = (("scale-by-dmodel", "multihead-no-wo"), ("no-scale", "multihead-no-wo"),
         ("softmax-wrong-axis", "multihead-no-wo"), ("scale-by-dmodel", "rounded-intermediates"))


def compute(inp: dict, s: Slips) -> dict:
    tokens, d_model, heads, seed = inp["tokens"], inp["d_model"], inp["heads"], inp["seed"]
    if d_model % heads:
        raise ValueError(f"input heads: got {heads}, expected a divisor of d_model = {d_model}")
    m, d_head = len(tokens), d_model // heads
    draw = Draw(seed)
    X = draw(m, d_model, scale=1.0)
    W_Q, W_K, W_V, W_O = (draw(d_model, d_model, scale=0.7) for _ in range(4))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d_model)
    root = _ops.scale(d_head, s, d_model=d_model)
    out = {"X": X, "Q": Q, "K": K, "V": V, "W_O": W_O}
    outs, weights = [], []
    for h in range(heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        A = _ops.weights(s.r(Q[:, cols] @ K[:, cols].T / root), s)
        outs.append(s.r(A @ V[:, cols]))
        weights.append(A)
        out.update({f"A_{h + 1}": A, f"head_{h + 1}": outs[-1]})
    concat = np.concatenate(outs, axis=1)  # (n, d_model)
    s.fact(h=heads)
    final = concat if s.on("multihead-no-wo") else s.r(concat @ W_O)
    out.update({"concat": concat, "output": final, "weights": np.array(weights)})
    return out

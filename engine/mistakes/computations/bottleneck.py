"""``bottleneck`` (§2): T words squeezed into C = H_T, and how much of each word survives."""

from __future__ import annotations

import numpy as np

from engine.mistakes.slips import Slips
from engine.rnn import rnn_encoder
from engine.traces.bottleneck import _first_word_reach, _jacobian_norms, _weights

TRACE = "bottleneck"
MISTAKES = ("context-mean-states", "tanh-left-out")
PAIRS = ()


def compute(inp: dict, s: Slips) -> dict:
    review, d_h, d_x, seed = inp["review"], inp["d_h"], inp["d_x"], inp["seed"]
    T = len(review)
    X, W_HX, W_HH, b = _weights(seed, review, d_x, d_h)
    if s.on("tanh-left-out"):
        H = np.zeros((T, d_h))
        h = np.zeros(d_h)
        for t in range(T):
            h = W_HX @ X[t] + W_HH @ h + b
            H[t] = h
    else:
        H = rnn_encoder(X, W_HX, W_HH, b)  # (T, d_h)
    C = H.mean(axis=0) if s.on("context-mean-states") else H[-1]
    influence = _jacobian_norms(H, W_HX, W_HH)
    share = influence / influence.sum()
    return {"T": T, "input_numbers": T * d_x, "d_h": d_h, "C": C,
            "reach_of_first_word": _first_word_reach(H, W_HX, W_HH), "influence": influence,
            "share": share, "first_over_last": share[0] / share[-1]}

"""``encoder`` (§1): H_t = tanh(W_HX X_t + W_HH H_{t−1} + b), C = H_T."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips, round_half_away
from engine.rnn import rnn_encoder
from engine.traces._common import sub

TRACE = "encoder"
MISTAKES = ("tanh-left-out", "rnn-bias-forgotten", "rnn-previous-state-dropped",
            "transposed-weight", "context-mean-states", "rounded-intermediates")
PAIRS = (("tanh-left-out", "rnn-bias-forgotten"), ("tanh-left-out", "transposed-weight"),
         ("rnn-bias-forgotten", "transposed-weight"), ("tanh-left-out", "rounded-intermediates"),
         ("rnn-bias-forgotten", "rounded-intermediates"))


def compute(inp: dict, s: Slips) -> dict:
    X, W_HX, W_HH, b, H0 = inp["X"], inp["W_HX"], inp["W_HH"], inp["b"], inp["H0"]
    T = X.shape[0]
    s.fact(bias=_ops.show(b))
    slips = [s.on(k) for k in ("tanh-left-out", "rnn-bias-forgotten", "rnn-previous-state-dropped")]
    W_in = _ops.transpose_if_square(W_HX, s)
    W_rec = _ops.transpose_if_square(W_HH, s)
    out = {}
    right = not s.ids
    H = rnn_encoder(X, W_HX, W_HH, b, H0) if right else np.zeros((T, W_HX.shape[0]))  # (T, d_h)
    h = H0
    for t in range(1, T + 1):
        wx = s.r(W_in @ X[t - 1])
        wh = np.zeros_like(h) if slips[2] else s.r(W_rec @ h)
        pre = s.r(wx + wh + (0.0 if slips[1] else b))
        h = pre if slips[0] else s.r(np.tanh(pre))
        if right:
            h = H[t - 1]  # carry the engine's state, so the steps are the engine's
        else:
            H[t - 1] = h
        out.update({f"W_HX X{sub(t)}": wx, f"W_HH H{sub(t - 1)}": wh, f"pre-activation@{t}": pre,
                    f"H{sub(t)}": H[t - 1]})
    C = H.mean(axis=0) if s.on("context-mean-states") else H[-1]
    # the trace's rounding check: exact values at 2 dp, rounded H carried, everything rounded
    r = round_half_away
    ha, hb, carry, strict = r(H0), r(H0), [], []
    for t in range(T):
        ha = r(np.tanh(W_HX @ X[t] + W_HH @ ha + b))
        hb = r(np.tanh(r(r(W_HX @ X[t]) + r(W_HH @ hb) + b)))
        carry.append(ha)
        strict.append(hb)
    out.update({"C": C, "H": H, "H_exact_2dp": r(H), "H_carry_rounded": np.array(carry),
                "H_round_everything": np.array(strict)})
    return out

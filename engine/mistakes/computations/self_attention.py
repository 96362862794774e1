"""``self-attention`` (§6): softmax(Q Kᵀ / √d_k) V for every word at once."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.computations.qkv import MISTAKES as _QKV
from engine.mistakes.computations.qkv import PAIRS as _QKV_PAIRS
from engine.mistakes.slips import Slips

TRACE = "self-attention"
MISTAKES = _QKV + ("softmax-wrong-axis", "scores-transposed")
PAIRS = _QKV_PAIRS + (("no-scale", "softmax-wrong-axis"), ("no-scale", "scores-transposed"),
                      ("softmax-wrong-axis", "rounded-intermediates"))


def compute(inp: dict, s: Slips) -> dict:
    X, W_Q, W_K, W_V = inp["X"], inp["W_Q"], inp["W_K"], inp["W_V"]
    Q = X @ _ops.transpose_if_square(W_Q, s)  # (n, d_k)
    K = X @ _ops.transpose_if_square(W_K, s)  # (n, d_k)
    V = X @ W_V  # (n, d_v)
    root = _ops.scale(W_Q.shape[1], s, d_model=X.shape[1])
    S = s.r(Q @ K.T / root)  # (n, n)
    if s.on("scores-transposed"):
        S = S.T
    A = _ops.weights(S, s)
    with np.errstate(all="ignore"):
        s.fact(terms=_ops.sum_terms(np.exp(S[0])))
    source = V
    if s.on("weights-times-keys") and K.shape[1] == V.shape[1]:
        source = K
    elif s.on("values-not-projected") and X.shape[1] == V.shape[1]:
        source = X
    return {"Q": Q, "K": K, "V": V, "S": S, "A": A, "Z": s.r(A @ source)}

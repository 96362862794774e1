"""``attention-backward`` (§5, §12): backpropagation through scaled dot-product attention,
one query row in full, then every row, then into W_Q, W_K, W_V."""

from __future__ import annotations

import numpy as np

from engine.attention_backward import attention_backward
from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces.attention_backward import FD_EPS, _loss

TRACE = "attention-backward"
MISTAKES = ("softmax-grad-diagonal", "backward-no-scale", "grad-transpose-missing",
            "grad-sign-flipped", "no-scale", "scale-by-dk")
PAIRS = (("softmax-grad-diagonal", "backward-no-scale"), ("no-scale", "softmax-grad-diagonal"),
         ("grad-transpose-missing", "softmax-grad-diagonal"))


def compute(inp: dict, s: Slips) -> dict:
    X, W_Q, W_K, W_V, dO, position = (inp[k] for k in ("X", "W_Q", "W_K", "W_V", "dO", "position"))
    m, d_k = X.shape[0], W_Q.shape[1]
    if position > m:
        raise ValueError(f"input position: got {position}, expected a whole number from 1 to {m}")
    i = position - 1
    root = _ops.scale(d_k, s)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / root
    A = _ops.weights(S, Slips())
    O = A @ V
    transpose, diagonal, flip, unscaled = (s.on(k) for k in (
        "grad-transpose-missing", "softmax-grad-diagonal", "grad-sign-flipped", "backward-no-scale"))
    if s.ids:
        dV = A @ dO if transpose else A.T @ dO
        dA = dO @ V.T
        if diagonal:
            dS = A * (1 - A) * dA
        else:
            dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))
        if flip:
            dS, dV = -dS, -dV
        back = 1.0 if unscaled else root
        dQ, dK = dS @ K / back, dS.T @ Q / back
    else:
        g = attention_backward(Q, K, V, None, dO)
        dV, dA, dQ, dK = g.dV, g.d_weights, g.dQ, g.dK
        dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))
    dWQ, dWK, dWV = X.T @ dQ, X.T @ dK, X.T @ dV
    r_, c_ = np.unravel_index(int(np.argmax(np.abs(dWQ))), dWQ.shape)
    up, down = W_Q.copy(), W_Q.copy()
    up[r_, c_] += FD_EPS
    down[r_, c_] -= FD_EPS
    fd = (_loss(X, up, W_K, W_V, dO) - _loss(X, down, W_K, W_V, dO)) / (2 * FD_EPS)
    P = position
    return {"Q": Q, "K": K, "V": V, "scores": S, "alpha": A, "O": O,
            f"d_alpha_{P}": dA[i], f"d_scores_{P}": dS[i], f"dQ_{P}": dQ[i],
            "dV": dV, "d_alpha": dA, "d_scores": dS, "dQ": dQ, "dK": dK,
            "dW_Q": dWQ, "dW_K": dWK, "dW_V": dWV, "dX": dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T,
            "analytic": float(dWQ[r_, c_]), "finite_difference": float(fd)}

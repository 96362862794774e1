"""``additive-backward`` (§8, §12): backpropagation through additive (Bahdanau) scoring,
and the same query and keys through scaled dot-product scoring."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips

TRACE = "additive-backward"
MISTAKES = ("tanh-left-out", "tanh-derivative-wrong", "softmax-grad-diagonal", "transposed-weight",
            "grad-sign-flipped", "backward-no-scale", "no-scale")
PAIRS = (("tanh-derivative-wrong", "softmax-grad-diagonal"),)


def compute(inp: dict, s: Slips) -> dict:
    query, K, V, W_q, W_k, v, dO = (inp[k] for k in ("query", "K", "V", "W_q", "W_k", "v", "dO"))
    Wq = _ops.transpose_if_square(W_q, s)
    Wk = _ops.transpose_if_square(W_k, s)
    a = Wq @ query  # (h,)
    B = K @ Wk.T  # (n, h)
    pre = a[None, :] + B
    no_tanh = s.on("tanh-left-out")
    Tt = pre if no_tanh else np.tanh(pre)  # (n, h)
    e = Tt @ v  # (n,)
    alpha = _ops.weights(e, Slips())
    out = alpha @ V
    da = V @ dO  # (n,)
    diagonal = s.on("softmax-grad-diagonal")
    de = alpha * (1 - alpha) * da if diagonal else alpha * (da - float(alpha @ da))
    flip = -1.0 if s.on("grad-sign-flipped") else 1.0
    de = flip * de
    dv = Tt.T @ de
    if no_tanh:
        slope = np.ones_like(pre)
    elif s.on("tanh-derivative-wrong"):
        slope = 1 - pre ** 2
    else:
        slope = 1 - Tt ** 2
    G = de[:, None] * v[None, :] * slope  # (n, h)
    ga = G.sum(axis=0)
    result = {"t": Tt, "scores": e, "alpha": alpha, "output": out, "d_alpha": da, "d_scores": de,
              "dv": dv, "g": G, "tanh_slope": slope, "dW_q": np.outer(ga, query), "dq": Wq.T @ ga,
              "dW_k": G.T @ K, "dK": G @ Wk}
    if query.size == K.shape[1]:
        d_k = K.shape[1]
        root = _ops.scale(d_k, s)
        sc = K @ query / root
        ad = _ops.weights(sc, Slips())
        ds = ad * (1 - ad) * da if diagonal else ad * (da - ad @ da)
        ds = flip * ds
        back = 1.0 if s.on("backward-no-scale") else root
        result.update({"dq_dot": ds @ K / back, "dK_dot": np.outer(ds, query) / back})
    else:
        s.fact(d_k=K.shape[1], sqrt_dk=_ops.show(math.sqrt(K.shape[1])))
    return result

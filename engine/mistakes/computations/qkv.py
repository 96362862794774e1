"""``qkv`` (§5): Q₂, K, V, scaled scores, softmax and output for one asking word."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_scores
from engine.traces._common import exp_shift, sub

TRACE = "qkv"
MISTAKES = ("no-scale", "scale-by-dk", "scale-by-dmodel", "rounded-intermediates", "no-exp",
            "no-normalise", "softmax-term-dropped", "zero-score-zero-weight", "weights-times-keys",
            "values-not-projected", "transposed-weight")
EXTRAS = ("exp_scores", "Z")
"""Intermediates the trace writes out (e^score, Σ) without listing them as values."""
PAIRS = (("no-scale", "rounded-intermediates"), ("scale-by-dk", "rounded-intermediates"),
         ("no-scale", "no-exp"), ("no-scale", "no-normalise"), ("no-scale", "softmax-term-dropped"),
         ("softmax-term-dropped", "rounded-intermediates"), ("no-exp", "rounded-intermediates"),
         ("no-scale", "weights-times-keys"), ("no-scale", "zero-score-zero-weight"))


def attend(X, W_Q, W_K, W_V, rows, s: Slips) -> dict:
    """Q, K, V, scaled scores S (rows asked × n), weights, output: the §5 pipeline."""
    Q = X @ _ops.transpose_if_square(W_Q, s)  # (n, d_k)
    K = X @ _ops.transpose_if_square(W_K, s)  # (n, d_k)
    V = X @ W_V  # (n, d_v)
    root = _ops.scale(W_Q.shape[1], s, d_model=X.shape[1])
    S = s.r(dot_scores(Q[rows], K) / root)  # (rows, n)
    A = _ops.weights(S, s)
    with np.errstate(all="ignore"):
        s.fact(terms=_ops.sum_terms(np.exp(S[0])))
    source = V
    if s.on("weights-times-keys") and K.shape[1] == V.shape[1]:
        source = K
    elif s.on("values-not-projected") and X.shape[1] == V.shape[1]:
        source = X
    return {"Q": Q, "K": K, "V": V, "S": S, "A": A, "Z": s.r(A @ source)}


def compute(inp: dict, s: Slips) -> dict:
    X, W_Q, W_K, W_V = inp["X"], inp["W_Q"], inp["W_K"], inp["W_V"]
    i = inp["position"] - 1
    if i >= X.shape[0]:
        raise ValueError(f"input position: got {inp['position']}, expected a whole number "
                         f"from 1 to {X.shape[0]}")
    out = attend(X, W_Q, W_K, W_V, [i], s)
    q = out["Q"][i]
    scores = out["S"][0]
    exps = s.r(np.exp(scores - exp_shift(scores)))
    return {
        "exp_scores": exps,
        "Z": s.r(float(np.sum(exps))),
        "W_Q": W_Q,
        "W_K": W_K,
        "W_V": W_V,
        f"Q{sub(i + 1)}": q,
        "query": q,
        "K": out["K"],
        "V": out["V"],
        "scores": out["S"][0],
        "weights": out["A"][0],
        "output": out["Z"][0],
    }

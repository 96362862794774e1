"""``dynamic-context`` (§4): C_t = Σ_i α_ti H_i, one blend of the encoder states per word."""

from __future__ import annotations

import numpy as np

from engine.mistakes.slips import Slips
from engine.rnn import rnn_encoder
from engine.softmax import softmax
from engine.traces._common import Draw, sub

TRACE = "dynamic-context"
MISTAKES = ("context-last-state", "context-mean-states", "weights-read-by-column",
            "bahdanau-current-state", "rounded-intermediates")
PAIRS = (("weights-read-by-column", "rounded-intermediates"),
         ("bahdanau-current-state", "rounded-intermediates"))


def compute(inp: dict, s: Slips) -> dict:
    source, target, weights = inp["source"], inp["target"], inp["weights"]
    T = len(source)
    sums = weights.sum(axis=1)
    bad = [i for i in range(len(target)) if abs(sums[i] - 1.0) > 1e-6]
    if bad:
        raise ValueError(f"input weights: row {bad[0] + 1} sums to {sums[bad[0]]:g}, expected "
                         "attention weights summing to 1 per row")
    out = {}
    H = inp.get("H")
    if H is None:
        d_h = inp["d_h"]
        X = Draw(inp["seed"])(T, d_h + 1)
        H = rnn_encoder(X, np.eye(d_h, d_h + 1), 0.5 * np.eye(d_h), np.zeros(d_h))
        out["X"] = X
    used = weights
    if s.on("weights-read-by-column") and weights.shape[0] == weights.shape[1]:
        used = weights.T
    elif s.on("bahdanau-current-state"):  # word t weighted with the row made from s_t
        used = np.vstack([weights[1:], weights[-1:]])
    contexts = np.array([s.r(s.r(used[t][:, None] * H).sum(axis=0)) for t in range(len(target))])
    if s.on("context-last-state"):
        contexts = np.repeat(H[-1][None, :], len(target), axis=0)
    elif s.on("context-mean-states"):
        contexts = np.repeat(H.mean(axis=0)[None, :], len(target), axis=0)
    with np.errstate(divide="ignore"):
        scores = np.log(weights)
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    out.update({"H": H, "row_sums": sums, "contexts": contexts, "weights": softmax(shifted, axis=1),
                "scores": shifted})
    for t in range(len(target)):
        out[f"C{sub(t + 1)}"] = contexts[t]
    return out

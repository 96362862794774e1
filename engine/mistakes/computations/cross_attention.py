"""``cross-attention`` (§7): decoder queries against the encoded passage's keys; values are
the seeded encoder states."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.rnn import rnn_encoder
from engine.scoring import dot_scores
from engine.traces._common import Draw

TRACE = "cross-attention"
MISTAKES = ("no-scale", "scale-by-dk", "rounded-intermediates", "no-exp", "no-normalise",
            "zero-score-zero-weight", "softmax-term-dropped", "bahdanau-current-state")
PAIRS = (("no-scale", "rounded-intermediates"), ("no-scale", "zero-score-zero-weight"),
         ("no-scale", "softmax-term-dropped"), ("zero-score-zero-weight", "rounded-intermediates"),
         ("no-scale", "bahdanau-current-state"))


def compute(inp: dict, s: Slips) -> dict:
    tokens, K, queries, d_h, seed = inp["tokens"], inp["K"], inp["queries"], inp["d_h"], inp["seed"]
    m, d_k = K.shape
    X = Draw(seed)(m, d_h + 1)
    H = rnn_encoder(X, np.eye(d_h, d_h + 1), 0.5 * np.eye(d_h), np.zeros(d_h))  # (n, d_h)
    asked = queries
    if s.on("bahdanau-current-state"):  # step t asks with the query of the state after it
        asked = np.vstack([queries[1:], queries[-1:]])
    S = s.r(dot_scores(asked, K) / _ops.scale(d_k, s))  # (steps, n)
    A = _ops.weights(S, s)
    with np.errstate(all="ignore"):
        s.fact(terms=_ops.sum_terms(np.exp(S[0])))
    C = s.r(A @ H)  # (steps, d_h)
    out = {"n": m, "K": K, "V": H, "weights": A, "contexts": C}
    for t in range(len(inp["answer"])):
        out.update({f"scores_{t + 1}": S[t], f"weights_{t + 1}": A[t], f"C_{t + 1}": C[t]})
    if "1947" in tokens:
        k = tokens.index("1947")
        out["gap"] = float(np.linalg.norm(C[0] - A[0, k] * H[k]))
    return out

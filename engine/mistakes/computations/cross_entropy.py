"""``cross-entropy`` (§12): per-step losses, their sum, and the gradient P − onehot(y)."""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy_grad
from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import word_index

TRACE = "cross-entropy"
MISTAKES = ("ce-log10", "ce-log2", "ce-mean-not-sum", "loss-against-prediction", "ce-grad-wrt-prob",
            "ce-grad-onehot-forgotten", "grad-sign-flipped", "rounded-intermediates")
PAIRS = (("ce-log10", "ce-mean-not-sum"), ("ce-log2", "ce-mean-not-sum"),
         ("loss-against-prediction", "ce-mean-not-sum"), ("rounded-intermediates", "ce-log10"))


def compute(inp: dict, s: Slips) -> dict:
    vocab, probs, targets = inp["vocab"], inp["probs"], inp["targets"]
    T, V = probs.shape
    sums = probs.sum(axis=1)
    for t in range(T):
        if abs(sums[t] - 1) > 1e-6 or probs[t].min() <= 0:
            raise ValueError(f"input probs: row {t + 1} sums to {sums[t]:g} with smallest entry "
                             f"{probs[t].min():g}, expected positive probabilities summing to 1")
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    logits = np.log(probs)  # (T, V)
    losses = _ops.nll_rows(probs, ids, s)
    if s.on("ce-grad-wrt-prob"):
        grad = np.zeros((T, V))
        grad[np.arange(T), ids] = -1.0 / probs[np.arange(T), ids]
    elif s.on("ce-grad-onehot-forgotten"):
        grad = probs.copy()
    else:
        grad = cross_entropy_grad(logits, ids, reduction="sum")
    if s.on("grad-sign-flipped"):
        grad = -grad
    out = {"probs": probs, "logits": logits, "losses": losses, "L": _ops.total(losses, s),
           "grad": grad, "L_trained": float(-T * _ops.log(0.99, s))}
    for t in range(T):
        out[f"L_{t + 1}"] = float(losses[t])
    return out

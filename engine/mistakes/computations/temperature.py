"""``temperature`` (§10): softmax(z / T) at several temperatures."""

from __future__ import annotations

import numpy as np

from engine.decoding import apply_temperature
from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.softmax import softmax
from engine.traces._common import n

TRACE = "temperature"
MISTAKES = ("temperature-multiplied", "temperature-on-probs", "entropy-nats", "no-exp",
            "rounded-intermediates")
PAIRS = (("temperature-multiplied", "rounded-intermediates"),)


def compute(inp: dict, s: Slips) -> dict:
    logits, temperatures = inp["logits"], inp["temperatures"]
    out = {"logits": logits}
    table = np.zeros((temperatures.size, logits.size))
    for r, T in enumerate(temperatures):
        if s.on("temperature-on-probs"):
            P = softmax(logits)  # p / T renormalised is p again
        elif s.on("temperature-multiplied"):
            P = _ops.weights(s.r(logits * T), s)
        else:
            P = _ops.weights(s.r(apply_temperature(logits, T)), s)
        table[r] = P
        log = np.log if s.on("entropy-nats") else np.log2
        nz = P[P > 0]
        out[f"P_T={n(T)}"] = P
        out[f"entropy_bits@{r + 2}"] = float(-(nz * log(nz)).sum())
    out["probs"] = table
    return out

"""``pooling`` (§9): max, mean and attention pooling of one row of readings."""

from __future__ import annotations

import numpy as np

from engine.mistakes.slips import Slips
from engine.pooling import attention_pool, max_pool, mean_pool
from engine.softmax import softmax

TRACE = "pooling"
MISTAKES = ("pool-divides-by-n", "share-is-weight")
PAIRS = ()


def compute(inp: dict, s: Slips) -> dict:
    values, weights = inp["values"], inp["weights"]
    if abs(weights.sum() - 1.0) > 1e-6:
        raise ValueError(f"input weights: they sum to {weights.sum():g}, expected attention "
                         "weights summing to 1")
    m = values.size
    s.fact(n=m)
    terms = s.r(weights * values)
    att = float(attention_pool(values, weights)) if not s.ids else float(np.sum(terms))
    if s.on("pool-divides-by-n"):
        att = att / m
    share = weights.copy() if s.on("share-is-weight") else (terms / att if att else np.zeros(m))
    with np.errstate(divide="ignore"):
        scores = np.log(weights) - np.log(weights).max()
    return {"max": float(max_pool(values)), "mean": float(mean_pool(values)), "attention": att,
            "terms": terms, "share": share, "scores": scores, "weights": softmax(scores)}

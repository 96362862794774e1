"""``scores`` (§6): one query against the keys: dots, scaled scores, exponentials, weights."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_scores
from engine.traces._common import exp_shift

TRACE = "scores"
MISTAKES = ("no-scale", "scale-by-dk", "rounded-intermediates", "no-exp", "no-normalise",
            "weights-times-keys")
PAIRS = (("no-scale", "rounded-intermediates"), ("scale-by-dk", "rounded-intermediates"),
         ("no-scale", "no-exp"), ("no-scale", "no-normalise"), ("no-exp", "rounded-intermediates"),
         ("no-scale", "weights-times-keys"), ("rounded-intermediates", "weights-times-keys"))


def compute(inp: dict, s: Slips) -> dict:
    Q, K = inp["Q"], inp["K"]
    V = K.copy() if inp["V"] is None else inp["V"]
    d_k = Q.shape[0]
    dots = dot_scores(Q, K)  # (n,)
    root = _ops.scale(d_k, s)
    scores = s.r(dots / root)
    with np.errstate(all="ignore"):
        exps = s.r(np.exp(scores - exp_shift(scores)))  # the trace shifts only huge scores
        s.fact(terms=_ops.sum_terms(exps))
    weights = _ops.weights(scores, s)
    if s.on("no-exp"):
        exps = scores
    source = K if s.on("weights-times-keys") and K.shape[1] == V.shape[1] else V
    return {"d_k": d_k, "sqrt_d_k": math.sqrt(d_k), "dots": dots, "scores": scores,
            "exp_scores": exps, "Z": s.r(float(np.sum(exps))), "weights": weights,
            "context": s.r(weights @ source)}

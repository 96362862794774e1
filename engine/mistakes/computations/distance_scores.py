"""``distance-scores`` (§8): squared distances, −scale·‖q − k‖² scores, their softmax, the same
weights without ‖q‖², dot-product weights at the same scale, and the context."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_scores

TRACE = "distance-scores"
MISTAKES = ("distance-not-squared", "distance-sign-dropped", "rounded-intermediates", "no-exp",
            "no-normalise")
PAIRS = (("distance-not-squared", "rounded-intermediates"),
         ("distance-sign-dropped", "rounded-intermediates"), ("no-exp", "rounded-intermediates"),
         ("distance-not-squared", "distance-sign-dropped"))


def compute(inp: dict, s: Slips) -> dict:
    Q, K, scale = inp["Q"], inp["K"], inp["scale"]
    V = K.copy() if inp["V"] is None else inp["V"]
    diffs = Q[None, :] - K  # (n, d)
    sq = s.r((diffs * diffs).sum(axis=1))  # (n,) ‖q − k_j‖²
    s.fact(sq_first=_ops.show(sq[0]), dist_first=_ops.show(math.sqrt(sq[0])))
    spread = np.sqrt(sq) if s.on("distance-not-squared") else sq
    sign = 1.0 if s.on("distance-sign-dropped") else -1.0
    scores = s.r(sign * scale * spread)  # (n,)
    weights = _ops.weights(scores, s)
    dots = dot_scores(Q, K)  # (n,)
    k_sq = (K * K).sum(axis=1)  # (n,)
    without_q = _ops.weights(s.r(scale * (2 * dots - k_sq)), s)
    dot_weights = _ops.weights(s.r(scale * 2 * dots), s)
    return {"sq_distances": sq, "scores": scores, "dots": dots, "key_sq_norms": k_sq,
            "query_sq_norm": float(Q @ Q), "weights": weights,
            "weights_without_q_norm": without_q, "dot_weights": dot_weights,
            "context": s.r(weights @ V)}

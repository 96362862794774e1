"""``softmax-jacobian`` (§8, §12): ∂α/∂s = diag(α) − ααᵀ, a gradient through it, and
saturation without the 1/√d_k."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_scores
from engine.softmax_backward import softmax_backward, softmax_jacobian
from engine.traces._common import Draw

TRACE = "softmax-jacobian"
MISTAKES = ("softmax-grad-diagonal", "grad-sign-flipped", "no-scale", "scale-by-dk",
            "zero-score-zero-weight", "rounded-intermediates")
PAIRS = (("softmax-grad-diagonal", "no-scale"), ("softmax-grad-diagonal", "rounded-intermediates"),
         ("grad-sign-flipped", "no-scale"))


def jacobian(alpha: np.ndarray, s: Slips) -> np.ndarray:
    """diag(α) − ααᵀ, or only its diagonal α(1 − α) under ``softmax-grad-diagonal``."""
    if s.on("softmax-grad-diagonal"):
        return np.diag(alpha * (1 - alpha))
    if s.ids:
        return s.r(np.diag(alpha) - np.outer(alpha, alpha))
    return softmax_jacobian(np.log(alpha)) if np.all(alpha > 0) else np.diag(alpha) - np.outer(alpha, alpha)


def compute(inp: dict, s: Slips) -> dict:
    query, K, grad, d_k_big, seed = (inp[k] for k in ("query", "K", "grad", "d_k_big", "seed"))
    m, d_k = K.shape
    scores = s.r(dot_scores(query, K) / _ops.scale(d_k, s))  # (n,)
    alpha = _ops.weights(scores, s)
    J = jacobian(alpha, s)
    if s.on("grad-sign-flipped"):
        J = -J
    d_scores = J.T @ grad if s.ids else softmax_backward(alpha, grad)
    draw = Draw(seed)
    q_big = draw(d_k_big, scale=1.0)
    K_big = draw(m, d_k_big, scale=1.0)
    raw = K_big @ q_big
    quiet = Slips()  # the saturation demo is the trace's own experiment, not the student's work
    a_raw = _ops.weights(raw, quiet)
    a_scaled = _ops.weights(raw / math.sqrt(d_k_big), quiet)
    return {"scores": scores, "alpha": alpha, "J": J, "row_sums": J.sum(axis=1),
            "d_scores": d_scores, "alpha_unscaled": a_raw, "alpha_scaled": a_scaled,
            "norm_unscaled": float(np.linalg.norm(np.diag(a_raw) - np.outer(a_raw, a_raw))),
            "norm_scaled": float(np.linalg.norm(np.diag(a_scaled) - np.outer(a_scaled, a_scaled)))}
